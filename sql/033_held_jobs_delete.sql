-- The delete that finishes the jobs a worker still holds (jobs/claim.ts, deleteHeldJobs) finds them
-- through the primary key, however old its plan (issue 30).
--
-- As a prepared statement (`delete from jobs where locked_by = $1 and id = any($2) returning id`)
-- its generic plan was made once per connection, while `jobs` held a few rows (up to about 50),
-- when a sequential scan was the cheapest way to find a batch of rows; the plan stayed while the
-- table grew with the dead rows of finished jobs, until its next ANALYZE. Without one, a delivery
-- batch's finish read the whole table: 0.6 ms at first, 1.4 ms after 40,000 deliveries, and
-- growing. Planned inside this function (`enable_seqscan = off`) a sequential scan is never chosen. `rows 1` keeps the estimate the statements
-- embedding it were planned with (the delete's own): with the default of 1,000 the delivery update
-- joined to it was planned as a sequential scan of `notification_deliveries`.
create function svc_delete_held_jobs(p_worker text, p_ids uuid[]) returns setof uuid
language plpgsql volatile rows 1 set enable_seqscan = off as $$
begin
  return query delete from jobs where locked_by = p_worker and id = any(p_ids) returning id;
end
$$;
