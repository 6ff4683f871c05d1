-- A delivery's finish rewrites its row in place (issue 30: deliveries at the network's pace).
--
-- Every attempt's finish updates `status`, `updated_at` and the attempt counters of its delivery.
-- The partial index `notification_deliveries_finished (updated_at) where status <> 'pending'`,
-- used only by the hourly retention sweep, named both, so no finish could be a heap-only (HOT)
-- update: each wrote a new version of the row and a new entry into all three of the table's
-- indexes (about 4 of the 9 WAL records a delivery's finish wrote), and left dead entries behind
-- for vacuum. It goes. With room left on each page (fillfactor 80) the new version stays on the
-- row's own page and no index is touched.
--
-- The retention sweep (server/notifications/maintenance.ts) finds old finished deliveries by a
-- BRIN index on `created_at` instead: a delivery finished before the retention cut-off was created
-- before it too, and the table is written in creation order, so the sweep reads the block ranges
-- old enough and skips the rest. A BRIN entry names a range of blocks, not a row, and `created_at`
-- never changes, so the index costs no finish anything.
drop index if exists notification_deliveries_finished;
alter table notification_deliveries set (fillfactor = 80);
create index if not exists notification_deliveries_created on notification_deliveries using brin (created_at);
