/**
 * Question sets and their versions: create and read sets, create, edit (drafts only), read and
 * publish versions. Every version carries a strong ETag; a write that names a version through
 * If-Match gets 412 precondition_failed when that version has changed since (an edit, or publishing
 * it). A published version never changes. Publishing is the `question_set_publish` task.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, ANY_ROLE, tenantOf, type AccessRule } from '../auth/access'
import { ProblemError, problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, runIdempotentStatement, replyWith } from '../http/idempotency'
import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { subscribeInline } from '../notifications/inline'
import { enqueue } from '../../jobs/define'
import { PageOf } from '../../schemas/common'
import {
  PublishRequest, QuestionSet, QuestionSetCreate, QuestionSetListQuery, QuestionSetParams, QuestionSetVersion,
  VersionListQuery, VersionParams, VersionWrite,
} from '../../schemas/question-set'
import { VERTICAL_KEYS } from './verticals'
import { verticalRule } from './tenant-settings'
import {
  findQuestionSet, findVersion, ifMatchHolds, insertVersion, questionSetCreate, listQuestionSets, listVersions, lockQuestionSet,
  markVersionPublishing, newestVersion, renderQuestionSet, renderVersion, replaceDraftQuestions, touchQuestionSet, versionEtag,
  type QuestionSetRow,
} from '../question-sets/store'
import { assertQuestions, normaliseQuestions } from '../question-sets/validate'
import { QuestionSetPublishJob, versionPath } from '../question-sets/publish'
import type { Question } from '../evaluation/engine'

/** Who may write question sets: admins and reviewers, or keys with question_sets:write. */
export const QUESTION_SET_WRITE: AccessRule = { roles: ['admin', 'reviewer'], scopes: ['question_sets:write'] }
/** Who may read them: every member, or keys with a question_sets scope. */
export const QUESTION_SET_READ: AccessRule = { roles: ANY_ROLE, scopes: ['question_sets:read', 'question_sets:write'] }

const stale = (what: string) => new ProblemError('precondition_failed', `If-Match does not name the current ${what}; read it again (its ETag changed) and retry.`)

