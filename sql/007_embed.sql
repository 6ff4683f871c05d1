-- The embedded read-only case view (issue 7): single-use handoffs and the sessions they are
-- exchanged for. Both secrets are stored only as their SHA-256; tenant_id leads every key.

-- A handoff is minted for a case, a person and a host origin, without checking that the case or
-- the person exists (a mint never reveals that); the exchange re-verifies everything.
create table embed_handoffs (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  handoff_hash bytea not null,
  scenario_id uuid not null,
  host_origin text not null,
  subject_email text not null,
  expires_at timestamptz not null,
  -- Set by the one exchange that presents it (whatever the outcome): single use.
  spent_at timestamptz,
  minted_by_key_id uuid,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
-- A handoff is presented without its workspace, so its hash is looked up globally.
create unique index embed_handoffs_hash on embed_handoffs (handoff_hash);

-- A session: an opaque bearer held in frame memory, read-only, bound to one case.
create table embed_sessions (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  token_hash bytea not null,
  handoff_id uuid not null,
  scenario_id uuid not null,
  user_id uuid not null,
  host_origin text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, handoff_id) references embed_handoffs (tenant_id, id)
);
create unique index embed_sessions_token on embed_sessions (token_hash);
create index embed_handoffs_expiry on embed_handoffs (tenant_id, expires_at);
create index embed_sessions_expiry on embed_sessions (tenant_id, expires_at);
