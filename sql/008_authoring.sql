-- Question authoring (issue 8): question groups and their guideline sources (uploaded and ingested
-- like case documents), generation runs with per-step checkpoints and drafted questions, model
-- usage metering and per-workspace cost budgets, diff runs, structure tasks, supersessions.
-- tenant_id leads every key so the schema can be distributed by tenant.

create table question_groups (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  name text not null,
  description text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);

-- A guideline source: the same lifecycle and columns as a case document (two-phase upload, the
-- file-type registry, the ingestion adapters). A re-upload of a changed guideline is a new source
-- that names the one it replaces.
create table guidelines (
  tenant_id uuid not null,
  id uuid not null,
  question_group_id uuid not null,
  replaces_guideline_id uuid,
  filename text not null,
  content_type text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  checksum_sha256 text check (checksum_sha256 ~ '^[0-9a-f]{64}$'),
  status text not null default 'awaiting_upload'
    check (status in ('awaiting_upload', 'processing', 'ready', 'ready_degraded', 'failed', 'unsupported_pending')),
  blob_key text,
  bytes_verified boolean not null default false,
  ingestion_generation integer not null default 0,
  page_count integer,
  block_count integer,
  error_code text check (error_code in ('guideline_ingestion_failed', 'unsupported_pending')),
  error_detail text,
  uploaded_at timestamptz,
  processed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, question_group_id) references question_groups (tenant_id, id),
  foreign key (tenant_id, replaces_guideline_id) references guidelines (tenant_id, id)
);
create index guidelines_by_group on guidelines (tenant_id, question_group_id, id desc);

create table guideline_blocks (
  tenant_id uuid not null,
  guideline_id uuid not null,
  position integer not null check (position >= 0),
  id uuid not null,
  page integer not null check (page >= 1),
  kind text not null,
  text text not null,
  char_start integer not null,
  char_end integer not null,
  primary key (tenant_id, guideline_id, position),
  foreign key (tenant_id, guideline_id) references guidelines (tenant_id, id) on delete cascade
);
create unique index guideline_blocks_id on guideline_blocks (tenant_id, id);

-- A generation run over guideline sources, drafting questions for a question set.
create table generation_runs (
  tenant_id uuid not null,
  id uuid not null,
  question_set_id uuid not null,
  guideline_ids uuid[] not null,
  generator text not null check (generator in ('builtin', 'model')),
  status text not null default 'queued'
    check (status in ('queued', 'running', 'stalled', 'succeeded', 'failed', 'canceled')),
  -- Why a stalled run is paused: vendor_outage (after the automatic checks) or budget_exceeded.
  paused_reason text check (paused_reason in ('vendor_outage', 'budget_exceeded')),
  -- Automatic checks of the model endpoint made since the run last progressed.
  outage_checks integer not null default 0,
  steps_total integer,
  steps_done integer not null default 0,
  error_code text,
  error_detail text,
  accepted_version_ids uuid[] not null default '{}',
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, question_set_id) references question_sets (tenant_id, id)
);
create index generation_runs_by_set on generation_runs (tenant_id, question_set_id, id desc);

-- The plan of a run, one row per step (a chunk of one guideline's blocks); done_at is the
-- checkpoint, written in the same transaction as the step's drafts and usage.
create table generation_steps (
  tenant_id uuid not null,
  run_id uuid not null,
  step integer not null check (step >= 0),
  guideline_id uuid not null,
  chunk integer not null,
  block_ids uuid[] not null,
  drafted integer not null default 0,
  done_at timestamptz,
  primary key (tenant_id, run_id, step),
  foreign key (tenant_id, run_id) references generation_runs (tenant_id, id) on delete cascade
);

-- Questions drafted by a run, in drafting order, each citing the guideline blocks it came from.
create table generation_drafts (
  tenant_id uuid not null,
  run_id uuid not null,
  position integer not null,
  step integer not null,
  key text not null,
  question jsonb not null,
  thresholds jsonb not null default '[]',
  citations jsonb not null,
  primary key (tenant_id, run_id, position),
  unique (tenant_id, run_id, key),
  foreign key (tenant_id, run_id) references generation_runs (tenant_id, id) on delete cascade
);

-- Where a question of a version came from (accepted drafts): its guideline block.
create table question_provenance (
  tenant_id uuid not null,
  version_id uuid not null,
  question_key text not null,
  run_id uuid,
  citations jsonb not null,
  primary key (tenant_id, version_id, question_key)
);

-- Model usage, one row per metered call (a run step): tokens and cost in integer micro-units.
create table model_usage (
  tenant_id uuid not null,
  id uuid not null,
  run_kind text not null,
  run_id uuid not null,
  step integer,
  input_tokens bigint not null default 0,
  output_tokens bigint not null default 0,
  cost_micro bigint not null default 0,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index model_usage_by_run on model_usage (tenant_id, run_id);

-- The hard cost budget of a workspace (deployment configuration, set by operators).
create table cost_budgets (
  tenant_id uuid not null references tenants (id),
  limit_micro bigint not null check (limit_micro >= 0),
  updated_at timestamptz not null default now(),
  primary key (tenant_id)
);

-- A diff run: old and new text of a re-uploaded guideline compared block by block, with
-- proposals against a base version.
create table diff_runs (
  tenant_id uuid not null,
  id uuid not null,
  question_set_id uuid not null,
  guideline_id uuid not null,
  previous_guideline_id uuid not null,
  base_version_id uuid not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  result jsonb,
  error_detail text,
  finished_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, question_set_id) references question_sets (tenant_id, id)
);
create index diff_runs_by_set on diff_runs (tenant_id, question_set_id, id desc);

-- A structure task: a proposal to split or regroup one question of a version.
create table structure_tasks (
  tenant_id uuid not null,
  id uuid not null,
  question_set_id uuid not null,
  version_id uuid not null,
  question_key text not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  proposal jsonb,
  error_detail text,
  finished_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, version_id) references question_set_versions (tenant_id, id)
);
create index structure_tasks_by_version on structure_tasks (tenant_id, version_id, id desc);

-- A supersession: a newly published version changed or dropped a question that an evaluated case
-- answered (or a confirmed supersession found no analog in a later version).
create table supersessions (
  tenant_id uuid not null,
  id uuid not null,
  scenario_id uuid not null,
  question_set_id uuid not null,
  evaluation_id uuid,
  old_version_id uuid not null,
  new_version_id uuid not null,
  question_key text not null,
  reason text not null check (reason in ('changed', 'dropped', 'no_analog')),
  old_question jsonb,
  new_question jsonb,
  answer_value jsonb,
  origin_supersession_id uuid,
  status text not null default 'pending_review' check (status in ('pending_review', 'confirmed', 'dismissed')),
  decided_by_user_id uuid,
  decided_at timestamptz,
  note text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, scenario_id, new_version_id, question_key, reason),
  foreign key (tenant_id, scenario_id) references scenarios (tenant_id, id)
);
create index supersessions_by_case on supersessions (tenant_id, scenario_id, id desc);
