-- Documents (issue 5): uploaded files of a case, their blocks, and the per-case event log.
-- tenant_id leads every key so the schema can be distributed by tenant.

create table documents (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  scenario_id uuid not null,
  filename text not null,
  content_type text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  checksum_sha256 text check (checksum_sha256 ~ '^[0-9a-f]{64}$'),
  status text not null default 'awaiting_upload'
    check (status in ('awaiting_upload', 'processing', 'ready', 'ready_degraded', 'failed', 'unsupported_pending')),
  -- Where the bytes are: set up front for S3 (the presigned key), by the upload route for local.
  blob_key text,
  -- True once the stored bytes were checked against size, checksum and sniffed type.
  bytes_verified boolean not null default false,
  -- Bumped by every complete/reingest; a job of an older generation does nothing.
  ingestion_generation integer not null default 0,
  page_count integer,
  block_count integer,
  error_code text check (error_code in ('document_ingestion_failed', 'unsupported_pending')),
  error_detail text,
  uploaded_at timestamptz,
  processed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, scenario_id) references scenarios (tenant_id, id)
);
create index documents_by_case on documents (tenant_id, scenario_id, id desc);

create table document_blocks (
  tenant_id uuid not null,
  document_id uuid not null,
  position integer not null check (position >= 0),
  id uuid not null,
  page integer not null check (page >= 1),
  kind text not null check (kind in ('paragraph', 'heading', 'table_row', 'page_text')),
  text text not null,
  char_start integer not null,
  char_end integer not null,
  primary key (tenant_id, document_id, position),
  foreign key (tenant_id, document_id) references documents (tenant_id, id) on delete cascade
);
create unique index document_blocks_id on document_blocks (tenant_id, id);

-- The per-case event log. seq is the case's own sequence (the SSE id), handed out by the counter
-- row below: its row lock is held until commit, so a case's events commit in seq order.
create table case_event_counters (
  tenant_id uuid not null,
  scenario_id uuid not null,
  last_seq bigint not null,
  primary key (tenant_id, scenario_id),
  foreign key (tenant_id, scenario_id) references scenarios (tenant_id, id)
);

create table case_events (
  tenant_id uuid not null,
  scenario_id uuid not null,
  seq bigint not null,
  type text not null,
  data jsonb not null,
  -- Global insertion order: the embedded database's in-process bus tails it (one session there,
  -- so insertion order is commit order); PostgreSQL deployments use LISTEN/NOTIFY instead.
  gid bigint generated always as identity,
  created_at timestamptz not null default now(),
  primary key (tenant_id, scenario_id, seq),
  foreign key (tenant_id, scenario_id) references scenarios (tenant_id, id)
);
create index case_events_gid on case_events (gid);
