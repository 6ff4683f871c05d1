-- Development webhook listeners (`svc listen`): while one is live (its command refreshes expires_at),
-- deliveries of its workspace to exactly its loopback URL are exempt from the private-address refusal
-- and trust exactly its self-signed certificate. Nothing else is exempt, and nothing is by default.
create table dev_listeners (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  url text not null,
  certificate_pem text not null,
  task_kind text,
  task_id uuid,
  since timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (tenant_id, id)
);
