-- Writes of one workspace spread over index pages (issue 30; reasoning and measurements in
-- docs/operations.md, "Write hot spots").
--
-- 1. `scenarios` becomes hash-partitioned by its id into 8 partitions. Case ids are time-ordered
--    (UUIDv7), so one btree on (tenant_id, id) takes every insert of a workspace on its right-most
--    leaf page, and concurrent inserts queue on that page's lock (LWLock:BufferContent). Eight
--    partitions are eight btrees, eight right-most pages: a workspace's inserts spread over them,
--    while "newest first" listing stays one ordered scan (a Merge Append of the partitions' index
--    scans, on the same key, so cursor pagination by id is unchanged). The key stays
--    (tenant_id, id), tenant first, so distribution by workspace stays possible.
-- 2. The idempotency store loses its index on the always-growing `expires_at` (every POST appended
--    to its right-most page); expired records are swept by the hourly maintenance job with one
--    scan instead.
drop index if exists idempotency_keys_expiry;

alter table scenarios rename to scenarios_unpartitioned;
alter table scenarios_unpartitioned rename constraint scenarios_pkey to scenarios_unpartitioned_pkey;
alter table scenarios_unpartitioned rename constraint scenarios_tenant_id_fkey to scenarios_unpartitioned_tenant_id_fkey;

create table scenarios (
  tenant_id uuid not null references tenants (id),
  id uuid not null,
  name text not null,
  external_ref text,
  vertical text,
  status text not null default 'created',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
) partition by hash (id);
create table scenarios_p0 partition of scenarios for values with (modulus 8, remainder 0);
create table scenarios_p1 partition of scenarios for values with (modulus 8, remainder 1);
create table scenarios_p2 partition of scenarios for values with (modulus 8, remainder 2);
create table scenarios_p3 partition of scenarios for values with (modulus 8, remainder 3);
create table scenarios_p4 partition of scenarios for values with (modulus 8, remainder 4);
create table scenarios_p5 partition of scenarios for values with (modulus 8, remainder 5);
create table scenarios_p6 partition of scenarios for values with (modulus 8, remainder 6);
create table scenarios_p7 partition of scenarios for values with (modulus 8, remainder 7);

insert into scenarios (tenant_id, id, name, external_ref, vertical, status, created_at, updated_at)
select tenant_id, id, name, external_ref, vertical, status, created_at, updated_at from scenarios_unpartitioned;

-- Every foreign key that pointed at the old table points at the new one, under the same name
-- (found in the catalog, so keys added by any earlier migration move too).
do $$
declare fk record;
begin
  for fk in
    select c.conrelid::regclass as tbl, c.conname, pg_get_constraintdef(c.oid) as def
    from pg_constraint c
    where c.contype = 'f' and c.confrelid = 'scenarios_unpartitioned'::regclass
  loop
    execute format('alter table %s drop constraint %I', fk.tbl, fk.conname);
    execute format('alter table %s add constraint %I %s', fk.tbl, fk.conname,
      replace(fk.def, 'REFERENCES scenarios_unpartitioned(', 'REFERENCES scenarios('));
  end loop;
end $$;

drop table scenarios_unpartitioned;
