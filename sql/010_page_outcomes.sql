-- Per-page accounting of ingested files: the page outcome counts a document (or guideline source)
-- shows as `pages`, and where each block's text came from (its own text, or OCR with a confidence).
alter table documents add column page_summary jsonb;
alter table guidelines add column page_summary jsonb;
alter table document_blocks
  add column source text not null default 'text' check (source in ('text', 'ocr')),
  add column confidence real check (confidence between 0 and 100);
alter table guideline_blocks
  add column source text not null default 'text' check (source in ('text', 'ocr')),
  add column confidence real check (confidence between 0 and 100);
