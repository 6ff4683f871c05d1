/**
 * Question groups and their guideline sources in the database: rows, API shapes, status changes and
 * blocks. Owns `question_groups`, `guidelines` and `guideline_blocks`. A guideline has exactly the
 * upload lifecycle of a case document, so it registers itself as an upload target: the one upload
 * route, byte checks and blob store serve both.
 */
import type { StoredPageSummary } from '../documents/parsing/pages'
import type { Tx } from '../db/connect'
import type { Block } from '../documents/blocks'
import { claimUploadIn, type UploadTargetKind } from '../documents/upload-targets'
import { renderUploadedFile, statusAssignments, type StatusFields } from '../documents/store'

/** A row of `question_groups` (with its number of guideline sources). */
export interface GroupRow { id: string; name: string; description: string | null; guideline_count: number | string; created_at: Date; updated_at: Date }

/** The API shape of a question group. */
export function renderGroup(row: GroupRow) {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    guideline_count: Number(row.guideline_count),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Selects groups with their guideline counts. */
export const selectGroups = (sql: Tx) => sql`
  select g.id, g.name, g.description, g.created_at, g.updated_at,
    (select count(*) from guidelines s where s.tenant_id = g.tenant_id and s.question_group_id = g.id) as guideline_count
  from question_groups g`

/** Reads one group of a workspace, or null. */
export async function findGroup(sql: Tx, tenantId: string, id: string): Promise<GroupRow | null> {
  const [row] = await sql<GroupRow[]>`${selectGroups(sql)} where g.tenant_id = ${tenantId} and g.id = ${id}`
  return row ?? null
}

/** Guideline status values (those of a document). */
export type GuidelineStatus = 'awaiting_upload' | 'processing' | 'ready' | 'ready_degraded' | 'failed' | 'unsupported_pending'

/** A row of `guidelines`. */
export interface GuidelineRow {
  tenant_id: string
  id: string
  question_group_id: string
  replaces_guideline_id: string | null
  filename: string
  content_type: string
  size_bytes: string | number
  checksum_sha256: string | null
  status: GuidelineStatus
  blob_key: string | null
  bytes_verified: boolean
  ingestion_generation: number
  page_count: number | null
  block_count: number | null
  page_summary: StoredPageSummary | null
  error_code: string | null
  error_detail: string | null
  uploaded_at: Date | null
  processed_at: Date | null
  created_at: Date
  updated_at: Date
}

/** The API shape of a guideline source; optional fields absent when unset. */
export function renderGuideline(row: GuidelineRow) {
  return {
    id: row.id,
    question_group_id: row.question_group_id,
    ...(row.replaces_guideline_id !== null ? { replaces_guideline_id: row.replaces_guideline_id } : {}),
    ...renderUploadedFile(row),
  }
}

/** The REST path of a guideline source (links.resource of its ingestion task). */
export const guidelinePath = (groupId: string, guidelineId: string) => `/v1/question-groups/${groupId}/guidelines/${guidelineId}`

/** Reads a guideline by workspace and id, or null; `lock` holds its row. */
export async function findGuideline(sql: Tx, tenantId: string, id: string, lock = false): Promise<GuidelineRow | null> {
  const [row] = await sql<GuidelineRow[]>`
    select * from guidelines where tenant_id = ${tenantId} and id = ${id} ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Reads a guideline of a group, or null (another group's looks absent). */
export async function findGroupGuideline(sql: Tx, tenantId: string, groupId: string, id: string, lock = false): Promise<GuidelineRow | null> {
  const row = await findGuideline(sql, tenantId, id, lock)
  return row && row.question_group_id === groupId ? row : null
}

/** Inserts a question group. */
export async function insertGroup(tx: Tx, tenantId: string, input: { id: string; name: string; description: string | null }): Promise<void> {
  await tx`insert into question_groups (tenant_id, id, name, description) values (${tenantId}, ${input.id}, ${input.name}, ${input.description})`
}

/** Marks a question group changed now (a guideline source was added to it). */
export async function touchGroup(tx: Tx, tenantId: string, groupId: string): Promise<void> {
  await tx`update question_groups set updated_at = now() where tenant_id = ${tenantId} and id = ${groupId}`
}

/** One page of a workspace's question groups, newest first (rows of `window`). */
export async function listGroups(sql: Tx, tenantId: string, window: { after: string | null; fetch: number }): Promise<GroupRow[]> {
  return sql<GroupRow[]>`
    ${selectGroups(sql)}
    where g.tenant_id = ${tenantId} ${window.after !== null ? sql`and g.id < ${window.after}` : sql``}
    order by g.id desc limit ${window.fetch}`
}

/** Inserts a guideline source awaiting its upload (the route has presigned the upload of `blobKey`). */
export async function insertGuideline(tx: Tx, tenantId: string, input: {
  id: string; groupId: string; replacesGuidelineId: string | null; filename: string; contentType: string; sizeBytes: number
  sha256: string | null; blobKey: string | null
}): Promise<GuidelineRow> {
  const [row] = await tx<GuidelineRow[]>`
    insert into guidelines (tenant_id, id, question_group_id, replaces_guideline_id, filename, content_type, size_bytes, checksum_sha256, blob_key)
    values (${tenantId}, ${input.id}, ${input.groupId}, ${input.replacesGuidelineId}, ${input.filename}, ${input.contentType}, ${input.sizeBytes}, ${input.sha256}, ${input.blobKey})
    returning *`
  return row!
}

/** Records that the bytes of a guideline still awaiting upload were checked. */
export async function markGuidelineBytesVerified(sql: Tx, tenantId: string, guidelineId: string): Promise<void> {
  await sql`
    update guidelines set bytes_verified = true, uploaded_at = coalesce(uploaded_at, now()), updated_at = now()
    where tenant_id = ${tenantId} and id = ${guidelineId} and status = 'awaiting_upload'`
}

/** One page of a group's guideline sources, newest first, optionally of one status (rows of `window`). */
export async function listGuidelines(sql: Tx, tenantId: string, groupId: string, status: string | undefined, window: { after: string | null; fetch: number }): Promise<GuidelineRow[]> {
  return sql<GuidelineRow[]>`
    select * from guidelines
    where tenant_id = ${tenantId} and question_group_id = ${groupId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc limit ${window.fetch}`
}

/** One page of a guideline's blocks in reading order, optionally of one page (rows of `window`, after a position). */
export async function listGuidelineBlocks(sql: Tx, tenantId: string, guidelineId: string, page: number | undefined, window: { after: string | null; fetch: number }): Promise<GuidelineBlockRow[]> {
  const after = window.after !== null ? Number(window.after) : null
  return sql<GuidelineBlockRow[]>`
    select id, guideline_id, position, page, kind, text, char_start, char_end, source, confidence
    from guideline_blocks
    where tenant_id = ${tenantId} and guideline_id = ${guidelineId}
      ${after !== null ? sql`and position > ${after}` : sql``}
      ${page !== undefined ? sql`and page = ${page}` : sql``}
    order by position limit ${window.fetch}`
}

/** Fields a status change may set: the same as a case document's. */
export type GuidelineStatusFields = StatusFields

/** Moves a guideline to a status in the caller's transaction; returns the updated row. */
export async function setGuidelineStatus(tx: Tx, row: GuidelineRow, status: GuidelineStatus, fields: GuidelineStatusFields = {}): Promise<GuidelineRow> {
  const [updated] = await tx<GuidelineRow[]>`
    update guidelines set ${statusAssignments(tx, status, row, fields)}
    where tenant_id = ${row.tenant_id} and id = ${row.id}
    returning *`
  await tx`update question_groups set updated_at = now() where tenant_id = ${row.tenant_id} and id = ${row.question_group_id}`
  return updated!
}

/** Replaces a guideline's blocks in the caller's transaction. */
export async function replaceGuidelineBlocks(tx: Tx, tenantId: string, guidelineId: string, blocks: readonly Block[]): Promise<void> {
  await tx`delete from guideline_blocks where tenant_id = ${tenantId} and guideline_id = ${guidelineId}`
  for (let i = 0; i < blocks.length; i += 1000) {
    const rows = blocks.slice(i, i + 1000).map((b) => ({
      tenant_id: tenantId, guideline_id: guidelineId, position: b.position, id: b.id, page: b.page, kind: b.kind,
      text: b.text, char_start: b.charStart, char_end: b.charEnd, source: b.source, confidence: b.confidence,
    }))
    await tx`insert into guideline_blocks ${tx(rows, 'tenant_id', 'guideline_id', 'position', 'id', 'page', 'kind', 'text', 'char_start', 'char_end', 'source', 'confidence')}`
  }
}

/** A block of a guideline as generation and diffs read it. */
export interface GuidelineBlockRow { id: string; guideline_id: string; position: number; page: number; kind: string; text: string; char_start: number; char_end: number; source: string; confidence: number | null }

/** Every block of a guideline in reading order. */
export async function guidelineBlocks(sql: Tx, tenantId: string, guidelineId: string): Promise<GuidelineBlockRow[]> {
  return sql<GuidelineBlockRow[]>`
    select id, guideline_id, position, page, kind, text, char_start, char_end, source, confidence
    from guideline_blocks where tenant_id = ${tenantId} and guideline_id = ${guidelineId}
    order by position`
}

/** The API shape of a guideline block. */
export function renderGuidelineBlock(row: GuidelineBlockRow) {
  return {
    id: row.id, guideline_id: row.guideline_id, position: row.position, page: row.page, kind: row.kind, text: row.text, char_start: row.char_start, char_end: row.char_end,
    source: row.source, ...(row.confidence !== null ? { confidence: Math.round(row.confidence) } : {}),
  }
}

/** Guideline sources as targets of the shared upload route. */
export const guidelineUploadTarget: UploadTargetKind = {
  name: 'guideline',
  find: (sql, tenantId, id) => findGuideline(sql, tenantId, id),
  claim: claimUploadIn('guidelines'),
}

