/**
 * Evaluations of a case: start one (202; pins a published question-set version; run-starting rate
 * class; Idempotency-Key; inline notifications), read, list and cancel them. The work itself is the
 * `evaluation_run` job (server/evaluation/run.ts).
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, ANY_ROLE, CASE_WRITERS, tenantOf, type AccessRule } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { subscribeInline } from '../notifications/inline'
import { appendCaseEvent } from '../events'
import { enqueue } from '../../jobs/define'
import { budgetExceeded, budgetReached } from '../billing/budgets'
import { PageOf, ScenarioParams } from '../../schemas/common'
import { CancelRequest, EvaluateRequest, Evaluation, EvaluationListQuery, EvaluationParams } from '../../schemas/evaluation'
import { findScenario, type ScenarioRow } from '../scenarios/store'
import { findQuestionSet, findVersionById, newestPublishedVersion, type VersionRow } from '../question-sets/store'
import { evaluationPath, findEvaluation, insertEvaluation, listEvaluations, renderEvaluation } from '../evaluation/store'
import { markCaseEvaluating } from '../scenarios/store'
import { endEvaluation, EvaluationRunJob, statusEvent } from '../evaluation/run'
import { checkQuestionCap, engineFor, readPolicy } from '../operator/evaluation-policy'

/** Who may start and cancel evaluations. */
export const EVALUATION_WRITE: AccessRule = { roles: CASE_WRITERS, scopes: ['scenarios:write'] }
/** Who may read them (embed sessions too, for their case). */
export const EVALUATION_READ: AccessRule = { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true, breakGlass: true }

type EvaluateBody = { question_set_id?: string; question_set_version_id?: string; notifications?: unknown[] } | null

/** The published version an evaluate call pins, or the 409/422 that explains why there is none. */
async function pinVersion(tx: Tx, tenantId: string, scenario: ScenarioRow, body: EvaluateBody): Promise<VersionRow> {
  if (body?.question_set_version_id) {
    const v = await findVersionById(tx, tenantId, body.question_set_version_id)
    if (!v || (body.question_set_id && v.question_set_id !== body.question_set_id)) {
      throw problems.rule('question_set_version_id names no version of this workspace (or of question_set_id).')
    }
    if (v.status !== 'published') throw problems.conflict(`The version named by question_set_version_id is ${v.status}, not published.`)
    return v
  }
  if (body?.question_set_id) {
    if (!(await findQuestionSet(tx, tenantId, body.question_set_id))) throw problems.rule('question_set_id names no question set of this workspace.')
    const v = await newestPublishedVersion(tx, tenantId, { questionSetId: body.question_set_id })
    if (!v) throw problems.conflict('The named question set has no published version.')
    return v
  }
  const v = await newestPublishedVersion(tx, tenantId, { vertical: scenario.vertical })
  if (!v) throw problems.conflict(`No published question-set version exists for this case's vertical (${scenario.vertical ?? 'the default'}); publish one first.`)
  return v
}

