/**
 * Question sets and versions in the database: rows, their API shapes, the version ETag, and the
 * queries other parts need (the version an evaluation pins). Owns `question_sets` and
 * `question_set_versions`.
 */
import type { Sql, Tx } from '../db/connect'
import type { PageWindow } from '../http/pagination'
import type { OneStatementCreate } from '../http/idempotency'
import { verticalForNewSql } from '../workspaces/settings-store'
import type { Question } from '../../schemas/question-set'

/** A row of `question_sets` with its newest and newest published version. */
export interface QuestionSetRow {
  id: string
  name: string
  vertical: string | null
  created_at: Date
  updated_at: Date
  latest_version_id: string | null
  published_version_id: string | null
}

/** A row of `question_set_versions`. */
export interface VersionRow {
  id: string
  question_set_id: string
  number: number
  status: 'draft' | 'publishing' | 'published' | 'failed'
  questions: Question[]
  revision: number
  failure_reason: string | null
  published_at: Date | null
  created_at: Date
  updated_at: Date
}

/** The strong ETag of a version: changes with every edit and status change. */
export function versionEtag(row: Pick<VersionRow, 'id' | 'revision'>): string {
  return `"${row.id}.${row.revision}"`
}

/**
 * Whether an If-Match header value is satisfied by a current ETag (RFC 9110 strong comparison:
 * `*` matches any, a list matches if one entry is equal, weak tags never match). Null header: no
 * precondition.
 */
export function ifMatchHolds(header: string | null, current: string | null): boolean {
  if (header === null) return true
  if (current === null) return false
  if (header.trim() === '*') return true
  return header.split(',').map((s) => s.trim()).some((tag) => !tag.startsWith('W/') && tag === current)
}

