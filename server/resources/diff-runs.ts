/**
 * Diff runs of a question set: compare a re-uploaded guideline (one that names the source it
 * replaces) with that source, block by block, proposing question additions, changes and removals
 * against a base version. POST -> 202 and a `diff_run` task (run-starting rate class,
 * Idempotency-Key, inline notifications); list and read.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { subscribeInline } from '../notifications/inline'
import { PageOf } from '../../schemas/common'
import { QuestionSetParams } from '../../schemas/question-set'
import { DiffRun, DiffRunCreate, RunListQuery, RunParams } from '../../schemas/authoring'
import { findQuestionSet, findVersion } from '../question-sets/store'
import { QUESTION_SET_READ, QUESTION_SET_WRITE } from './question-sets'
import { findGuideline } from '../authoring/guidelines'
import { DIFF_RUN, diffRunPath, enqueueDiffRun, findDiffRun, insertDiffRun, listDiffRuns, renderDiffRun } from '../authoring/diff-run'

const TAGS = ['Diff runs']
const processed = (s?: string) => s === 'ready' || s === 'ready_degraded'

/** Diff-run routes. */
export function diffRunRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  return new Elysia({ name: 'diff-runs' })
    .use(accessControl(deps.authenticate))
    .post('/v1/question-sets/:questionSetId/diff-runs', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if (!(await findQuestionSet(sql, tenantId, params.questionSetId))) throw problems.notFound('question set')
      const guideline = await findGuideline(sql, tenantId, body.guideline_id)
      if (!guideline) throw problems.rule('guideline_id names no guideline source of this workspace.')
      if (!guideline.replaces_guideline_id) throw problems.rule('guideline_id names a guideline that replaces no earlier source; upload the changed guideline with replaces_guideline_id.')
      if (!(await findVersion(sql, tenantId, params.questionSetId, body.base_version_id))) throw problems.rule('base_version_id names no version of this question set.')
      const previous = await findGuideline(sql, tenantId, guideline.replaces_guideline_id)
      if (!processed(guideline.status) || !processed(previous?.status)) throw problems.conflict('Both the guideline and the source it replaces must be processed (ready or ready_degraded).')
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        await consumeRate(deps, tenantId, 'run', tx)
        const id = Bun.randomUUIDv7()
        await subscribeInline(tx, principal, { tenantId, taskKind: DIFF_RUN, taskId: id, items: body.notifications })
        const row = await insertDiffRun(tx, tenantId, {
          id, questionSetId: params.questionSetId, guidelineId: guideline.id, previousGuidelineId: guideline.replaces_guideline_id, baseVersionId: body.base_version_id,
        })
        await enqueueDiffRun(tx, tenantId, id)
        return { status: 202, body: renderDiffRun(row), location: diffRunPath(params.questionSetId, id) }
      })
      return replyWith(set, result) as ReturnType<typeof renderDiffRun>
    }, {
      access: QUESTION_SET_WRITE,
      params: QuestionSetParams,
      body: DiffRunCreate,
      detail: {
        summary: 'Start a diff run of a re-uploaded guideline against a base version: 202 and a diff_run task (run-starting rate class)',
        tags: TAGS,
        responses: responses({ 202: DiffRun }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, ...RATE_PROBLEMS, 'conflict', 'idempotency_conflict']),
      },
    })
    .get('/v1/question-sets/:questionSetId/diff-runs', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(RunListQuery, query)
      if (!(await findQuestionSet(sql, tenantId, params.questionSetId))) throw problems.notFound('question set')
      const list = cursors.open(q, cursorScope(tenantId, `diff-runs|${params.questionSetId}`))
      return list.page(await listDiffRuns(sql, tenantId, params.questionSetId, list), (r) => r.id, renderDiffRun)
    }, {
      access: QUESTION_SET_READ,
      params: QuestionSetParams,
      detail: withQuery(RunListQuery, { summary: 'List the diff runs of a question set, newest first', tags: TAGS, responses: responses({ 200: PageOf(DiffRun) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/question-sets/:questionSetId/diff-runs/:runId', async ({ principal, params }) => {
      const row = await findDiffRun(sql, tenantOf(principal), params.runId, { questionSetId: params.questionSetId })
      if (!row) throw problems.notFound('diff run')
      return renderDiffRun(row)
    }, {
      access: QUESTION_SET_READ,
      params: RunParams,
      detail: { summary: 'Read a diff run: block changes and question proposals', tags: TAGS, responses: responses({ 200: DiffRun }, PATH_PROBLEMS) },
    })
}
