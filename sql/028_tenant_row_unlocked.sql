-- No insert locks the workspace's row (issue 30; reasoning and measurements in docs/operations.md,
-- "Write hot spots").
--
-- A foreign key makes every insert of a child row take FOR KEY SHARE on the parent row. Every
-- insert of one workspace (a case, an idempotency record, a document, a delivery, a usage event)
-- referenced the same `tenants` row, so concurrent inserts all share-locked one tuple: each new
-- locker writes a new MultiXact into the tuple's xmax under that heap page's exclusive content lock,
-- and the backends queue there (LWLock:BufferContent, 59-93% of busy backends with 4-16 API
-- processes on 16 cores, POST throughput falling from 4 processes on).
--
-- Workspaces are never deleted (a workspace ends by its status, its rows stay), and every
-- `tenant_id` the service writes comes from the credential that authenticated the request, which
-- was read from that workspace's own rows; so the keys to `tenants` guarded nothing that can happen,
-- at the price of a lock per insert. They are dropped; keys between workspace rows (a document to
-- its case, a delivery to its subscription) stay. A test reads the catalog and fails on any new key
-- to `tenants`, and on any statement that deletes a workspace.
do $$
declare fk record;
begin
  for fk in
    select c.conrelid::regclass as tbl, c.conname
    from pg_constraint c
    where c.contype = 'f' and c.confrelid = 'tenants'::regclass and c.conparentid = 0
  loop
    execute format('alter table %s drop constraint %I', fk.tbl, fk.conname);
  end loop;
end $$;
