/**
 * Question groups and their guideline sources: create and list groups; start a guideline upload
 * (the same presigned PUT, file-type registry and byte checks as a case document), complete it
 * (a `guideline_ingestion` task whose task_id is the guideline id), re-read it, list, read, and the
 * blocks of a processed guideline.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import type { Principal } from '../auth/principal'
import { accessControl, tenantOf } from '../auth/access'
import { ProblemError, problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import {
  Guideline, GuidelineBlock, GuidelineBlockListQuery, GuidelineComplete, GuidelineCreate, GuidelineCreated, GuidelineListQuery,
  GuidelineParams, QuestionGroup, QuestionGroupCreate, QuestionGroupListQuery, QuestionGroupParams,
} from '../../schemas/authoring'
import { essenceOf, findFileType } from '../documents/registry'
import { tooLarge, verifyStoredBytes } from '../documents/intake'
import { checkFilename } from '../documents/filenames'
import { UPLOAD_URL_TTL_SECONDS } from '../storage/blob-store'
import { subscribeInline, type InlineNotification } from '../notifications/inline'
import { QUESTION_SET_READ, QUESTION_SET_WRITE } from './question-sets'
import {
  findGroup, findGroupGuideline, guidelinePath, insertGroup, insertGuideline, listGroups, listGuidelineBlocks, listGuidelines,
  markGuidelineBytesVerified, renderGroup, renderGuideline, renderGuidelineBlock, setGuidelineStatus, touchGroup,
  type GuidelineStatus,
} from '../authoring/guidelines'
import { enqueueGuidelineIngestion, GUIDELINE_INGESTION } from '../authoring/guideline-ingestion'

const TAGS = ['Question groups']
const REINGESTABLE: readonly GuidelineStatus[] = ['ready', 'ready_degraded', 'failed', 'unsupported_pending']

/** Question-group and guideline routes. */
export function questionGroupRoutes(deps: AppDeps) {
  const { sql, cursors, blobs, config } = deps

  const startIngestion = (principal: Principal, tenantId: string, params: { groupId: string; guidelineId: string }, body: { notifications?: InlineNotification[] } | null | undefined, request: Request, path: string, allowed: readonly GuidelineStatus[]) =>
    runIdempotent({ sql, tenantId, method: 'POST', path, body: body ?? null, key: idempotencyKeyOf(request) }, async (tx) => {
      const row = await findGroupGuideline(tx, tenantId, params.groupId, params.guidelineId, true)
      if (!row) throw problems.notFound('guideline')
      if (!allowed.includes(row.status)) {
        throw problems.conflict(row.status === 'processing' ? 'The guideline is already being processed.' : `A guideline in status ${row.status} cannot do this.`)
      }
      if (row.status === 'awaiting_upload' && (!row.blob_key || !row.bytes_verified)) {
        throw problems.conflict('The guideline bytes have not been uploaded yet; PUT them to the upload URL first.')
      }
      await consumeRate(deps, tenantId, 'unit', tx)
      const updated = await setGuidelineStatus(tx, row, 'processing', { bumpGeneration: true, errorCode: null, errorDetail: null })
      await subscribeInline(tx, principal, { tenantId, taskKind: GUIDELINE_INGESTION, taskId: row.id, items: body?.notifications })
      await enqueueGuidelineIngestion(tx, updated)
      return { status: 202, body: renderGuideline(updated), location: guidelinePath(row.question_group_id, row.id) }
    })

  return new Elysia({ name: 'question-groups' })
    .use(accessControl(deps.authenticate))
    .post('/v1/question-groups', async ({ principal, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if (body.name.trim() === '') throw problems.rule('name must contain a non-whitespace character.')
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        const id = Bun.randomUUIDv7()
        await insertGroup(tx, tenantId, { id, name: body.name, description: body.description ?? null })
        return { status: 201, body: renderGroup((await findGroup(tx, tenantId, id))!), location: `/v1/question-groups/${id}` }
      })
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: QUESTION_SET_WRITE,
      body: QuestionGroupCreate,
      detail: { summary: 'Create a question group', tags: TAGS, responses: responses({ 201: QuestionGroup }, [...BODY_PROBLEMS, 'idempotency_conflict', 'conflict']) },
    })
    .get('/v1/question-groups', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(QuestionGroupListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, 'question-groups'))
      return list.page(await listGroups(sql, tenantId, list), (r) => r.id, renderGroup)
    }, {
      access: QUESTION_SET_READ,
      detail: withQuery(QuestionGroupListQuery, { summary: 'List question groups, newest first', tags: TAGS, responses: responses({ 200: PageOf(QuestionGroup) }, LIST_PROBLEMS) }),
    })
    .get('/v1/question-groups/:groupId', async ({ principal, params }) => {
      const row = await findGroup(sql, tenantOf(principal), params.groupId)
      if (!row) throw problems.notFound('question group')
      return renderGroup(row)
    }, {
      access: QUESTION_SET_READ,
      params: QuestionGroupParams,
      detail: { summary: 'Read a question group', tags: TAGS, responses: responses({ 200: QuestionGroup }, PATH_PROBLEMS) },
    })
    .post('/v1/question-groups/:groupId/guidelines', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      checkFilename(body.filename)
      if (!(await findGroup(sql, tenantId, params.groupId))) throw problems.notFound('question group')
      const type = findFileType(body.content_type)
      if (!type) throw new ProblemError('unsupported_media_type', `content_type ${essenceOf(body.content_type)} is not in the file-type registry (GET /v1/file-types).`)
      if (body.size_bytes > config.maxUploadBytes) throw tooLarge(config.maxUploadBytes)
      if (body.replaces_guideline_id !== undefined && !(await findGroupGuideline(sql, tenantId, params.groupId, body.replaces_guideline_id))) {
        throw problems.rule('replaces_guideline_id names no guideline source of this group.')
      }
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        const id = Bun.randomUUIDv7()
        const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + UPLOAD_URL_TTL_SECONDS * 1000)
        const sha256 = body.checksum_sha256?.toLowerCase()
        const upload = await blobs.presignUpload({ tenantId, documentId: id, contentType: type.contentType, size: body.size_bytes, sha256, expiresAt })
        const row = await insertGuideline(tx, tenantId, {
          id, groupId: params.groupId, replacesGuidelineId: body.replaces_guideline_id ?? null, filename: body.filename,
          contentType: type.contentType, sizeBytes: body.size_bytes, sha256: sha256 ?? null, blobKey: upload.key ?? null,
        })
        await touchGroup(tx, tenantId, params.groupId)
        return {
          status: 201,
          body: { ...renderGuideline(row), upload: { method: upload.method, url: upload.url, headers: upload.headers, expires_at: expiresAt.toISOString() } },
          location: guidelinePath(params.groupId, id),
        }
      })
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: QUESTION_SET_WRITE,
      params: QuestionGroupParams,
      body: GuidelineCreate,
      detail: {
        summary: 'Start a guideline upload: the guideline source and a presigned PUT URL (as for a case document)',
        tags: TAGS,
        responses: responses({ 201: GuidelineCreated }, [...BODY_PROBLEMS, ...PATH_PROBLEMS, 'idempotency_conflict', 'conflict']),
      },
    })
    .post('/v1/question-groups/:groupId/guidelines/:guidelineId/complete', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const row = await findGroupGuideline(sql, tenantId, params.groupId, params.guidelineId)
      if (!row) throw problems.notFound('guideline')
      if (row.status === 'awaiting_upload' && !row.bytes_verified) {
        await verifyStoredBytes(blobs, row, config.maxUploadBytes)
        await markGuidelineBytesVerified(sql, tenantId, row.id)
      }
      return replyWith(set, await startIngestion(principal, tenantId, params, body, request, path, ['awaiting_upload'])) as Record<string, unknown>
    }, {
      access: QUESTION_SET_WRITE,
      params: GuidelineParams,
      body: t.Optional(GuidelineComplete),
      detail: {
        summary: 'Finalize a guideline upload and begin processing: a guideline_ingestion task (task_id = the guideline id)',
        tags: TAGS,
        responses: responses({ 202: Guideline }, [...BODY_PROBLEMS, ...PATH_PROBLEMS, ...RATE_PROBLEMS, 'conflict', 'idempotency_conflict', 'payload_too_large']),
      },
    })
    .post('/v1/question-groups/:groupId/guidelines/:guidelineId/reingest', async ({ principal, params, body, request, path, set }) =>
      replyWith(set, await startIngestion(principal, tenantOf(principal), params, body, request, path, REINGESTABLE)) as Record<string, unknown>, {
      access: QUESTION_SET_WRITE,
      params: GuidelineParams,
      body: t.Optional(GuidelineComplete),
      detail: { summary: 'Read a processed guideline again', tags: TAGS, responses: responses({ 202: Guideline }, [...BODY_PROBLEMS, ...PATH_PROBLEMS, ...RATE_PROBLEMS, 'conflict', 'idempotency_conflict']) },
    })
    .get('/v1/question-groups/:groupId/guidelines', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(GuidelineListQuery, query)
      if (!(await findGroup(sql, tenantId, params.groupId))) throw problems.notFound('question group')
      const list = cursors.open(q, cursorScope(tenantId, `guidelines|${params.groupId}|${q.status ?? ''}`))
      return list.page(await listGuidelines(sql, tenantId, params.groupId, q.status, list), (r) => r.id, renderGuideline)
    }, {
      access: QUESTION_SET_READ,
      params: QuestionGroupParams,
      detail: withQuery(GuidelineListQuery, { summary: 'List the guideline sources of a group, newest first', tags: TAGS, responses: responses({ 200: PageOf(Guideline) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/question-groups/:groupId/guidelines/:guidelineId', async ({ principal, params }) => {
      const row = await findGroupGuideline(sql, tenantOf(principal), params.groupId, params.guidelineId)
      if (!row) throw problems.notFound('guideline')
      return renderGuideline(row)
    }, {
      access: QUESTION_SET_READ,
      params: GuidelineParams,
      detail: { summary: 'Read a guideline source', tags: TAGS, responses: responses({ 200: Guideline }, PATH_PROBLEMS) },
    })
    .get('/v1/question-groups/:groupId/guidelines/:guidelineId/blocks', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(GuidelineBlockListQuery, query)
      const row = await findGroupGuideline(sql, tenantId, params.groupId, params.guidelineId)
      if (!row) throw problems.notFound('guideline')
      const list = cursors.open(q, cursorScope(tenantId, `guideline-blocks|${row.id}|${q.page ?? ''}`))
      return list.page(await listGuidelineBlocks(sql, tenantId, row.id, q.page, list), (r) => String(r.position), renderGuidelineBlock)
    }, {
      access: QUESTION_SET_READ,
      params: GuidelineParams,
      detail: withQuery(GuidelineBlockListQuery, { summary: 'The blocks of a processed guideline, in reading order', tags: TAGS, responses: responses({ 200: PageOf(GuidelineBlock) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
}
