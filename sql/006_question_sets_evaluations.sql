-- Question sets and evaluations (issue 6): question sets and their versions, evaluation runs with
-- their answers, evidence and decision, human decision reviews, and PDF findings reports.
-- tenant_id leads every key so the schema can be distributed by tenant.

create table question_sets (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  name text not null,
  -- A key of the vertical catalog; null binds the set to the catalog's default entry.
  vertical text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index question_sets_by_vertical on question_sets (tenant_id, vertical);

-- A version holds its questions as one JSON array. A draft may be edited; `revision` is bumped by
-- every change (edit, publish start, publish end) and is part of the version's ETag. A published
-- version never changes again.
create table question_set_versions (
  tenant_id uuid not null,
  id uuid not null,
  question_set_id uuid not null,
  number integer not null check (number >= 1),
  status text not null default 'draft' check (status in ('draft', 'publishing', 'published', 'failed')),
  questions jsonb not null,
  revision integer not null default 1,
  failure_reason text,
  published_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, question_set_id, number),
  foreign key (tenant_id, question_set_id) references question_sets (tenant_id, id)
);
create index question_set_versions_published on question_set_versions (tenant_id, question_set_id, published_at desc)
  where status = 'published';

-- One evaluation of a case against one pinned question-set version.
create table evaluations (
  tenant_id uuid not null,
  id uuid not null,
  scenario_id uuid not null,
  question_set_id uuid not null,
  question_set_version_id uuid not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed', 'canceled')),
  engine text not null check (engine in ('builtin', 'model')),
  answered integer not null default 0,
  total integer not null default 0,
  document_count integer,
  block_count integer,
  error_code text,
  error_detail text,
  started_at timestamptz,
  finished_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, scenario_id) references scenarios (tenant_id, id),
  foreign key (tenant_id, question_set_version_id) references question_set_versions (tenant_id, id)
);
create index evaluations_by_case on evaluations (tenant_id, scenario_id, id desc);

-- Answers of an evaluation, one per question, in the version's question order.
create table evaluation_answers (
  tenant_id uuid not null,
  evaluation_id uuid not null,
  id uuid not null,
  position integer not null,
  question_key text not null,
  criticality text not null,
  answer_type text not null,
  status text not null check (status in ('answered', 'not_found')),
  value jsonb,
  confidence double precision not null,
  source text not null,
  fact_path text,
  accepted boolean,
  downgraded boolean not null default false,
  note text,
  evidence_ids uuid[] not null default '{}',
  primary key (tenant_id, evaluation_id, position),
  unique (tenant_id, id),
  foreign key (tenant_id, evaluation_id) references evaluations (tenant_id, id) on delete cascade
);

-- What an answer cites: a block of a document of the case and the quoted span of its text.
create table evaluation_evidence (
  tenant_id uuid not null,
  evaluation_id uuid not null,
  id uuid not null,
  position integer not null,
  answer_id uuid not null,
  question_key text not null,
  document_id uuid not null,
  block_id uuid not null,
  page integer not null,
  quote text not null,
  primary key (tenant_id, evaluation_id, position),
  unique (tenant_id, id),
  foreign key (tenant_id, evaluation_id) references evaluations (tenant_id, id) on delete cascade
);

-- The computed decision of a succeeded evaluation.
create table evaluation_decisions (
  tenant_id uuid not null,
  evaluation_id uuid not null,
  outcome text not null check (outcome in ('approve', 'refer', 'decline')),
  reasons jsonb not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, evaluation_id),
  foreign key (tenant_id, evaluation_id) references evaluations (tenant_id, id) on delete cascade
);

-- Human reviews of a decision (the newest is the override in force); kept beside the computed
-- decision, never replacing it.
create table decision_reviews (
  tenant_id uuid not null,
  id uuid not null,
  evaluation_id uuid not null,
  scenario_id uuid not null,
  outcome text not null check (outcome in ('approve', 'refer', 'decline')),
  reason text not null,
  reviewer_user_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, evaluation_id) references evaluations (tenant_id, id)
);
create index decision_reviews_by_evaluation on decision_reviews (tenant_id, evaluation_id, id desc);

-- PDF findings reports; the bytes are small and kept in the row.
create table reports (
  tenant_id uuid not null,
  id uuid not null,
  scenario_id uuid not null,
  evaluation_id uuid not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'succeeded', 'failed')),
  pdf bytea,
  size_bytes integer,
  page_count integer,
  error_detail text,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, scenario_id) references scenarios (tenant_id, id),
  foreign key (tenant_id, evaluation_id) references evaluations (tenant_id, id)
);
create index reports_by_case on reports (tenant_id, scenario_id, id desc);
