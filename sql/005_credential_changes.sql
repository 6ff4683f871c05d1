-- Credential changes (a key revoked or expired early, a member re-roled or deactivated, a workspace
-- suspended or bound to an organization) notify every process so cached credential lookups drop.
create function notify_credentials_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_credentials', tg_table_name);
  return null;
end
$$;

create trigger api_keys_credentials_changed after update or delete on api_keys
  for each statement execute function notify_credentials_changed();
create trigger users_credentials_changed after update or delete on users
  for each statement execute function notify_credentials_changed();
create trigger tenants_credentials_changed after update or delete on tenants
  for each statement execute function notify_credentials_changed();
