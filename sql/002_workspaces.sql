-- Workspaces (issue 3): tenant settings, invitations, the audit chain, rate-limit buckets and
-- break-glass requests. Every workspace table carries tenant_id first in its keys.

-- Tenant settings: one full-replace document per workspace; absent row = every field cleared.
create table tenant_settings (
  tenant_id uuid primary key references tenants (id),
  embed_allowed_origins text[] not null default '{}',
  time_zone text,
  notification_retention_days integer check (notification_retention_days between 1 and 3650),
  break_glass_require_tenant_approval boolean not null default false,
  updated_at timestamptz not null default now()
);

-- Days a notification delivery record is kept in a workspace (the setting, or the default of 30).
-- Purging delivery records calls this so every process applies the same rule.
create function svc_notification_retention_days(p_tenant uuid) returns integer
language sql stable as $$
  select coalesce((select notification_retention_days from tenant_settings where tenant_id = p_tenant), 30)
$$;

-- Invitations: the acceptance token is stored only as its SHA-256; one pending row per address.
create table invitations (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  email text not null,
  role text not null check (role in ('admin', 'reviewer', 'underwriter', 'viewer')),
  status text not null default 'pending' check (status in ('pending', 'accepted', 'revoked', 'expired')),
  token_hash bytea not null,
  expires_at timestamptz not null,
  invited_by jsonb not null,
  -- The invitation email: mailed_at once sent; mail_claimed_at while a sender holds the send.
  mailed_at timestamptz,
  mail_claimed_at timestamptz,
  accepted_at timestamptz,
  accepted_user_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create unique index invitations_pending on invitations (tenant_id, lower(email)) where status = 'pending';
-- A token is presented without its workspace, so its hash is looked up globally.
create unique index invitations_token on invitations (token_hash);

-- The audit chain: append-only, per-workspace sequence, each entry hashing the previous one.
create table audit_events (
  tenant_id uuid not null references tenants (id),
  seq bigint not null check (seq >= 1),
  id uuid not null,
  kind text not null,
  actor jsonb not null,
  data jsonb not null,
  occurred_at timestamptz not null,
  prev_hash text,
  hash text not null,
  primary key (tenant_id, seq)
);
create unique index audit_events_id on audit_events (tenant_id, id);

create function audit_events_append_only() returns trigger
language plpgsql as $$
begin
  raise exception 'audit_events is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
end
$$;
create trigger audit_events_no_update before update or delete on audit_events
  for each row execute function audit_events_append_only();
create trigger audit_events_no_truncate before truncate on audit_events
  for each statement execute function audit_events_append_only();

-- Rate limits: one token bucket per workspace and class, shared by every API process.
create table rate_buckets (
  tenant_id uuid not null references tenants (id),
  class text not null,
  tokens double precision not null,
  refilled_at timestamptz not null,
  allowed boolean not null,
  primary key (tenant_id, class)
);

-- Break-glass: an operator's request for access to a workspace, decided by its admins when the
-- workspace requires it. Poll-only: no notification is sent.
create table break_glass_requests (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  operator_sub text not null,
  reason text not null,
  duration_minutes integer not null check (duration_minutes between 1 and 1440),
  approval_required boolean not null,
  status text not null check (status in ('requested', 'approved', 'denied')),
  decided_by_user_id uuid,
  decided_at timestamptz,
  decision_note text,
  access_expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index break_glass_requests_status on break_glass_requests (tenant_id, status, id);
