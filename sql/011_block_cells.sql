-- Table rows carry their cells (column name and value, from the table's header row), and blocks
-- of a spreadsheet the name of their sheet.
alter table document_blocks
  add column cells jsonb,
  add column sheet text;
