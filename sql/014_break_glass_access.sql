-- Break-glass access: an approved request's window can be revoked (by the workspace's admins or
-- the operator CLI), which ends it at once; reads under a grant are looked up per request by the
-- operator's subject, with or without the workspace named.
alter table break_glass_requests drop constraint break_glass_requests_status_check;
alter table break_glass_requests add constraint break_glass_requests_status_check
  check (status in ('requested', 'approved', 'denied', 'revoked'));
alter table break_glass_requests add column revoked_at timestamptz;
alter table break_glass_requests add column revoked_by_user_id uuid;
create index break_glass_requests_grants on break_glass_requests (operator_sub, tenant_id, access_expires_at) where status = 'approved';
