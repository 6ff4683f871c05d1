-- Answers an underwriter can trust (issue 27): each document's type found from its content at
-- ingestion, with a confidence, and the arithmetic checks its type allows, with their results;
-- a workspace's label synonyms and how its report formats amounts. Additive: nullable columns.
alter table documents add column if not exists document_type text;
alter table documents add column if not exists document_type_confidence numeric(3, 2);
alter table documents add column if not exists checks jsonb;
alter table tenant_settings add column if not exists label_synonyms jsonb;
alter table tenant_settings add column if not exists currency text;
alter table tenant_settings add column if not exists number_locale text;
