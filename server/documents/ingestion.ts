/**
 * The `document_ingestion` job: reads a document's bytes with its type's adapter, cuts the text
 * into blocks and ends the document in `ready`, `ready_degraded`, `failed` or
 * `unsupported_pending`, notifying through finishTask in the same transaction as the status change.
 *
 * Reading and parsing happen in `prepare`, outside any transaction, so a long parse never holds a
 * database connection; the handler re-checks the document (a reingest may have superseded this
 * job: each job carries the generation it was enqueued for) and writes the outcome.
 */
import type { Tx } from '../db/connect'
import type { AppDeps } from '../deps'
import type { ClaimedJob } from '../../jobs/types'
import { Type, type Static } from '@sinclair/typebox'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import { Int } from '../../schemas/common'
import { finishTask } from '../notifications/finish'
import { readAll } from '../storage/blob-store'
import { findFileType } from './registry'
import type { ParseOutcome } from './parsing/extract'
import { ParseCanceled, type ParseControl } from './parsing/parser-pool'
import { appendCaseEvent } from '../events/log'
import { findDocumentById, insertChildDocuments, replaceBlocks, setDocumentStatus, type ChildDocument, type DocumentRow } from './store'
import { nestingDepth, storeAttachments } from './attachments'
import { recordUsageEvents } from '../billing/ledger'
import { parseOverrides, readPolicy } from '../operator/evaluation-policy'

/** The job kind name (also the task kind of its notifications). */
export const DOCUMENT_INGESTION = 'document_ingestion'

/** The document_ingestion job's type (its payload names the row the job works on). */
export const DocumentIngestionJob = jobType({
  name: DOCUMENT_INGESTION,
  payload: Type.Object({ documentId: Type.String(), generation: Int() }),
  tenantScoped: true,
})

/** What the parse found, handed from prepare to the handler. */
export type IngestionOutcome = { kind: 'skip' } | { kind: 'unsupported'; reason?: string } | (ParseOutcome & { children?: ChildDocument[] })

/** The payload of an ingestion job. */
export type IngestionPayload = Static<typeof DocumentIngestionJob.payload>

/** Enqueues the ingestion of a document (in the caller's transaction, after its status moved to processing). */
export async function enqueueIngestion(tx: Tx, doc: DocumentRow): Promise<string> {
  const payload: IngestionPayload = { documentId: doc.id, generation: doc.ingestion_generation }
  return enqueue(tx, DocumentIngestionJob, { tenantId: doc.tenant_id, payload })
}

const current = (doc: DocumentRow | null, payload: IngestionPayload): doc is DocumentRow =>
  doc !== null && doc.status === 'processing' && doc.ingestion_generation === payload.generation

/**
 * Parses a document's bytes in the parser pool (another process, within the SVC_PARSE_* limits).
 * Throws only for a transient failure: bytes unreadable from the store, or a parser crash.
 */
export async function parseDocument(doc: Pick<DocumentRow, 'id' | 'content_type' | 'blob_key'>, deps: Pick<AppDeps, 'blobs' | 'parser'>, control?: ParseControl): Promise<IngestionOutcome> {
  const type = findFileType(doc.content_type)
  if (!type?.adapter) return { kind: 'unsupported', reason: type?.unsupportedReason }
  const bytes = doc.blob_key ? await readAll(deps.blobs, doc.blob_key) : null
  if (!bytes) throw new Error(`the bytes of document ${doc.id} are not in the blob store`)
  return deps.parser.parse(doc.id, { adapter: type.adapter, label: type.label }, bytes, control)
}

/** How often a running parse checks that its document was not reingested or deleted meanwhile. */
const SUPERSEDED_CHECK_MS = 1000

/**
 * Parses a case document with progress on its case's event stream (`document.progress`, `page` of
 * `pages`) and stops the parse when a reingest supersedes it (the outcome is then `skip`).
 */
async function parseFollowed(doc: DocumentRow, payload: IngestionPayload, deps: AppDeps): Promise<IngestionOutcome> {
  const abort = new AbortController()
  const watch = setInterval(() => {
    findDocumentById(deps.sql, doc.tenant_id, doc.id)
      .then((now) => { if (!current(now, payload)) abort.abort() })
      .catch(() => {}) // the database is away: keep parsing; the handler re-checks before writing
  }, SUPERSEDED_CHECK_MS)
  const onProgress = (page: number, pages: number) => {
    deps.sql.begin((tx) => appendCaseEvent(tx, { tenantId: doc.tenant_id, scenarioId: doc.scenario_id, type: 'document.progress', data: { document_id: doc.id, page, pages } }))
      .catch(() => {}) // progress is a courtesy: never fail a parse for it
  }
  try {
    // The workspace's evaluation policy may read fewer pages, or run no OCR.
    const limits = parseOverrides(await readPolicy(deps.sql, doc.tenant_id))
    const started = performance.now()
    const outcome = await parseDocument(doc, deps, { onProgress, signal: abort.signal, limits })
    if ((outcome.kind === 'parsed' || outcome.kind === 'unreadable') && outcome.pages) deps.metrics.ingestionPages(outcome.pages, (performance.now() - started) / 1000)
    if (outcome.kind !== 'parsed' || !outcome.attachments?.length) return outcome
    // Attachments: stored now (outside any transaction), inserted with the parent's outcome.
    const { attachments, ...rest } = outcome
    const limit = deps.config.parse.emailMaxDepth
    if ((await nestingDepth(deps.sql, doc, limit)) >= limit) {
      const note = `${attachments.length} attachment${attachments.length === 1 ? '' : 's'} of an email nested ${limit} deep ${attachments.length === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_DEPTH)`
      return { ...rest, degraded: true, notes: [...rest.notes, note] }
    }
    return { ...rest, children: await storeAttachments(deps, doc, attachments) }
  } catch (e) {
    if (e instanceof ParseCanceled) return { kind: 'skip' }
    throw e
  } finally {
    clearInterval(watch)
  }
}

