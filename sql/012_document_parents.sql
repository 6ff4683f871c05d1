-- A document found inside another (an email's attachment) names the document it came from.
alter table documents add column parent_document_id uuid;
create index documents_parent on documents (tenant_id, parent_document_id) where parent_document_id is not null;
