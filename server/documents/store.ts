/**
 * The `documents` and `document_blocks` tables: rows, their API shapes, and the status changes
 * (each appends a `document.status` case event in the same transaction).
 */
import type postgres from 'postgres'
import type { Sql, Tx } from '../db/connect'
import type { PageWindow } from '../http/pagination'
import type { OneStatementCreate } from '../http/idempotency'
import { appendCaseEvents, caseEventParts } from '../events/log'
import type { Block } from './blocks'
import { withAllOutcomes, type PageSummary, type StoredPageSummary } from './parsing/pages'

/** Document status values. */
export const DOCUMENT_STATUSES = ['awaiting_upload', 'processing', 'ready', 'ready_degraded', 'failed', 'unsupported_pending'] as const
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number]

/** A row of `documents`. */
export interface DocumentRow {
  tenant_id: string
  id: string
  scenario_id: string
  filename: string
  content_type: string
  size_bytes: string | number
  checksum_sha256: string | null
  status: DocumentStatus
  blob_key: string | null
  bytes_verified: boolean
  ingestion_generation: number
  page_count: number | null
  block_count: number | null
  /** Page outcome counts, once processed (documents processed before per-page accounting have none). */
  page_summary: StoredPageSummary | null
  /** The document this one was found in (an email's attachment), or null. */
  parent_document_id?: string | null
  /** The type found from its content at ingestion, its confidence and its checks (server/evaluation/document-findings.ts). */
  document_type?: string | null
  document_type_confidence?: string | number | null
  /** `rules`, or `model` when a configured model typed a document the rules were unsure of; with a note when the model was asked and not followed. */
  document_type_source?: string | null
  document_type_note?: string | null
  checks?: unknown[] | null
  error_code: string | null
  error_detail: string | null
  uploaded_at: Date | null
  processed_at: Date | null
  created_at: Date
  updated_at: Date
}

/** The API shape of a document; optional fields are absent when unset. */
export function renderDocument(row: DocumentRow) {
  return {
    id: row.id, scenario_id: row.scenario_id, ...(row.parent_document_id ? { parent_document_id: row.parent_document_id } : {}), ...renderUploadedFile(row),
    ...(row.document_type ? { document_type: row.document_type, document_type_confidence: Number(row.document_type_confidence) } : {}),
    ...(row.document_type && row.document_type_source ? { document_type_source: row.document_type_source } : {}),
    ...(row.document_type && row.document_type_note ? { document_type_note: row.document_type_note } : {}),
    ...(row.checks ? { checks: row.checks } : {}),
  }
}

/** A document found inside another, ready to be stored: its id is fixed by its parent and position. */
export interface ChildDocument { id: string; filename: string; contentType: string; size: number; blobKey: string }

/**
 * Inserts the documents found inside `parent` (in processing, bytes stored and verified) in one
 * statement and returns those that were new, in the parent's order (a retried or repeated
 * ingestion of the parent finds the others there); each new one gets its `document.status` event.
 * A ZIP's 40 members were 40 inserts before (with their events, 160 round trips in all); their
 * events are one statement too.
 */
export async function insertChildDocuments(tx: Tx, parent: DocumentRow, children: readonly ChildDocument[]): Promise<DocumentRow[]> {
  if (children.length === 0) return []
  const inserted = await tx<DocumentRow[]>`
    insert into documents (tenant_id, id, scenario_id, filename, content_type, size_bytes, blob_key, bytes_verified, status, ingestion_generation, parent_document_id, uploaded_at)
    select ${parent.tenant_id}, c.id, ${parent.scenario_id}, c.filename, c.content_type, c.size_bytes, c.blob_key, true, 'processing', 1, ${parent.id}, now()
    from unnest(${children.map((c) => c.id)}::uuid[], ${children.map((c) => c.filename)}::text[], ${children.map((c) => c.contentType)}::text[],
                ${children.map((c) => c.size)}::bigint[], ${children.map((c) => c.blobKey)}::text[]) with ordinality as c(id, filename, content_type, size_bytes, blob_key, n)
    order by c.n
    on conflict do nothing
    returning *`
  const at = new Map(children.map((c, i) => [c.id, i]))
  const out = [...inserted].sort((a, b) => at.get(a.id)! - at.get(b.id)!)
  await appendCaseEvents(tx, parent.tenant_id, parent.scenario_id, out.map((row) => ({ type: 'document.status', data: { document_id: row.id, status: 'processing', parent_document_id: parent.id } })))
  return out
}

/** The fields of an uploaded file (case document or guideline source) as the API shows them. */
export type UploadedFileRow = Omit<DocumentRow, 'tenant_id' | 'id' | 'scenario_id' | 'blob_key' | 'bytes_verified' | 'ingestion_generation' | 'status'> & { status: string }

