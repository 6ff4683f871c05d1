-- A row found by its key is found through its key, however a plan was made (issue 30; migration 032
-- did the same for deliveries).
--
-- Each index here leads with `tenant_id`, as every index must, and so could also serve a lookup
-- by `(tenant_id, id)`, reading every row of the workspace (its later columns are not constrained
-- by such a lookup). Costed on an empty table it tied with the primary key, and a generic plan
-- made then, on a new deployment's first requests, took it and kept it until the table was next
-- analyzed: a document's, an evaluation's or a guideline's reads, and the foreign-key checks of
-- every block chunk, answer, piece of evidence, draft and guideline block inserted, read the whole
-- workspace's rows. Each is made partial on a condition every row meets (the column is `not null`),
-- which the planner can only use where a statement's own conditions imply it, as `column = $n` or
-- `column <= $n` do: the lists and lookups these indexes exist for keep them, and every lookup by
-- `(tenant_id, id)` takes the primary key. tests/jobs/key-plans.test.ts plans every such lookup and
-- foreign-key check on empty tables.
--
-- Building them reads each table while its inserts wait: on large tables, create the new indexes
-- by hand first with `create index concurrently if not exists ...` (the statements below), and
-- the migration finds them there and only drops the old ones, which no release names.
create index if not exists documents_by_scenario on documents (tenant_id, scenario_id, id desc) where scenario_id is not null;
drop index if exists documents_by_case;
create index if not exists evaluations_by_scenario on evaluations (tenant_id, scenario_id, id desc) where scenario_id is not null;
drop index if exists evaluations_by_case;
create index if not exists supersessions_by_scenario on supersessions (tenant_id, scenario_id, id desc) where scenario_id is not null;
drop index if exists supersessions_by_case;
create index if not exists guidelines_by_question_group on guidelines (tenant_id, question_group_id, id desc) where question_group_id is not null;
drop index if exists guidelines_by_group;
create index if not exists generation_runs_by_question_set on generation_runs (tenant_id, question_set_id, id desc) where question_set_id is not null;
drop index if exists generation_runs_by_set;
create index if not exists billing_contracts_by_effective_from on billing_contracts (tenant_id, effective_from) where effective_from is not null;
drop index if exists billing_contracts_by_start;
create index if not exists billing_findings_by_reconciliation_id on billing_reconciliation_findings (tenant_id, reconciliation_id) where reconciliation_id is not null;
drop index if exists billing_findings_by_reconciliation;