/** The API shape of a question set. */
export function renderQuestionSet(row: QuestionSetRow) {
  return {
    id: row.id,
    name: row.name,
    ...(row.vertical !== null ? { vertical: row.vertical } : {}),
    ...(row.latest_version_id !== null ? { latest_version_id: row.latest_version_id } : {}),
    ...(row.published_version_id !== null ? { published_version_id: row.published_version_id } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** The API shape of a version. */
export function renderVersion(row: VersionRow) {
  return {
    id: row.id,
    question_set_id: row.question_set_id,
    number: row.number,
    status: row.status,
    questions: row.questions,
    etag: versionEtag(row),
    ...(row.failure_reason !== null ? { failure_reason: row.failure_reason } : {}),
    ...(row.published_at !== null ? { published_at: row.published_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Selects question sets with their newest and newest published version ids. */
export function selectQuestionSets(sql: Tx) {
  return sql`
    select s.id, s.name, s.vertical, s.created_at, s.updated_at,
      (select v.id from question_set_versions v where v.tenant_id = s.tenant_id and v.question_set_id = s.id
        order by v.number desc limit 1) as latest_version_id,
      (select v.id from question_set_versions v where v.tenant_id = s.tenant_id and v.question_set_id = s.id
        and v.status = 'published' order by v.published_at desc, v.number desc limit 1) as published_version_id
    from question_sets s`
}

/** Reads one question set of a workspace, or null. */
export async function findQuestionSet(sql: Tx, tenantId: string, id: string): Promise<QuestionSetRow | null> {
  const [row] = await sql<QuestionSetRow[]>`${selectQuestionSets(sql)} where s.tenant_id = ${tenantId} and s.id = ${id}`
  return row ?? null
}

/** Reads one version of a question set of a workspace, or null; `lock` holds its row for update. */
export async function findVersion(sql: Tx, tenantId: string, questionSetId: string, versionId: string, lock = false): Promise<VersionRow | null> {
  const [row] = await sql<VersionRow[]>`
    select id, question_set_id, number, status, questions, revision, failure_reason, published_at, created_at, updated_at
    from question_set_versions
    where tenant_id = ${tenantId} and question_set_id = ${questionSetId} and id = ${versionId}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Reads a version by id alone (within the workspace), or null. */
export async function findVersionById(sql: Tx, tenantId: string, versionId: string): Promise<VersionRow | null> {
  const [row] = await sql<VersionRow[]>`
    select id, question_set_id, number, status, questions, revision, failure_reason, published_at, created_at, updated_at
    from question_set_versions
    where tenant_id = ${tenantId} and id = ${versionId}`
  return row ?? null
}

/**
 * The version an evaluation pins: the newest published version of the named question set, or, with
 * none named, the newest published version among the sets bound to the case's vertical (null = the
 * default entry). Null when there is none.
 */
export async function newestPublishedVersion(sql: Tx, tenantId: string, by: { questionSetId: string } | { vertical: string | null }): Promise<VersionRow | null> {
  const [row] = await sql<VersionRow[]>`
    select v.id, v.question_set_id, v.number, v.status, v.questions, v.revision, v.failure_reason, v.published_at, v.created_at, v.updated_at
    from question_set_versions v
    join question_sets s on s.tenant_id = v.tenant_id and s.id = v.question_set_id
    where v.tenant_id = ${tenantId} and v.status = 'published'
      ${'questionSetId' in by ? sql`and s.id = ${by.questionSetId}` : by.vertical === null ? sql`and s.vertical is null` : sql`and s.vertical = ${by.vertical}`}
    order by v.published_at desc, v.id desc
    limit 1`
  return row ?? null
}

const VERSION_COLUMNS = (sql: Tx) => sql`id, question_set_id, number, status, questions, revision, failure_reason, published_at, created_at, updated_at`

/** Locks a question set's row until the transaction ends (serialises the creation of its versions). */
export async function lockQuestionSet(tx: Tx, tenantId: string, id: string): Promise<void> {
  await tx`select 1 from question_sets where tenant_id = ${tenantId} and id = ${id} for update`
}

/**
 * A question-set create as one statement (see runIdempotentStatement), like a case create: the row
 * is made here (id and timestamps from this process's clock), the vertical resolved in the
 * statement (the request's, else the workspace default), and the response body is the rendered set
 * (no versions yet) with that vertical spliced in, so a stored replay is the very same text.
 */
export function questionSetCreate(sql: Sql, tenantId: string, input: { name: string; vertical: string | null | undefined }): OneStatementCreate {
  const id = Bun.randomUUIDv7()
  const at = new Date()
  const vertical = verticalForNewSql(sql, tenantId, input.vertical)
  const text = JSON.stringify(renderQuestionSet({ id, name: input.name, vertical: null, created_at: at, updated_at: at, latest_version_id: null, published_version_id: null }))
  // The timestamps are the last members (renderQuestionSet's order), after where a vertical goes.
  const cut = text.lastIndexOf(',"created_at":')
  return {
    status: 201,
    location: `/v1/question-sets/${id}`,
    bodyText: sql`${text.slice(0, cut)}::text || coalesce(',"vertical":' || to_json(${vertical})::text, '') || ${text.slice(cut)}::text`,
    work: (claimed) => sql`
      insert into question_sets (tenant_id, id, name, vertical, created_at, updated_at)
      select ${tenantId}, ${id}, ${input.name}, ${vertical}, ${at}, ${at}
      where ${claimed}`,
  }
}

/** Marks a question set changed now (a version of it was created or edited). */
export async function touchQuestionSet(tx: Tx, tenantId: string, id: string): Promise<void> {
  await tx`update question_sets set updated_at = now() where tenant_id = ${tenantId} and id = ${id}`
}

/** One page of a workspace's question sets, newest first, optionally of one vertical (rows of `window`). */
export async function listQuestionSets(sql: Tx, tenantId: string, vertical: string | undefined, window: PageWindow): Promise<QuestionSetRow[]> {
  return sql<QuestionSetRow[]>`
    ${selectQuestionSets(sql)}
    where s.tenant_id = ${tenantId}
      ${window.after !== null ? sql`and s.id < ${window.after}` : sql``}
      ${vertical !== undefined ? sql`and s.vertical = ${vertical}` : sql``}
    order by s.id desc
    limit ${window.fetch}`
}

/** The newest version (highest number) of a question set, whatever its status, or null. */
export async function newestVersion(tx: Tx, tenantId: string, questionSetId: string): Promise<VersionRow | null> {
  const [latest] = await tx<VersionRow[]>`
    select ${VERSION_COLUMNS(tx)} from question_set_versions
    where tenant_id = ${tenantId} and question_set_id = ${questionSetId} order by number desc limit 1`
  return latest ?? null
}

/** Inserts draft version `number` of a question set with its questions. */
export async function insertVersion(tx: Tx, tenantId: string, questionSetId: string, number: number, questions: readonly Question[]): Promise<VersionRow> {
  const [row] = await tx<VersionRow[]>`
    insert into question_set_versions (tenant_id, id, question_set_id, number, questions)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${questionSetId}, ${number}, ${tx.json(questions as never)})
    returning ${VERSION_COLUMNS(tx)}`
  return row!
}

/** One page of a question set's versions, newest first, optionally of one status (rows of `window`). */
export async function listVersions(sql: Tx, tenantId: string, questionSetId: string, status: string | undefined, window: PageWindow): Promise<VersionRow[]> {
  return sql<VersionRow[]>`
    select ${VERSION_COLUMNS(sql)} from question_set_versions
    where tenant_id = ${tenantId} and question_set_id = ${questionSetId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc
    limit ${window.fetch}`
}

/** Replaces the questions of a draft version (a new revision, so a new ETag). */
export async function replaceDraftQuestions(tx: Tx, tenantId: string, versionId: string, questions: readonly Question[]): Promise<VersionRow> {
  const [updated] = await tx<VersionRow[]>`
    update question_set_versions
    set questions = ${tx.json(questions as never)}, revision = revision + 1, updated_at = now()
    where tenant_id = ${tenantId} and id = ${versionId}
    returning ${VERSION_COLUMNS(tx)}`
  return updated!
}

/** Moves a version to `publishing` (a new revision; an earlier failure reason is cleared). */
export async function markVersionPublishing(tx: Tx, tenantId: string, versionId: string): Promise<VersionRow> {
  const [row] = await tx<VersionRow[]>`
    update question_set_versions
    set status = 'publishing', failure_reason = null, revision = revision + 1, updated_at = now()
    where tenant_id = ${tenantId} and id = ${versionId}
    returning ${VERSION_COLUMNS(tx)}`
  return row!
}
