/**
 * Documents of a case: upload start (a presigned PUT), complete (begins ingestion), reingest,
 * list, read, blocks and download. The routes over `documents` and `document_blocks`, whose SQL is
 * the store's (server/documents/store.ts); the bytes themselves arrive at the upload URL
 * (uploads.ts or the S3 bucket).
 */
import { Elysia, t } from 'elysia'
import { create as contentDisposition } from 'content-disposition'
import type { AppDeps } from '../deps'
import type { Principal } from '../auth/principal'
import { accessControl, ANY_ROLE, CASE_WRITERS, tenantOf } from '../auth/access'
import { ProblemError, problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, runIdempotentStatement, replyWith } from '../http/idempotency'
import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { ScenarioParams, PageOf } from '../../schemas/common'
import { Block, BlockListQuery, Document, DocumentComplete, DocumentCreate, DocumentCreated, DocumentListQuery, DocumentParams } from '../../schemas/document'
import { findScenario } from '../scenarios/store'
import { essenceOf, findFileType, storedContentType } from '../documents/registry'
import { tooLarge, verifyStoredBytes } from '../documents/intake'
import { enqueueIngestion, DOCUMENT_INGESTION } from '../documents/ingestion'
import {
  documentCreate, findDocument, listBlocks, listDocuments, markBytesVerified, renderBlock, renderDocument, setDocumentStatus, type DocumentStatus,
} from '../documents/store'
import { UPLOAD_URL_TTL_SECONDS } from '../storage/blob-store'
import { withinStallBound } from '../storage/stall-bound'
import { subscribeInline, type InlineNotification } from '../notifications/inline'
import { checkFilename, neutraliseFilename } from '../documents/filenames'

const READ = { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true, breakGlass: true } as const
const WRITE = { roles: CASE_WRITERS, scopes: ['scenarios:write'] } as const
const TAGS = ['Documents']

/** Statuses a document can be re-read from. */
/** A document may be read again once it has bytes; a reingest of one still processing cancels the running parse. */
const REINGESTABLE: readonly DocumentStatus[] = ['processing', 'ready', 'ready_degraded', 'failed', 'unsupported_pending']

const documentPath = (scenarioId: string, documentId: string) => `/v1/scenarios/${scenarioId}/documents/${documentId}`

