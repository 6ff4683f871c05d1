-- A delivery's finish writes fewer index entries (issue 30: deliveries at the network's pace).
--
-- Every attempt's finish updates `status`, `updated_at` and the attempt counters of its delivery.
-- The partial index `notification_deliveries_finished (updated_at) where status <> 'pending'`,
-- used only by the hourly retention sweep, named both, so no finish could be a heap-only (HOT)
-- update: each wrote a new version of the row and a new entry into all three of the table's
-- indexes (about 4 of the 9 WAL records a delivery's finish wrote), and every delivery's insert
-- paid for the third index too. It goes. Pages keep a fifth free at insert (fillfactor 80), so a
-- finish whose page has room is heap-only, touching no index; with envelopes of about 800 bytes
-- (five or six rows a page) that is about a third of them (134 of 400 finished together; 57 at
-- fillfactor 90); the others write entries into the two indexes left. Keeping room for all of
-- them would take half of every page of a table kept for the retention period.
--
-- The retention sweep (server/notifications/maintenance.ts) finds old finished deliveries by a
-- BRIN index on `created_at` instead: a delivery finished before the retention cut-off was created
-- before it too, and the table is written in creation order, so the sweep reads the block ranges
-- old enough and skips the rest. A BRIN entry names a range of blocks, not a row, and `created_at`
-- never changes, so the index costs a finish nothing. Building it reads the whole table while
-- inserts wait: on a large table, run `create index concurrently if not exists
-- notification_deliveries_created on notification_deliveries using brin (created_at)` by hand
-- before the upgrade, and this migration finds it there. Until then a sweep of the older release
-- still finds what to delete, by a sequential scan.
drop index if exists notification_deliveries_finished;
alter table notification_deliveries set (fillfactor = 80);
create index if not exists notification_deliveries_created on notification_deliveries using brin (created_at);
