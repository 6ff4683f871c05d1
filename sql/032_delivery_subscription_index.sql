-- A delivery found by its key is found through the primary key, however a plan was made (issue 30).
--
-- `notification_deliveries_subscription (tenant_id, subscription_id, id)` could also serve a lookup
-- by `(tenant_id, id)` alone, reading every delivery of the workspace (its `id` is not a key of
-- the index's descent once `subscription_id` is unconstrained). Costed on an empty table the two
-- indexes tie, and a generic plan made then took the subscription index and kept it until the
-- table was next analyzed: the foreign-key check of every attempt's insert (PostgreSQL's own
-- `SELECT 1 FROM ONLY notification_deliveries WHERE tenant_id = $1 AND id = $2 FOR KEY SHARE`)
-- went from 0.04 ms to 0.37 ms over 40,000 deliveries of one workspace on the delivery bench.
--
-- The same index, made partial on a condition every row meets (`subscription_id` is never null),
-- can no longer be chosen for a statement that does not constrain `subscription_id`: the planner
-- uses a partial index only where the statement's own conditions imply its predicate, and
-- `subscription_id = $n` does. So the subscription's delivery list, the reads of one delivery of
-- a subscription and the foreign key from subscriptions keep this index, and every lookup by
-- `(tenant_id, id)` takes the primary key.
--
-- Building it reads the whole table while inserts wait: on a large table, run `create index
-- concurrently if not exists notification_deliveries_by_subscription on notification_deliveries
-- (tenant_id, subscription_id, id) where subscription_id is not null` by hand before the upgrade,
-- and this migration finds it there.
create index if not exists notification_deliveries_by_subscription
  on notification_deliveries (tenant_id, subscription_id, id) where subscription_id is not null;
drop index if exists notification_deliveries_subscription;
