/**
 * Generation runs of a question set: start one over guideline sources (202, a `generation_run`
 * task; run-starting rate class; 402 when the workspace's cost budget is reached), list and read
 * runs with their progress, usage and drafted questions, cancel, resume a stalled run (run-starting
 * class; 402 while the budget is still reached), and accept drafts into a new draft version.
 */
import { Elysia, t } from 'elysia'
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
import { QuestionSetParams, QuestionSetVersion } from '../../schemas/question-set'
import { AcceptRequest, GenerateRequest, GenerationRun, RunListQuery, RunParams } from '../../schemas/authoring'
import { findQuestionSet, renderVersion } from '../question-sets/store'
import { versionPath } from '../question-sets/publish'
import { QUESTION_SET_READ, QUESTION_SET_WRITE } from './question-sets'
import { findGuideline } from '../authoring/guidelines'
import { budgetExceeded, budgetReached } from '../billing/budgets'
import { findRun, insertRun, listRuns, renderRun, runPath, setRunStatus } from '../authoring/generation-store'
import { endRun, enqueueGeneration, GENERATION_RUN } from '../authoring/generation-run'
import { acceptDrafts } from '../authoring/accept'

const TAGS = ['Generation runs']

/** Generation-run routes. */
export function generationRunRoutes(deps: AppDeps) {
  const { sql, cursors, config } = deps

  return new Elysia({ name: 'generation-runs' })
    .use(accessControl(deps.authenticate))
    .post('/v1/question-sets/:questionSetId/generate', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if (!(await findQuestionSet(sql, tenantId, params.questionSetId))) throw problems.notFound('question set')
      const generator = body.generator ?? (config.modelUrl ? 'model' : 'builtin')
      if (generator === 'model' && !config.modelUrl) throw problems.rule('generator model needs a configured model endpoint (SVC_MODEL_URL).')
      const ids = [...new Set(body.guideline_ids)]
      for (const [i, id] of ids.entries()) {
        const g = await findGuideline(sql, tenantId, id)
        if (!g) throw problems.rule(`guideline_ids/${i} names no guideline source of this workspace.`)
        if (g.status !== 'ready' && g.status !== 'ready_degraded') throw problems.conflict(`guideline_ids/${i} is ${g.status}; only a processed guideline (ready or ready_degraded) can be generated from.`)
      }
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        if (generator === 'model' && (await budgetReached(tx, tenantId))) throw budgetExceeded()
        await consumeRate(deps, tenantId, 'run', tx)
        const id = Bun.randomUUIDv7()
        await subscribeInline(tx, principal, { tenantId, taskKind: GENERATION_RUN, taskId: id, items: body.notifications })
        const row = await insertRun(tx, tenantId, { id, questionSetId: params.questionSetId, guidelineIds: ids, generator })
        await enqueueGeneration(tx, tenantId, id)
        return { status: 202, body: await renderRun(tx, row), location: runPath(params.questionSetId, id) }
      })
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: QUESTION_SET_WRITE,
      params: QuestionSetParams,
      body: GenerateRequest,
      detail: {
        summary: 'Start a generation run over guideline sources: 202 and a generation_run task (run-starting rate class)',
        tags: TAGS,
        responses: responses({ 202: GenerationRun }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, ...RATE_PROBLEMS, 'budget_exceeded', 'conflict', 'idempotency_conflict']),
      },
    })
    .get('/v1/question-sets/:questionSetId/generation-runs', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(RunListQuery, query)
      if (!(await findQuestionSet(sql, tenantId, params.questionSetId))) throw problems.notFound('question set')
      const list = cursors.open(q, cursorScope(tenantId, `generation-runs|${params.questionSetId}`))
      const page = list.page(await listRuns(sql, tenantId, params.questionSetId, list), (r) => r.id, (r) => r)
      return { items: await Promise.all(page.items.map((r) => renderRun(sql, r))), next_cursor: page.next_cursor }
    }, {
      access: QUESTION_SET_READ,
      params: QuestionSetParams,
      detail: withQuery(RunListQuery, { summary: 'List the generation runs of a question set, newest first', tags: TAGS, responses: responses({ 200: PageOf(GenerationRun) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/question-sets/:questionSetId/generation-runs/:runId', async ({ principal, params }) => {
      const row = await findRun(sql, tenantOf(principal), params.runId, { questionSetId: params.questionSetId })
      if (!row) throw problems.notFound('generation run')
      return renderRun(sql, row)
    }, {
      access: QUESTION_SET_READ,
      params: RunParams,
      detail: { summary: 'Read a generation run: status, progress, usage and drafted questions', tags: TAGS, responses: responses({ 200: GenerationRun }, PATH_PROBLEMS) },
    })
    .post('/v1/question-sets/:questionSetId/generation-runs/:runId/cancel', async ({ principal, params }) => {
      const tenantId = tenantOf(principal)
      return sql.begin(async (tx) => {
        const row = await findRun(tx, tenantId, params.runId, { questionSetId: params.questionSetId, lock: true })
        if (!row) throw problems.notFound('generation run')
        if (!['queued', 'running', 'stalled'].includes(row.status)) throw problems.conflict(`The run is ${row.status}; only a queued, running or stalled run can be canceled.`)
        return renderRun(tx, await endRun(tx, deps.links, row, 'canceled'))
      })
    }, {
      access: QUESTION_SET_WRITE,
      params: RunParams,
      detail: { summary: 'Cancel a run (ends it canceled: task.failed generation_canceled); its drafts stay', tags: TAGS, responses: responses({ 200: GenerationRun }, [...PATH_PROBLEMS, 'conflict']) },
    })
    .post('/v1/question-sets/:questionSetId/generation-runs/:runId/resume', async ({ principal, params, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body: null, key: idempotencyKeyOf(request) }, async (tx) => {
        const row = await findRun(tx, tenantId, params.runId, { questionSetId: params.questionSetId, lock: true })
        if (!row) throw problems.notFound('generation run')
        if (row.status !== 'stalled') throw problems.conflict(`The run is ${row.status}; only a stalled run can be resumed.`)
        if (row.generator === 'model' && (await budgetReached(tx, tenantId))) throw budgetExceeded()
        await consumeRate(deps, tenantId, 'run', tx)
        const queued = await setRunStatus(tx, row, 'queued', { outageChecks: 0 })
        await enqueueGeneration(tx, tenantId, row.id)
        return { status: 202, body: await renderRun(tx, queued), location: runPath(row.question_set_id, row.id) }
      })
      return replyWith(set, result) as Record<string, unknown>
    }, {
      access: QUESTION_SET_WRITE,
      params: RunParams,
      detail: {
        summary: 'Resume a stalled run from its last checkpoint (run-starting rate class); 402 while the budget is reached',
        tags: TAGS,
        responses: responses({ 202: GenerationRun }, [...PATH_PROBLEMS, ...RATE_PROBLEMS, 'budget_exceeded', 'conflict', 'idempotency_conflict']),
      },
    })
    .post('/v1/question-sets/:questionSetId/generation-runs/:runId/accept', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body: body ?? null, key: idempotencyKeyOf(request) }, async (tx) => {
        const row = await findRun(tx, tenantId, params.runId, { questionSetId: params.questionSetId, lock: true })
        if (!row) throw problems.notFound('generation run')
        if (row.status === 'queued' || row.status === 'running') throw problems.conflict(`The run is ${row.status}; accept its drafts once it has stopped.`)
        const version = await acceptDrafts(tx, tenantId, row, body ?? {})
        return { status: 201, body: renderVersion(version), location: versionPath(row.question_set_id, version.id) }
      })
      const out = replyWith(set, result) as Record<string, unknown>
      set.headers.etag = (out as { etag: string }).etag
      return out
    }, {
      access: QUESTION_SET_WRITE,
      params: RunParams,
      body: t.Optional(AcceptRequest),
      detail: {
        summary: 'Accept drafted questions (all, or the keys named, with edits) into a new draft version of the set',
        tags: TAGS,
        responses: responses({ 201: QuestionSetVersion }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict', 'idempotency_conflict']),
      },
    })
}
