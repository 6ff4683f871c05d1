-- Billing (issue 17): the usage ledger, billing contracts, reconciliations and their findings, and
-- the workspace evaluation policy of the operator surface. tenant_id leads every key.

-- The usage ledger: append-only, one event per (meter, source). An event is written in the same
-- transaction as the state change that causes it (an evaluation succeeding, a document's pages
-- read, ...); the unique index makes a retried job's second write a no-op, so nothing counts twice.
-- source_ref tells apart the events of one source that are not retries of each other (a generation
-- run's metered steps, a document's reingest generations); '' when the source has one event.
create table usage_events (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  meter text not null check (meter in (
    'evaluations_succeeded', 'pages_text_layer', 'pages_ocr', 'reports_generated',
    'generation_runs', 'diff_runs', 'model_cost_micro')),
  quantity bigint not null check (quantity > 0),
  occurred_at timestamptz not null,
  source_kind text not null,
  source_id uuid not null,
  source_ref text not null default '',
  recorded_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create unique index usage_events_source on usage_events (tenant_id, meter, source_kind, source_id, source_ref);
create index usage_events_by_time on usage_events (tenant_id, occurred_at);

create function usage_events_append_only() returns trigger
language plpgsql as $$
begin
  raise exception 'usage_events is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
end
$$;
create trigger usage_events_no_update before update or delete on usage_events
  for each row execute function usage_events_append_only();
create trigger usage_events_no_truncate before truncate on usage_events
  for each statement execute function usage_events_append_only();

-- Backfill from the rows that already record the work (the same sources the code writes).
insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'evaluations_succeeded', 1, coalesce(finished_at, updated_at), 'evaluation_run', id, ''
from evaluations where status = 'succeeded'
on conflict do nothing;

insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'pages_text_layer', (page_summary->>'text_layer')::bigint, coalesce(processed_at, updated_at),
       'document_ingestion', id, 'generation:' || ingestion_generation
from documents
where status in ('ready', 'ready_degraded') and page_summary is not null and (page_summary->>'text_layer')::bigint > 0
on conflict do nothing;

insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'pages_ocr', (page_summary->>'ocr')::bigint, coalesce(processed_at, updated_at),
       'document_ingestion', id, 'generation:' || ingestion_generation
from documents
where status in ('ready', 'ready_degraded') and page_summary is not null and (page_summary->>'ocr')::bigint > 0
on conflict do nothing;

insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'reports_generated', 1, coalesce(completed_at, updated_at), 'report_generated', id, ''
from reports where status = 'succeeded'
on conflict do nothing;

insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'generation_runs', 1, coalesce(finished_at, updated_at), 'generation_run', id, ''
from generation_runs where status = 'succeeded'
on conflict do nothing;

insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'diff_runs', 1, coalesce(finished_at, updated_at), 'diff_run', id, ''
from diff_runs where status = 'succeeded'
on conflict do nothing;

insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
select tenant_id, gen_random_uuid(), 'model_cost_micro', cost_micro, created_at, run_kind, run_id,
       case when step is null then 'usage:' || id else 'step:' || step end
from model_usage where cost_micro > 0
on conflict do nothing;

-- Billing contracts: one workspace's prices for a run of monthly periods. effective_from is the
-- first day of the first period billed, effective_until the first day of the last one (inclusive;
-- null: open-ended). Prices are exact decimal strings in jsonb (see server/billing/contracts.ts).
create table billing_contracts (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  billing_period text not null default 'monthly' check (billing_period in ('monthly')),
  effective_from date not null check (extract(day from effective_from) = 1),
  effective_until date check (extract(day from effective_until) = 1),
  prices jsonb not null,
  minimum_commitment text not null default '0',
  ended_at timestamptz,
  created_by jsonb not null,
  ended_by jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index billing_contracts_by_start on billing_contracts (tenant_id, effective_from);

-- A reconciliation: an external invoice of one period compared with the contract and the ledger.
-- The invoice comes as JSON lines (`invoice`) or as a CSV file through the two-phase upload (the
-- upload columns; `invoice` is filled from the file when the task reads it).
create table billing_reconciliations (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  period text not null check (period ~ '^\d{4}-(0[1-9]|1[0-2])$'),
  status text not null default 'queued' check (status in ('awaiting_upload', 'queued', 'running', 'succeeded', 'failed')),
  invoice jsonb,
  -- An uploaded invoice's currency (a CSV has no place for it); JSON invoices carry theirs inside.
  invoice_currency text,
  filename text,
  content_type text,
  size_bytes bigint check (size_bytes >= 0),
  checksum_sha256 text check (checksum_sha256 ~ '^[0-9a-f]{64}$'),
  blob_key text,
  bytes_verified boolean not null default false,
  uploaded_at timestamptz,
  finding_count integer,
  error_detail text,
  created_by jsonb not null,
  finished_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);

-- What a reconciliation found, one row per disagreement. expected/actual/difference are exact
-- decimal strings of `measure` (a quantity, a unit price or an amount in the contract currency).
create table billing_reconciliation_findings (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  reconciliation_id uuid not null,
  period text not null,
  kind text not null check (kind in (
    'quantity_mismatch', 'unit_price_mismatch', 'usage_not_invoiced', 'invoiced_without_usage',
    'usage_outside_contract', 'minimum_commitment_shortfall')),
  meter text,
  measure text not null check (measure in ('quantity', 'unit_price', 'amount')),
  expected text not null,
  actual text not null,
  difference text not null,
  currency text,
  status text not null default 'open' check (status in ('open', 'acknowledged', 'resolved')),
  note text,
  acknowledged_at timestamptz,
  acknowledged_by jsonb,
  resolved_at timestamptz,
  resolved_by jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, reconciliation_id) references billing_reconciliations (tenant_id, id)
);
create index billing_findings_by_reconciliation on billing_reconciliation_findings (tenant_id, reconciliation_id);

-- The workspace evaluation policy (operator surface): which engine a workspace may use, caps on
-- questions per evaluation and pages per document, and whether OCR runs. No row: no limits.
create table workspace_evaluation_policies (
  tenant_id uuid not null references tenants (id),
  engine text not null default 'any' check (engine in ('any', 'builtin')),
  max_questions integer check (max_questions >= 1),
  max_pages_per_document integer check (max_pages_per_document >= 1),
  ocr boolean not null default true,
  updated_at timestamptz not null default now(),
  primary key (tenant_id)
);
