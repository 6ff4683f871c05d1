-- Document types from the model when one is configured (issue 27): where a document's type came
-- from (`rules`, or `model` when the rules were unsure and a configured model named a type) and,
-- when the model was asked but its type is not used, why. Additive: nullable columns.
alter table documents add column if not exists document_type_source text;
alter table documents add column if not exists document_type_note text;
