-- Foundation: workspaces, members, API keys, scenarios and idempotency records.
-- Every workspace table carries tenant_id first in its keys, so it can be distributed by tenant.

create table tenants (
  id uuid primary key,
  slug text not null unique check (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'),
  name text not null,
  organization_id text,
  status text not null default 'active' check (status in ('active', 'suspended')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table users (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  email text not null,
  sub text,
  role text not null check (role in ('admin', 'reviewer', 'underwriter', 'viewer')),
  status text not null default 'active' check (status in ('active', 'deactivated')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create unique index users_email on users (tenant_id, lower(email));
-- A subject is bound to one workspace membership (the operating contract).
create unique index users_sub on users (sub) where sub is not null;

create table api_keys (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  name text not null,
  key_hash bytea not null,
  key_prefix text not null,
  environment text not null check (environment in ('live', 'test')),
  scopes text[] not null,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
-- A key is presented without its workspace, so its hash is looked up globally.
create unique index api_keys_hash on api_keys (key_hash);

create table scenarios (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  name text not null,
  external_ref text,
  vertical text,
  status text not null default 'created',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);

create table idempotency_keys (
  tenant_id uuid not null references tenants (id),
  route text not null,
  key text not null,
  fingerprint text not null,
  response_status integer not null,
  response_body jsonb not null,
  response_location text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  primary key (tenant_id, route, key)
);
create index idempotency_keys_expiry on idempotency_keys (expires_at);
