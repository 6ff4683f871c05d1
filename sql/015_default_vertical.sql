-- A workspace's default vertical binding: a key of the vertical catalog, or null for the shipped
-- default entry. Cases and question sets created without a vertical copy it at creation.
alter table tenant_settings add column vertical text;