/** Evaluation routes. */
export function evaluationRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  const engine = deps.config.modelUrl ? 'model' as const : 'builtin' as const

  return new Elysia({ name: 'evaluations' })
    .use(accessControl(deps.authenticate))
    .post('/v1/scenarios/:scenarioId/evaluate', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const input = body as EvaluateBody
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body: body ?? null, key: idempotencyKeyOf(request) }, async (tx) => {
        const scenario = await findScenario(tx, tenantId, params.scenarioId)
        if (!scenario) throw problems.notFound('scenario')
        const version = await pinVersion(tx, tenantId, scenario, input)
        const policy = await readPolicy(tx, tenantId)
        checkQuestionCap(policy, version.questions.length)
        if (engineFor(policy, engine) === 'model' && (await budgetReached(tx, tenantId))) {
          throw budgetExceeded("The workspace's cost budget is reached; a model-backed evaluation cannot start until an operator raises the budget.")
        }
        await consumeRate(deps, tenantId, 'run', tx)
        const row = await insertEvaluation(tx, tenantId, {
          scenarioId: scenario.id, questionSetId: version.question_set_id, versionId: version.id, engine: engineFor(policy, engine), total: version.questions.length,
        })
        await subscribeInline(tx, principal, { tenantId, taskKind: 'evaluation_run', taskId: row.id, items: input?.notifications as never })
        await markCaseEvaluating(tx, tenantId, scenario.id)
        await appendCaseEvent(tx, { tenantId, scenarioId: scenario.id, type: 'evaluation.status', data: statusEvent(row) })
        await enqueue(tx, EvaluationRunJob, { tenantId, payload: { scenarioId: scenario.id, evaluationId: row.id } })
        return { status: 202, body: renderEvaluation(row), location: evaluationPath(scenario.id, row.id) }
      })
      return replyWith(set, result) as ReturnType<typeof renderEvaluation>
    }, {
      access: EVALUATION_WRITE,
      params: ScenarioParams,
      body: t.Optional(EvaluateRequest),
      detail: {
        summary: "Evaluate a case: 202 and an evaluation_run task pinned to the newest published version for the case's vertical (or the one named); 409 when none exists",
        tags: ['Evaluations'],
        responses: responses({ 202: Evaluation }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, ...RATE_PROBLEMS, 'budget_exceeded', 'conflict', 'idempotency_conflict']),
      },
    })
    .get('/v1/scenarios/:scenarioId/evaluations', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(EvaluationListQuery, query)
      if (!(await findScenario(sql, tenantId, params.scenarioId))) throw problems.notFound('scenario')
      const list = cursors.open(q, cursorScope(tenantId, `evaluations|${params.scenarioId}`))
      const rows = await listEvaluations(sql, tenantId, params.scenarioId, list.after, list.limit)
      return list.page(rows, (r) => r.id, renderEvaluation)
    }, {
      access: EVALUATION_READ,
      params: ScenarioParams,
      detail: withQuery(EvaluationListQuery, { summary: 'List the evaluations of a case, newest first', tags: ['Evaluations'], responses: responses({ 200: PageOf(Evaluation) }, [...PATH_PROBLEMS, ...LIST_PROBLEMS]) }),
    })
    .get('/v1/scenarios/:scenarioId/evaluations/:evaluationId', async ({ principal, params }) => {
      const row = await findEvaluation(sql, tenantOf(principal), params.scenarioId, params.evaluationId)
      if (!row) throw problems.notFound('evaluation')
      return renderEvaluation(row)
    }, {
      access: EVALUATION_READ,
      params: EvaluationParams,
      detail: { summary: 'Read an evaluation', tags: ['Evaluations'], responses: responses({ 200: Evaluation }, PATH_PROBLEMS) },
    })
    .post('/v1/scenarios/:scenarioId/evaluations/:evaluationId/cancel', async ({ principal, params }) => {
      const tenantId = tenantOf(principal)
      const row = await sql.begin(async (tx) => {
        const current = await findEvaluation(tx, tenantId, params.scenarioId, params.evaluationId, true)
        if (!current) throw problems.notFound('evaluation')
        if (current.status === 'canceled') return current
        if (current.status !== 'queued' && current.status !== 'running') throw problems.conflict(`The evaluation already ${current.status}; only a queued or running one can be canceled.`)
        return endEvaluation(tx, deps.links, tenantId, current, 'canceled')
      })
      return renderEvaluation(row)
    }, {
      access: EVALUATION_WRITE,
      params: EvaluationParams,
      body: t.Optional(CancelRequest),
      detail: {
        summary: 'Cancel a queued or running evaluation (ends it canceled: task.failed with evaluation_canceled); repeating it is harmless',
        tags: ['Evaluations'],
        responses: responses({ 200: Evaluation }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']),
      },
    })
}