/** Why a given-up ingestion failed, as the document shows it (content-free). */
export function giveUpReason(job: ClaimedJob): string {
  return job.giveUpReason ?? 'the stored bytes could not be read'
}

const resourcePath = (doc: DocumentRow) => `/v1/scenarios/${doc.scenario_id}/documents/${doc.id}`

/** Writes an outcome: blocks, status, case event and notifications, in the job's transaction. */
export async function applyOutcome(tx: Tx, doc: DocumentRow, outcome: IngestionOutcome): Promise<void> {
  const base = { tenantId: doc.tenant_id, taskKind: DOCUMENT_INGESTION as 'document_ingestion', taskId: doc.id, resourcePath: resourcePath(doc) }
  switch (outcome.kind) {
    case 'skip':
      return
    case 'unsupported':
      await replaceBlocks(tx, doc.tenant_id, doc.id, [])
      await setDocumentStatus(tx, doc, 'unsupported_pending', { errorCode: 'unsupported_pending', errorDetail: outcome.reason ?? null, pageCount: null, blockCount: 0, pages: null, processed: true })
      await finishTask(tx, { ...base, result: 'unsupported_pending' })
      return
    case 'unreadable':
      await replaceBlocks(tx, doc.tenant_id, doc.id, [])
      await setDocumentStatus(tx, doc, 'failed', { errorCode: 'document_ingestion_failed', errorDetail: outcome.reason, pageCount: outcome.pages?.total ?? null, blockCount: 0, pages: outcome.pages ?? null, processed: true })
      await finishTask(tx, { ...base, result: 'failed', reason: outcome.reason })
      return
    case 'parsed':
      await replaceBlocks(tx, doc.tenant_id, doc.id, outcome.blocks)
      await setDocumentStatus(tx, doc, outcome.degraded ? 'ready_degraded' : 'ready', {
        pageCount: outcome.pageCount,
        blockCount: outcome.blocks.length,
        pages: outcome.pages,
        errorDetail: outcome.degraded ? outcome.notes.join('; ') || 'part of the file could not be read' : null,
        processed: true,
      })
      await recordUsageEvents(tx, doc.tenant_id, (['text_layer', 'ocr'] as const).map((source) => ({
        meter: source === 'ocr' ? 'pages_ocr' as const : 'pages_text_layer' as const,
        quantity: outcome.pages[source], sourceKind: DOCUMENT_INGESTION, sourceId: doc.id, sourceRef: `generation:${doc.ingestion_generation}`,
      })))
      await finishTask(tx, { ...base, result: 'succeeded', degraded: outcome.degraded })
      for (const child of await insertChildDocuments(tx, doc, outcome.children ?? [])) await enqueueIngestion(tx, child)
  }
}

/** The job kind (registered in server/job-kinds.ts). */
export function documentIngestionJobKind() {
  return defineJobKind({
    ...DocumentIngestionJob,
    maxAttempts: 5,
    async prepare(job, deps): Promise<IngestionOutcome> {
      const payload = job.payload
      const doc = await findDocumentById(deps.sql, job.tenantId, payload.documentId)
      if (!current(doc, payload)) return { kind: 'skip' }
      return parseFollowed(doc, payload, deps)
    },
    async handler(tx, job, deps) {
      const payload = job.payload
      const doc = await findDocumentById(tx, job.tenantId, payload.documentId, true)
      if (!current(doc, payload)) return // finished already, or superseded by a reingest
      const outcome = (job.prepared as IngestionOutcome | undefined) ?? await parseFollowed(doc, payload, deps)
      await applyOutcome(tx, doc, outcome.kind === 'skip' ? await parseFollowed(doc, payload, deps) : outcome)
    },
    async onGiveUp(tx, job) {
      const payload = job.payload
      const doc = await findDocumentById(tx, job.tenantId, payload.documentId, true)
      if (!current(doc, payload)) return
      await applyOutcome(tx, doc, { kind: 'unreadable', reason: giveUpReason(job) })
    },
  })
}
