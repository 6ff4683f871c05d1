-- A document's blocks are stored in chunks: one row holds up to 256 consecutive blocks (or about
-- 256 KiB of them) as a JSON array, instead of one row per block (issue 25; measurements in
-- docs/operations.md, "Block storage").
--
-- Blocks are written once per ingestion, all together, and read in order: a page of the blocks
-- route, or every block of a case for an evaluation. Nothing looks a block up by its id in SQL, and
-- the ids are fixed by the document and the position (server/documents/blocks.ts). As rows, a
-- 10,000-row spreadsheet cost 10,000 heap tuples, three index entries each (the primary key, the
-- block-id index, and the foreign key's check per row): 150-230 ms of COPY on a quiet 2-core
-- machine, as much as reading the file. As 40 chunks it is one statement of 20-25 ms, the
-- block-id index is gone, and the table holds a fortieth of the tuples.
--
-- A chunk's `blocks` is text (JSON is checked by the service that wrote it; a `json` column parsed
-- it again on every write, about 30 ms per 10,000 blocks), compressed with lz4 where the server has
-- it (pglz otherwise: the embedded database is built without lz4). The service decodes the chunks it
-- reads; a chunk's position and page ranges let a page of the blocks route read one or two.
create table document_block_chunks (
  tenant_id uuid not null,
  document_id uuid not null,
  first_position integer not null check (first_position >= 0),
  last_position integer not null check (last_position >= first_position),
  min_page integer not null check (min_page >= 1),
  max_page integer not null check (max_page >= min_page),
  blocks text not null,
  primary key (tenant_id, document_id, first_position),
  foreign key (tenant_id, document_id) references documents (tenant_id, id) on delete cascade
);

do $$
begin
  alter table document_block_chunks alter column blocks set compression lz4;
exception when feature_not_supported then
  null; -- built without lz4: the default (pglz) stays
end $$;

-- Existing blocks move into chunks of 256 positions, with the same fields the service writes (a
-- null field is left out).
insert into document_block_chunks (tenant_id, document_id, first_position, last_position, min_page, max_page, blocks)
select tenant_id, document_id, min(position), max(position), min(page), max(page),
       json_agg(json_strip_nulls(json_build_object(
         'id', id, 'position', position, 'page', page, 'kind', kind, 'text', text, 'char_start', char_start,
         'char_end', char_end, 'source', source, 'confidence', confidence, 'cells', cells, 'sheet', sheet)) order by position)::text
from document_blocks
group by tenant_id, document_id, position / 256;

drop table document_blocks;
