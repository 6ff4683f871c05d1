-- Jobs and task notifications (issue 4): the job queue, webhook signing secrets, task-notification
-- subscriptions, deliveries (transactional outbox) and their attempt history.

-- The job queue. Claimed with SELECT ... FOR UPDATE SKIP LOCKED; locked_by/locked_until is the lease
-- of the worker running it. A queue is cross-workspace by nature, so its key is the job id alone
-- (tenant_id is carried for the handlers and for distribution as a reference table).
create table jobs (
  id uuid primary key,
  kind text not null,
  tenant_id uuid,
  payload jsonb not null default '{}'::jsonb,
  run_at timestamptz not null default now(),
  attempts integer not null default 0,
  locked_by text,
  locked_until timestamptz,
  last_error text,
  dead_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Only run_at is indexed: a claim, a heartbeat and a release change no indexed column, so they are
-- cheap heap-only updates (the queue holds due and scheduled jobs only, so scans by locked_by are short).
create index jobs_due on jobs (run_at) where dead_at is null;

-- One active signing secret per workspace; rotated-out ones stay usable until revoke_at, after which
-- the ciphertext is destroyed and only secret_last4 remains. The value is AES-256-GCM encrypted with
-- a key derived from SVC_SECRET_KEY.
create table webhook_signing_secrets (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  secret_ciphertext bytea,
  secret_last4 text not null,
  created_at timestamptz not null default now(),
  rotated_out_at timestamptz,
  revoke_at timestamptz,
  destroyed_at timestamptz,
  primary key (tenant_id, id)
);
create unique index webhook_signing_secrets_active on webhook_signing_secrets (tenant_id) where rotated_out_at is null;

create table task_notification_subscriptions (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  task_kind text not null,
  task_id uuid not null,
  channel text not null check (channel in ('email', 'webhook')),
  email_address text,
  webhook_url text,
  status text not null default 'active' check (status in ('active')),
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  check ((channel = 'email') = (email_address is not null)),
  check ((channel = 'webhook') = (webhook_url is not null))
);
create index task_notification_subscriptions_task on task_notification_subscriptions (tenant_id, task_kind, task_id);

-- One logical delivery of one rendered envelope to one subscription. `body` is the envelope exactly
-- as sent (text, never re-serialised). attempts is cumulative; cycle_attempts counts the current
-- retry cycle (8 at most); a redeliver starts a new cycle and drops the pinned secret.
create table notification_deliveries (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  subscription_id uuid not null,
  task_kind text not null,
  task_id uuid not null,
  event_type text not null,
  channel text not null check (channel in ('email', 'webhook')),
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'dead_lettered')),
  attempts integer not null default 0,
  cycle integer not null default 1,
  cycle_attempts integer not null default 0,
  pinned_secret_id uuid,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  dead_lettered_at timestamptz,
  dead_letter_reason text,
  occurred_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, subscription_id) references task_notification_subscriptions (tenant_id, id)
);
create index notification_deliveries_subscription on notification_deliveries (tenant_id, subscription_id, id);
create index notification_deliveries_finished on notification_deliveries (updated_at) where status <> 'pending';

-- The history of a delivery: one row per send (counted) or refusal (not counted).
create table notification_delivery_attempts (
  tenant_id uuid not null,
  delivery_id uuid not null,
  id uuid not null,
  cycle integer not null,
  counted boolean not null,
  attempted_at timestamptz not null,
  duration_ms integer not null,
  response_status integer,
  error text,
  primary key (tenant_id, delivery_id, id),
  foreign key (tenant_id, delivery_id) references notification_deliveries (tenant_id, id) on delete cascade
);

-- Recurring jobs (maintenance) exist once: a job whose payload names a singleton key is unique by it.
create unique index jobs_singleton on jobs ((payload ->> 'singleton')) where payload ? 'singleton';