/** Question-set routes. */
export function questionSetRoutes(deps: AppDeps) {
  const { sql, cursors } = deps

  const requireSet = async (tx: Tx, tenantId: string, id: string, lock = false): Promise<QuestionSetRow> => {
    if (lock) await lockQuestionSet(tx, tenantId, id)
    const set = await findQuestionSet(tx, tenantId, id)
    if (!set) throw problems.notFound('question set')
    return set
  }

  return new Elysia({ name: 'question-sets' })
    .use(accessControl(deps.authenticate))
    .post('/v1/question-sets', async ({ principal, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if (body.name.trim() === '') throw problems.rule('name must contain a non-whitespace character.')
      if (typeof body.vertical === 'string' && !VERTICAL_KEYS.includes(body.vertical)) {
        throw problems.schema([{ pointer: '/vertical', message: verticalRule() }])
      }
      // One statement, one round trip: the idempotency record, the set and the answer.
      const result = await runIdempotentStatement(
        { sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) },
        questionSetCreate(sql, tenantId, { name: body.name, vertical: body.vertical }),
      )
      return replyWith(set, result) as ReturnType<typeof renderQuestionSet>
    }, {
      access: QUESTION_SET_WRITE,
      body: QuestionSetCreate,
      detail: { summary: 'Create a question set', tags: ['Question sets'], responses: responses({ 201: QuestionSet }, [...BODY_PROBLEMS, 'idempotency_conflict', 'conflict']) },
    })
    .get('/v1/question-sets', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(QuestionSetListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, `question-sets|${q.vertical ?? ''}`))
      return list.page(await listQuestionSets(sql, tenantId, q.vertical, list), (r) => r.id, renderQuestionSet)
    }, {
      access: QUESTION_SET_READ,
      detail: withQuery(QuestionSetListQuery, { summary: 'List question sets, newest first', tags: ['Question sets'], responses: responses({ 200: PageOf(QuestionSet) }, LIST_PROBLEMS) }),
    })
    .get('/v1/question-sets/:questionSetId', async ({ principal, params }) => {
      const row = await findQuestionSet(sql, tenantOf(principal), params.questionSetId)
      if (!row) throw problems.notFound('question set')
      return renderQuestionSet(row)
    }, {
      access: QUESTION_SET_READ,
      params: QuestionSetParams,
      detail: { summary: 'Read a question set', tags: ['Question sets'], responses: responses({ 200: QuestionSet }, PATH_PROBLEMS) },
    })
    .post('/v1/question-sets/:questionSetId/versions', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const questions = normaliseQuestions(body.questions as Question[])
      assertQuestions(questions)
      const ifMatch = request.headers.get('if-match')
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body: { ...body, if_match: ifMatch }, key: idempotencyKeyOf(request) }, async (tx) => {
        await requireSet(tx, tenantId, params.questionSetId, true)
        const latest = await newestVersion(tx, tenantId, params.questionSetId)
        // If-Match names the version these questions were based on: it must still be the newest.
        if (!ifMatchHolds(ifMatch, latest ? versionEtag(latest) : null)) throw stale('newest version of this question set')
        const row = await insertVersion(tx, tenantId, params.questionSetId, (latest?.number ?? 0) + 1, questions)
        await touchQuestionSet(tx, tenantId, params.questionSetId)
        return { status: 201, body: renderVersion(row), location: versionPath(params.questionSetId, row.id) }
      })
      set.headers.etag = (result.body as { etag: string }).etag
      return replyWith(set, result) as ReturnType<typeof renderVersion>
    }, {
      access: QUESTION_SET_WRITE,
      params: QuestionSetParams,
      body: VersionWrite,
      detail: {
        summary: 'Create a draft version (optional If-Match: the ETag of the newest version it is based on)',
        tags: ['Question sets'],
        responses: responses({ 201: QuestionSetVersion }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'precondition_failed', 'idempotency_conflict', 'conflict']),
      },
    })
    .get('/v1/question-sets/:questionSetId/versions', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(VersionListQuery, query)
      await requireSet(sql, tenantId, params.questionSetId)
      const list = cursors.open(q, cursorScope(tenantId, `versions|${params.questionSetId}|${q.status ?? ''}`))
      return list.page(await listVersions(sql, tenantId, params.questionSetId, q.status, list), (r) => r.id, renderVersion)
    }, {
      access: QUESTION_SET_READ,
      params: QuestionSetParams,
      detail: withQuery(VersionListQuery, { summary: 'List the versions of a question set, newest first', tags: ['Question sets'], responses: responses({ 200: PageOf(QuestionSetVersion) }, [...PATH_PROBLEMS, ...LIST_PROBLEMS]) }),
    })
    .get('/v1/question-sets/:questionSetId/versions/:versionId', async ({ principal, params, set }) => {
      const row = await findVersion(sql, tenantOf(principal), params.questionSetId, params.versionId)
      if (!row) throw problems.notFound('version')
      set.headers.etag = versionEtag(row)
      return renderVersion(row)
    }, {
      access: QUESTION_SET_READ,
      params: VersionParams,
      detail: { summary: 'Read a version (with its ETag)', tags: ['Question sets'], responses: responses({ 200: QuestionSetVersion }, PATH_PROBLEMS) },
    })
    .put('/v1/question-sets/:questionSetId/versions/:versionId', async ({ principal, params, body, request, set }) => {
      const tenantId = tenantOf(principal)
      const questions = normaliseQuestions(body.questions as Question[])
      assertQuestions(questions)
      const row = await sql.begin(async (tx) => {
        const current = await findVersion(tx, tenantId, params.questionSetId, params.versionId, true)
        if (!current) throw problems.notFound('version')
        if (!ifMatchHolds(request.headers.get('if-match'), versionEtag(current))) throw stale('version')
        if (current.status !== 'draft') throw problems.conflict(`The version is ${current.status}; only a draft can be edited. Create a new version instead.`)
        const updated = await replaceDraftQuestions(tx, tenantId, params.versionId, questions)
        await touchQuestionSet(tx, tenantId, params.questionSetId)
        return updated
      })
      set.headers.etag = versionEtag(row)
      return renderVersion(row)
    }, {
      access: QUESTION_SET_WRITE,
      params: VersionParams,
      body: VersionWrite,
      detail: {
        summary: "Replace a draft version's questions (If-Match: its ETag; 412 when stale, 409 once published)",
        tags: ['Question sets'],
        responses: responses({ 200: QuestionSetVersion }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'precondition_failed', 'conflict']),
      },
    })
    .post('/v1/question-sets/:questionSetId/versions/:versionId/publish', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const ifMatch = request.headers.get('if-match')
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body: { ...(body ?? {}), if_match: ifMatch }, key: idempotencyKeyOf(request) }, async (tx) => {
        const current = await findVersion(tx, tenantId, params.questionSetId, params.versionId, true)
        if (!current) throw problems.notFound('version')
        if (!ifMatchHolds(ifMatch, versionEtag(current))) throw stale('version')
        if (current.status === 'published' || current.status === 'publishing') throw problems.conflict(`The version is already ${current.status}.`)
        await consumeRate(deps, tenantId, 'unit', tx)
        await subscribeInline(tx, principal, { tenantId, taskKind: 'question_set_publish', taskId: current.id, items: body?.notifications })
        const row = await markVersionPublishing(tx, tenantId, current.id)
        await enqueue(tx, QuestionSetPublishJob, { tenantId, payload: { questionSetId: params.questionSetId, versionId: current.id } })
        return { status: 202, body: renderVersion(row), location: versionPath(params.questionSetId, current.id) }
      })
      return replyWith(set, result) as ReturnType<typeof renderVersion>
    }, {
      access: QUESTION_SET_WRITE,
      params: VersionParams,
      body: t.Optional(PublishRequest),
      detail: {
        summary: 'Publish a version: 202 and a question_set_publish task whose task_id is the version id',
        tags: ['Question sets'],
        responses: responses({ 202: QuestionSetVersion }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, ...RATE_PROBLEMS, 'precondition_failed', 'conflict', 'idempotency_conflict']),
      },
    })
}