/** The shared part of a case document's and a guideline source's API shape (from `filename` on). */
export function renderUploadedFile(row: UploadedFileRow) {
  return {
    filename: row.filename,
    content_type: row.content_type,
    size_bytes: Number(row.size_bytes),
    ...(row.checksum_sha256 !== null ? { checksum_sha256: row.checksum_sha256 } : {}),
    status: row.status,
    ...(row.page_count !== null ? { page_count: row.page_count } : {}),
    ...(row.block_count !== null ? { block_count: row.block_count } : {}),
    ...(row.page_summary ? { pages: withAllOutcomes(row.page_summary) } : {}),
    ...(row.error_code !== null ? { error_code: row.error_code } : {}),
    ...(row.error_detail !== null ? { error_detail: row.error_detail } : {}),
    ...(row.uploaded_at !== null ? { uploaded_at: row.uploaded_at.toISOString() } : {}),
    ...(row.processed_at !== null ? { processed_at: row.processed_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** The API shape of a document. */
export type DocumentView = ReturnType<typeof renderDocument>

/** A row of `document_blocks`. */
export interface BlockRow {
  id: string; position: number; page: number; kind: string; text: string; char_start: number; char_end: number
  source: string; confidence: number | null; cells: { column: string; value: string }[] | null; sheet: string | null
}

/** The API shape of a block. */
export function renderBlock(row: BlockRow, documentId: string) {
  return {
    id: row.id,
    document_id: documentId,
    position: row.position,
    page: row.page,
    kind: row.kind,
    text: row.text,
    char_start: row.char_start,
    char_end: row.char_end,
    source: row.source,
    ...(row.confidence !== null ? { confidence: Math.round(row.confidence) } : {}),
    ...(row.cells ? { cells: row.cells } : {}),
    ...(row.sheet !== null ? { sheet: row.sheet } : {}),
  }
}

/** Reads one document of a case, or null (absent, another case's, another workspace's look the same). */
export async function findDocument(sql: Tx, tenantId: string, scenarioId: string, documentId: string, lock = false): Promise<DocumentRow | null> {
  const [row] = await sql<DocumentRow[]>`
    select * from documents
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and id = ${documentId}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Reads one document by workspace and id alone (the upload route and the ingestion job). */
export async function findDocumentById(sql: Tx, tenantId: string, documentId: string, lock = false): Promise<DocumentRow | null> {
  const [row] = await sql<DocumentRow[]>`
    select * from documents where tenant_id = ${tenantId} and id = ${documentId}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Fields a status change may set alongside the status. */
export interface StatusFields {
  pageCount?: number | null
  blockCount?: number | null
  /** Page outcome counts; null clears them (a new upload or reingest). */
  pages?: PageSummary | null
  errorCode?: string | null
  errorDetail?: string | null
  processed?: boolean
  bumpGeneration?: boolean
}

/**
 * The SET list of a status change of an uploaded file (a case document or a guideline source: the
 * same status columns), for the owner's own UPDATE of its table.
 */
export function statusAssignments(tx: Tx, status: string, current: { page_count: number | null; block_count: number | null }, fields: StatusFields) {
  return tx`
      status = ${status},
      page_summary = ${fields.pages !== undefined ? (fields.pages === null ? null : tx.json(fields.pages as unknown as postgres.JSONValue)) : tx`page_summary`},
      page_count = ${fields.pageCount !== undefined ? fields.pageCount : current.page_count},
      block_count = ${fields.blockCount !== undefined ? fields.blockCount : current.block_count},
      error_code = ${fields.errorCode !== undefined ? fields.errorCode : null},
      error_detail = ${fields.errorDetail !== undefined ? fields.errorDetail : null},
      processed_at = ${fields.processed ? tx`now()` : tx`processed_at`},
      ingestion_generation = ingestion_generation + ${fields.bumpGeneration ? 1 : 0},
      updated_at = now()`
}

/**
 * Moves a document to a status in the caller's transaction and appends the `document.status`
 * event of its case. Returns the updated row.
 */
export async function setDocumentStatus(tx: Tx, doc: DocumentRow, status: DocumentStatus, fields: StatusFields = {}): Promise<DocumentRow> {
  // One statement (the update, the case's counter and event, the NOTIFY): a document's ingestion
  // paid two round trips here. The event's error_code is the one the update stores (statusAssignments).
  const errorCode = fields.errorCode ?? null
  const event = caseEventParts(tx, {
    tenantId: doc.tenant_id,
    scenarioId: doc.scenario_id,
    type: 'document.status',
    data: { document_id: doc.id, status, previous_status: doc.status, ...(errorCode !== null ? { error_code: errorCode } : {}) },
  })
  const [row] = await tx<(DocumentRow & { event_notified?: unknown })[]>`
    with updated as (
      update documents set ${statusAssignments(tx, status, doc, fields)}
      where tenant_id = ${doc.tenant_id} and id = ${doc.id}
      returning *)
    ${event.ctes(tx`exists (select 1 from updated)`)}
    select updated.*, ${event.finalExpr} as event_notified from updated`
  event.after()
  const { event_notified: _, ...updated } = row!
  return updated as DocumentRow
}

/** Blocks a chunk holds at most, and the JSON length past which a chunk ends early (long blocks). */
const BLOCKS_PER_CHUNK = 256
const CHUNK_CHARS = 256 * 1024

/** JSON characters one insert statement carries at most (a document's chunks take one or a few). */
const CHARS_PER_INSERT = 8 * 1024 * 1024

/** One row of `document_block_chunks` as written: consecutive blocks as a JSON array, with their ranges. */
interface BlockChunk { firstPosition: number; lastPosition: number; minPage: number; maxPage: number; json: string }

/** A block as a chunk stores it: the names of its columns (BlockRow), a null field left out. */
function storedBlock(b: Block): Record<string, unknown> {
  const o: Record<string, unknown> = { id: b.id, position: b.position, page: b.page, kind: b.kind, text: b.text, char_start: b.charStart, char_end: b.charEnd, source: b.source }
  if (b.confidence !== null) o.confidence = b.confidence
  if (b.cells) o.cells = b.cells
  if (b.sheet !== null) o.sheet = b.sheet
  return o
}

/** About how many JSON characters a stored block takes (its fixed fields, text and cells; escapes not counted). */
function storedChars(b: Block): number {
  let n = 160 + b.text.length + (b.sheet?.length ?? 0)
  if (b.cells) for (const c of b.cells) n += 24 + c.column.length + c.value.length
  return n
}

/**
 * Cuts blocks (in position order) into chunks of at most BLOCKS_PER_CHUNK blocks or about
 * CHUNK_CHARS of JSON (estimated before it is written). Each chunk is one JSON.stringify of its
 * blocks: one per block took twice as long (15 against 8 ms for 10,000 spreadsheet rows).
 */
export function chunkBlocks(blocks: readonly Block[]): BlockChunk[] {
  const chunks: BlockChunk[] = []
  let start = 0
  let chars = 0
  for (let i = 0; i < blocks.length; i++) {
    chars += storedChars(blocks[i]!)
    if (i + 1 - start < BLOCKS_PER_CHUNK && chars < CHUNK_CHARS && i < blocks.length - 1) continue
    const slice = blocks.slice(start, i + 1)
    const pages = slice.map((b) => b.page)
    chunks.push({ firstPosition: slice[0]!.position, lastPosition: slice.at(-1)!.position, minPage: Math.min(...pages), maxPage: Math.max(...pages), json: JSON.stringify(slice.map(storedBlock)) })
    start = i + 1
    chars = 0
  }
  return chunks
}

/**
 * Replaces a document's blocks (delete, then insert) in the caller's transaction. The blocks are
 * stored as chunks of consecutive blocks, each one JSON array (sql/029_block_chunks.sql says why):
 * 10,000 blocks are 40 rows written by one statement, on PostgreSQL and on the embedded database
 * alike.
 */
export async function replaceBlocks(tx: Tx, tenantId: string, documentId: string, blocks: readonly Block[]): Promise<void> {
  await tx`delete from document_block_chunks where tenant_id = ${tenantId} and document_id = ${documentId}`
  const chunks = chunkBlocks(blocks)
  for (let i = 0; i < chunks.length;) {
    const batch: BlockChunk[] = []
    for (let chars = 0; i < chunks.length && (batch.length === 0 || chars + chunks[i]!.json.length <= CHARS_PER_INSERT); i++) {
      chars += chunks[i]!.json.length
      batch.push(chunks[i]!)
    }
    // A multi-row VALUES list, each chunk's JSON its own text parameter: as one text[] parameter
    // (unnest) the client escaped every quote of 4 MB of JSON into an array literal and the server
    // parsed it back, 80-120 ms for 10,000 spreadsheet rows against 20-25 ms this way.
    await tx`insert into document_block_chunks ${tx(batch.map((c) => ({
      tenant_id: tenantId, document_id: documentId, first_position: c.firstPosition, last_position: c.lastPosition, min_page: c.minPage, max_page: c.maxPage, blocks: c.json,
    })))}`
  }
}

/** The blocks of one chunk (its `blocks` text) as rows: a field a chunk leaves out is null. */
export function chunkRows(json: string): BlockRow[] {
  const rows = JSON.parse(json) as BlockRow[]
  for (const r of rows) {
    r.confidence ??= null
    r.cells ??= null
    r.sheet ??= null
  }
  return rows
}

/**
 * A document upload start as one statement (see runIdempotentStatement): the row (awaiting upload,
 * id and timestamps from this process's clock), its `document.status` case event and the
 * idempotency record in one round trip. The answer is the rendered row with `extra` (the presigned
 * upload) added, built here, so a stored replay is the very same text.
 */
export function documentCreate(sql: Sql, tenantId: string, input: {
  id: string; scenarioId: string; filename: string; contentType: string; sizeBytes: number; sha256: string | null; blobKey: string | null
}, extra: Record<string, unknown>, location: string): OneStatementCreate {
  const at = new Date()
  const row: DocumentRow = {
    tenant_id: tenantId, id: input.id, scenario_id: input.scenarioId, filename: input.filename, content_type: input.contentType,
    size_bytes: input.sizeBytes, checksum_sha256: input.sha256, status: 'awaiting_upload', blob_key: input.blobKey, bytes_verified: false,
    ingestion_generation: 0, page_count: null, block_count: null, page_summary: null, parent_document_id: null, document_type: null,
    document_type_confidence: null, checks: null, error_code: null, error_detail: null, uploaded_at: null, processed_at: null, created_at: at, updated_at: at,
  }
  return {
    status: 201,
    location,
    bodyText: sql`${JSON.stringify({ ...renderDocument(row), ...extra })}::text`,
    work: (claimed) => sql`
      insert into documents (tenant_id, id, scenario_id, filename, content_type, size_bytes, checksum_sha256, blob_key, created_at, updated_at)
      select ${tenantId}, ${input.id}, ${input.scenarioId}, ${input.filename}, ${input.contentType}, ${input.sizeBytes}, ${input.sha256}, ${input.blobKey}, ${at}, ${at}
      where ${claimed}`,
    more: caseEventParts(sql, { tenantId, scenarioId: input.scenarioId, type: 'document.status', data: { document_id: input.id, status: 'awaiting_upload' } }),
  }
}

/** Records that the bytes of a document still awaiting upload were checked (size, type, checksum). */
export async function markBytesVerified(sql: Tx, tenantId: string, documentId: string): Promise<void> {
  await sql`
    update documents set bytes_verified = true, uploaded_at = coalesce(uploaded_at, now()), updated_at = now()
    where tenant_id = ${tenantId} and id = ${documentId} and status = 'awaiting_upload'`
}

/** One page of a case's documents, newest first, optionally of one status (rows of `window`). */
export async function listDocuments(sql: Tx, tenantId: string, scenarioId: string, status: string | undefined, window: PageWindow): Promise<DocumentRow[]> {
  return sql<DocumentRow[]>`
    select * from documents
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc
    limit ${window.fetch}`
}

/** Chunks one read of a blocks page fetches at a time (a page of up to 200 blocks spans one or two). */
const CHUNKS_PER_READ = 2

/**
 * One page of a document's blocks in reading order, optionally of one page (rows of `window`, after
 * a position). Reads the chunks that can hold such blocks in order, a few at a time, until the page
 * is full, and decodes them here: expanded by the server (json_to_recordset), a 101-block page took
 * 6-7 ms against 1.4-2 ms this way (0.7-0.9 ms as rows), and a whole 10,000-row document 100-130 ms
 * against 30-40 ms (17-23 ms as rows).
 */
export async function listBlocks(sql: Tx, tenantId: string, documentId: string, page: number | undefined, window: PageWindow): Promise<BlockRow[]> {
  const after = window.after !== null ? Number(window.after) : -1
  const out: BlockRow[] = []
  for (let from = after; ;) {
    const chunks = await sql<{ last_position: number; blocks: string }[]>`
      select last_position, blocks from document_block_chunks
      where tenant_id = ${tenantId} and document_id = ${documentId} and last_position > ${from}
        ${page !== undefined ? sql`and min_page <= ${page} and max_page >= ${page}` : sql``}
      order by first_position
      limit ${CHUNKS_PER_READ}`
    for (const chunk of chunks) {
      for (const row of chunkRows(chunk.blocks)) {
        if (row.position > after && (page === undefined || row.page === page)) out.push(row)
        if (out.length === window.fetch) return out
      }
    }
    if (chunks.length < CHUNKS_PER_READ) return out
    from = chunks[chunks.length - 1]!.last_position
  }
}
