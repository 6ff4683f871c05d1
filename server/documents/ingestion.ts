/**
 * The `document_ingestion` job: reads a document's bytes with its type's adapter, cuts the text
 * into blocks and ends the document in `ready`, `ready_degraded`, `failed` or
 * `unsupported_pending`, notifying through finishTask in the same transaction as the status change
 * (the steps and writes every ingested file shares: ingestion-outcome.ts; documents add page
 * metering, attachments as child documents, and parse progress on the case's event stream).
 *
 * Reading and parsing happen in `prepare`, outside any transaction, so a long parse never holds a
 * database connection; the handler re-checks the document (a reingest may have superseded this
 * job: each job carries the generation it was enqueued for) and writes the outcome.
 */
import type { Tx } from '../db/connect'
import type { AppDeps } from '../deps'
import { Type, type Static } from '@sinclair/typebox'
import { defineJobKind, enqueue, enqueueMany, jobType } from '../../jobs/define'
import { Int } from '../../schemas/common'
import { readAll } from '../storage/blob-store'
import { charsetOf, findFileType, unreadReason } from './registry'
import type { ParseRequest } from './parsing/parser-process'
import { ParseCanceled, type ParseControl } from './parsing/parse-control'
import { appendCaseEvent } from '../events/log'
import { findDocumentById, insertChildDocuments, replaceBlocks, setDocumentStatus, type DocumentRow } from './store'
import { ingestionSteps, isCurrent, type IngestionOutcome, type IngestionOwner } from './ingestion-outcome'
import { nestingDepth, storeAttachments } from './attachments'
import { recordUsageEvents } from '../billing/ledger'
import { parseOverrides, readPolicy } from '../operator/evaluation-policy'
import { recordDocumentFindings } from '../evaluation/document-findings'
import { classifyDocument } from '../evaluation/document-types'
import { typeDocument, type TypedDocument } from '../evaluation/model-typing'
import { modelSettings } from '../authoring/generation-run'
import { budgetReached, costMicro } from '../billing/budgets'
import type { Block } from './blocks'
import { StageClock } from './parsing/stage-times'

/** The job kind name (also the task kind of its notifications). */
export const DOCUMENT_INGESTION = 'document_ingestion'

/** The document_ingestion job's type (its payload names the row the job works on). */
export const DocumentIngestionJob = jobType({
  name: DOCUMENT_INGESTION,
  payload: Type.Object({ documentId: Type.String(), generation: Int() }),
  tenantScoped: true,
})

/** The payload of an ingestion job. */
export type IngestionPayload = Static<typeof DocumentIngestionJob.payload>

/** Enqueues the ingestion of a document (in the caller's transaction, after its status moved to processing). */
export async function enqueueIngestion(tx: Tx, doc: DocumentRow): Promise<string> {
  const payload: IngestionPayload = { documentId: doc.id, generation: doc.ingestion_generation }
  return enqueue(tx, DocumentIngestionJob, { tenantId: doc.tenant_id, payload })
}

/**
 * Parses a document's bytes in the parser pool (another process, within the SVC_PARSE_* limits).
 * Throws only for a transient failure: bytes unreadable from the store, or a parser crash.
 */
export async function parseDocument(doc: Pick<DocumentRow, 'id' | 'content_type' | 'blob_key'>, deps: Pick<AppDeps, 'blobs' | 'parser'>, control?: ParseControl): Promise<IngestionOutcome> {
  const type = findFileType(doc.content_type)
  if (!type?.adapter) return { kind: 'unsupported', reason: unreadReason(doc.content_type) }
  // A local blob is handed over as its file (linked or copied into the parser's spool by the pool):
  // reading it into the service only to write it out again took 50-110 ms for a 5 MB file under load.
  const local = doc.blob_key && deps.blobs.localPath ? await deps.blobs.localPath(doc.blob_key) : null
  const bytes = local ? { path: local } : doc.blob_key ? await readAll(deps.blobs, doc.blob_key) : null
  if (!bytes) throw new Error(`the bytes of document ${doc.id} are not in the blob store`)
  // The declared charset travels to the parser (the text adapters decode with it).
  const charset = charsetOf(doc.content_type)
  const parseType: ParseRequest['type'] = { adapter: type.adapter, label: type.label, ...(charset ? { charset } : {}) }
  return deps.parser.parse(doc.id, parseType, bytes, control)
}

/** How often a running parse checks that its document was not reingested or deleted meanwhile. */
const SUPERSEDED_CHECK_MS = 1000

/**
 * Parses a case document with progress on its case's event stream (`document.progress`, `page` of
 * `pages`) and stops the parse when a reingest supersedes it (the outcome is then `skip`).
 */