/** Document routes. */
export function documentRoutes(deps: AppDeps) {
  const { sql, cursors, blobs, config } = deps

  /** Moves a document to processing and enqueues its ingestion: the work of complete and reingest. */
  const startIngestion = async (principal: Principal, tenantId: string, params: { scenarioId: string; documentId: string }, body: { notifications?: InlineNotification[] } | null | undefined, request: Request, path: string, allowed: readonly DocumentStatus[]) =>
    runIdempotent({ sql, tenantId, method: 'POST', path, body: body ?? null, key: idempotencyKeyOf(request) }, async (tx) => {
      const doc = await findDocument(tx, tenantId, params.scenarioId, params.documentId, true)
      if (!doc) throw problems.notFound('document')
      if (!allowed.includes(doc.status)) {
        throw problems.conflict(doc.status === 'processing' ? 'The document is already being processed.' : `A document in status ${doc.status} cannot do this.`)
      }
      if (doc.status === 'awaiting_upload' && (!doc.blob_key || !doc.bytes_verified)) {
        throw problems.conflict('The document bytes have not been uploaded yet; PUT them to the upload URL first.')
      }
      await consumeRate(deps, tenantId, 'unit', tx)
      const updated = await setDocumentStatus(tx, doc, 'processing', { bumpGeneration: true, errorCode: null, errorDetail: null })
      await subscribeInline(tx, principal, { tenantId, taskKind: DOCUMENT_INGESTION, taskId: doc.id, items: body?.notifications })
      await enqueueIngestion(tx, updated)
      return { status: 202, body: renderDocument(updated), location: documentPath(doc.scenario_id, doc.id) }
    })

  return new Elysia({ name: 'documents' })
    .use(accessControl(deps.authenticate))
    .post('/v1/scenarios/:scenarioId/documents', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      checkFilename(body.filename)
      const type = findFileType(body.content_type)
      if (!(await findScenario(sql, tenantId, params.scenarioId))) throw problems.notFound('scenario')
      if (!type) throw new ProblemError('unsupported_media_type', `content_type ${essenceOf(body.content_type)} is not in the file-type registry (GET /v1/file-types).`)
      if (body.size_bytes > config.maxUploadBytes) throw tooLarge(config.maxUploadBytes)
      // One statement, one round trip: the idempotency record, the document, its case event and the
      // answer (the presigned URL is a signature computed here; a replay answers the stored one).
      const id = Bun.randomUUIDv7()
      const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + UPLOAD_URL_TTL_SECONDS * 1000)
      const sha256 = body.checksum_sha256?.toLowerCase()
      const upload = await blobs.presignUpload({ tenantId, documentId: id, contentType: type.contentType, size: body.size_bytes, sha256, expiresAt })
      const result = await runIdempotentStatement({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, documentCreate(sql, tenantId, {
        id, scenarioId: params.scenarioId, filename: body.filename, contentType: storedContentType(type, body.content_type), sizeBytes: body.size_bytes,
        sha256: sha256 ?? null, blobKey: upload.key ?? null,
      }, { upload: { method: upload.method, url: upload.url, headers: upload.headers, expires_at: expiresAt.toISOString() } }, documentPath(params.scenarioId, id)))
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: WRITE,
      params: ScenarioParams,
      body: DocumentCreate,
      detail: {
        summary: 'Start a document upload: returns the document and a presigned PUT URL',
        tags: TAGS,
        responses: responses({ 201: DocumentCreated }, [...BODY_PROBLEMS, ...PATH_PROBLEMS, 'idempotency_conflict', 'conflict']),
      },
    })
    .post('/v1/scenarios/:scenarioId/documents/:documentId/complete', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const doc = await findDocument(sql, tenantId, params.scenarioId, params.documentId)
      if (!doc) throw problems.notFound('document')
      // Bytes that reached the store without passing through this service (S3) are checked here,
      // before the transaction: a refusal deletes them and leaves the document awaiting upload.
      if (doc.status === 'awaiting_upload' && !doc.bytes_verified) {
        await verifyStoredBytes(blobs, doc, config.maxUploadBytes)
        await markBytesVerified(sql, tenantId, doc.id)
      }
      const result = await startIngestion(principal, tenantId, params, body, request, path, ['awaiting_upload'])
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: WRITE,
      params: DocumentParams,
      body: t.Optional(DocumentComplete),
      detail: {
        summary: 'Finalize an upload and begin ingestion (unit-of-work rate class)',
        tags: TAGS,
        responses: responses({ 202: Document }, [...BODY_PROBLEMS, ...PATH_PROBLEMS, ...RATE_PROBLEMS, 'conflict', 'idempotency_conflict', 'payload_too_large']),
      },
    })
    .post('/v1/scenarios/:scenarioId/documents/:documentId/reingest', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const result = await startIngestion(principal, tenantId, params, body, request, path, REINGESTABLE)
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: WRITE,
      params: DocumentParams,
      body: t.Optional(DocumentComplete),
      detail: {
        summary: 'Read a processed document again (unit-of-work rate class)',
        tags: TAGS,
        responses: responses({ 202: Document }, [...BODY_PROBLEMS, ...PATH_PROBLEMS, ...RATE_PROBLEMS, 'conflict', 'idempotency_conflict']),
      },
    })
    .get('/v1/scenarios/:scenarioId/documents', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(DocumentListQuery, query)
      if (!(await findScenario(sql, tenantId, params.scenarioId))) throw problems.notFound('scenario')
      const list = cursors.open(q, cursorScope(tenantId, `documents|${params.scenarioId}|${q.status ?? ''}`))
      return list.page(await listDocuments(sql, tenantId, params.scenarioId, q.status, list), (r) => r.id, renderDocument)
    }, {
      access: READ,
      params: ScenarioParams,
      detail: withQuery(DocumentListQuery, { summary: 'List the documents of a case, newest first', tags: TAGS, responses: responses({ 200: PageOf(Document) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/scenarios/:scenarioId/documents/:documentId', async ({ principal, params }) => {
      const doc = await findDocument(sql, tenantOf(principal), params.scenarioId, params.documentId)
      if (!doc) throw problems.notFound('document')
      return renderDocument(doc)
    }, {
      access: READ,
      params: DocumentParams,
      detail: { summary: 'Read a document', tags: TAGS, responses: responses({ 200: Document }, PATH_PROBLEMS) },
    })
    .get('/v1/scenarios/:scenarioId/documents/:documentId/blocks', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(BlockListQuery, query)
      const doc = await findDocument(sql, tenantId, params.scenarioId, params.documentId)
      if (!doc) throw problems.notFound('document')
      const list = cursors.open(q, cursorScope(tenantId, `blocks|${doc.id}|${q.page ?? ''}`))
      return list.page(await listBlocks(sql, tenantId, doc.id, q.page, list), (r) => String(r.position), (r) => renderBlock(r, doc.id))
    }, {
      access: READ,
      params: DocumentParams,
      detail: withQuery(BlockListQuery, { summary: 'The blocks of a processed document, in reading order', tags: TAGS, responses: responses({ 200: PageOf(Block) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/scenarios/:scenarioId/documents/:documentId/download', async ({ principal, params, set }) => {
      const doc = await findDocument(sql, tenantOf(principal), params.scenarioId, params.documentId)
      if (!doc) throw problems.notFound('document')
      if (doc.status === 'awaiting_upload' || !doc.blob_key) throw problems.conflict('The document has not been uploaded and completed yet.')
      const stored = await blobs.get(doc.blob_key)
      if (!stored) throw new ProblemError('internal', 'The stored bytes of this document are missing; quote the request_id when reporting it.')
      // A network store (S3) that stalls before the first bytes is a 503; one that stalls later ends
      // the body short. A local file is read as it is (Bun then keeps its Content-Length).
      const stream = blobs.driver === 'local' ? stored : await withinStallBound(stored, config.downloadStallMs)
      return new Response(stream, {
        headers: {
          ...(set.headers as Record<string, string>),
          'content-type': doc.content_type,
          'content-length': String(doc.size_bytes),
          'content-disposition': contentDisposition(neutraliseFilename(doc.filename, 'document'), { type: 'attachment' }),
          'x-content-type-options': 'nosniff',
          'content-security-policy': "default-src 'none'; sandbox",
          'cache-control': 'private, no-store',
        },
      })
    }, {
      access: READ,
      params: DocumentParams,
      detail: {
        summary: 'Download the bytes of a document (streamed, as an attachment)',
        tags: TAGS,
        description: 'The bytes are streamed from the document store. A store that sends no bytes within SVC_DOWNLOAD_STALL_MS (15 s) is 503 with Retry-After; one that pauses longer than that later ends the body short of Content-Length.',
        responses: { ...responses({}, [...PATH_PROBLEMS, 'conflict', 'unavailable']), 200: { description: 'The document bytes, in the content type declared at upload (text/plain, application/pdf, ...)', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } },
      },
    })
}