async function parseFollowed(doc: DocumentRow, generation: number, deps: AppDeps): Promise<IngestionOutcome> {
  const abort = new AbortController()
  const watch = setInterval(() => {
    findDocumentById(deps.sql, doc.tenant_id, doc.id)
      .then((now) => { if (!isCurrent(now, generation)) abort.abort() })
      .catch(() => {}) // the database is away: keep parsing; the handler re-checks before writing
  }, SUPERSEDED_CHECK_MS)
  const onProgress = (page: number, pages: number) => {
    deps.sql.begin((tx) => appendCaseEvent(tx, { tenantId: doc.tenant_id, scenarioId: doc.scenario_id, type: 'document.progress', data: { document_id: doc.id, page, pages } }))
      .catch(() => {}) // progress is a courtesy: never fail a parse for it
  }
  const clock = deps.log.enabled('debug') ? new StageClock() : undefined
  try {
    // The workspace's evaluation policy may read fewer pages, or run no OCR.
    const limits = parseOverrides(await readPolicy(deps.sql, doc.tenant_id))
    clock?.mark('policy_read')
    const started = performance.now()
    const outcome = await parseDocument(doc, deps, { onProgress, signal: abort.signal, limits, workspace: doc.tenant_id })
    clock?.mark('parse')
    if ((outcome.kind === 'parsed' || outcome.kind === 'unreadable') && outcome.pages) deps.metrics.ingestionPages(outcome.pages, (performance.now() - started) / 1000)
    if (outcome.kind !== 'parsed') return outcome
    // A type the rules are unsure of goes to the model, when one is configured (outside any transaction).
    const typed = await typeDocumentBlocks(doc, outcome.blocks, deps, abort.signal)
    clock?.mark('typing')
    const { attachments, ...rest } = { ...outcome, typed, ...(clock ? { clock } : {}) }
    if (!attachments?.length) return rest
    // Attachments: stored now (outside any transaction), inserted with the parent's outcome.
    const limit = deps.config.parse.emailMaxDepth
    if ((await nestingDepth(deps.sql, doc, limit)) >= limit) {
      const [one, many, parent] = doc.content_type === 'application/zip' ? ['member', 'members', 'a ZIP'] : ['attachment', 'attachments', 'an email']
      const note = `${attachments.length} ${attachments.length === 1 ? one : many} of ${parent} nested ${limit} deep ${attachments.length === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_DEPTH)`
      return { ...rest, degraded: true, notes: [...rest.notes, note] }
    }
    return { ...rest, children: await storeAttachments(deps, doc, attachments) }
  } catch (e) {
    if (e instanceof ParseCanceled || abort.signal.aborted) return { kind: 'skip' }
    throw e
  } finally {
    clearInterval(watch)
  }
}

/**
 * A parsed document's type: the rules' (document-types.ts), or the model's when one is configured
 * and the rules are unsure (model-typing.ts: one bounded call; a vendor error leaves the rules' type
 * with a note). Throws the signal's reason when a reingest supersedes the parse meanwhile.
 */
async function typeDocumentBlocks(doc: DocumentRow, blocks: readonly Block[], deps: AppDeps, signal: AbortSignal): Promise<TypedDocument> {
  const rules = classifyDocument(doc.content_type, blocks)
  const settings = deps.config.modelUrl ? modelSettings(deps.config) : null
  return typeDocument(settings, doc.content_type, blocks, rules, {
    signal, budgetReached: () => budgetReached(deps.sql, doc.tenant_id), price: (i, o) => costMicro(deps.config, i, o),
  })
}

/** Case documents as an owner of ingested files; after a parse, the type and checks are recorded, pages are metered and attachments become child documents. */
const documentOwner: IngestionOwner<DocumentRow> = {
  taskKind: 'document_ingestion',
  failedErrorCode: 'document_ingestion_failed',
  passwordErrorCode: 'document_password_protected',
  find: findDocumentById,
  parse: parseFollowed,
  resourcePath: (doc) => `/v1/scenarios/${doc.scenario_id}/documents/${doc.id}`,
  replaceBlocks,
  setStatus: setDocumentStatus,
  async afterParsed(tx, doc, outcome) {
    // The document's type from its content and the checks that type allows (issue 27).
    // The findings' update and the metering go out together (pipelined on the transaction's
    // connection; neither reads what the other writes): one round trip instead of two.
    await Promise.all([
      recordDocumentFindings(tx, doc, outcome.blocks, outcome.typed, DOCUMENT_INGESTION),
      recordUsageEvents(tx, doc.tenant_id, (['text_layer', 'ocr'] as const).map((source) => ({
        meter: source === 'ocr' ? 'pages_ocr' as const : 'pages_text_layer' as const,
        quantity: outcome.pages[source], sourceKind: DOCUMENT_INGESTION, sourceId: doc.id, sourceRef: `generation:${doc.ingestion_generation}`,
      }))),
    ])
    outcome.clock?.mark('findings')
    const children = await insertChildDocuments(tx, doc, outcome.children ?? [])
    if (children.length) await enqueueMany(tx, DocumentIngestionJob, children.map((c) => ({ tenantId: c.tenant_id, payload: { documentId: c.id, generation: c.ingestion_generation } })))
  },
}

const steps = ingestionSteps(documentOwner)
const target = (job: { tenantId: string; payload: IngestionPayload }) => ({ tenantId: job.tenantId, id: job.payload.documentId, generation: job.payload.generation })

/** The job kind (registered in server/job-kinds.ts). */
export function documentIngestionJobKind() {
  return defineJobKind({
    ...DocumentIngestionJob,
    maxAttempts: 5,
    prepare: (job, deps) => steps.prepare(target(job), deps),
    async handler(tx, job, deps) {
      const prepared = job.prepared
      if (prepared?.kind === 'parsed') prepared.clock?.mark('handler_start')
      await steps.handle(tx, target(job), prepared, deps)
      // Where the time between `complete` and `ready` went (SVC_LOG_LEVEL=debug; durations only).
      if (prepared?.kind === 'parsed' && prepared.clock) {
        const { clock, stages } = prepared
        if (stages) clock.add(stages)
        deps.log.debug('document ingestion stages', { document_id: job.payload.documentId, blocks: prepared.blocks.length, ...clock.fields() })
      }
    },
    onGiveUp: (tx, job, deps) => steps.giveUp(tx, target(job), job.giveUpReason, deps.links),
  })
}
