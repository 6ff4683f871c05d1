/**
 * The results of a case's evaluation: answers, evidence and decision (of the latest succeeded
 * evaluation, or the one named by `?evaluation_id=`), and the human decision review/override: a
 * human-only surface (API keys get 403) for reviewers and admins, recorded beside the computed
 * decision, in the workspace's audit chain and on the case event stream.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, ANY_ROLE, tenantOf, type AccessRule } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { BODY_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { appendCaseEvent } from '../events'
import { actorOf, appendAudit } from '../workspaces/audit-store'
import { PageOf, ScenarioParams } from '../../schemas/common'
import { Answer, DecisionReviewRequest, DecisionSchema, Evidence, ResultQuery } from '../../schemas/evaluation'
import { findScenario } from '../scenarios/store'
import { findDecision, findEvaluation, latestSucceeded, listAnswers, listEvidence, renderAnswer, renderEvidence, type EvaluationRow } from '../evaluation/store'
import { insertReview, latestReview, renderDecision } from '../evaluation/reviews'

/** Who may read results (embed sessions too, for their case). */
export const RESULTS_READ: AccessRule = { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true, breakGlass: true }
/** The decision review/override: reviewer and admin users only; API keys are refused at any scope. */
export const DECISION_REVIEW: AccessRule = { roles: ['admin', 'reviewer'], humanOnly: true }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The evaluation whose results a request reads: the one named (404 when it is not of this case,
 * 409 when it has no results) or the case's latest succeeded one (404 when there is none).
 */
export async function resultEvaluation(sql: Tx, tenantId: string, scenarioId: string, evaluationId: string | undefined): Promise<EvaluationRow> {
  if (evaluationId !== undefined) {
    if (!UUID.test(evaluationId)) throw problems.malformed('The query value of evaluation_id is not a UUID.')
    const row = await findEvaluation(sql, tenantId, scenarioId, evaluationId)
    if (!row) throw problems.notFound('evaluation')
    if (row.status !== 'succeeded') throw problems.conflict(`The evaluation is ${row.status}; only a succeeded evaluation has results.`)
    return row
  }
  const row = await latestSucceeded(sql, tenantId, scenarioId)
  if (!row) {
    if (!(await findScenario(sql, tenantId, scenarioId))) throw problems.notFound('scenario')
    throw problems.notFound('succeeded evaluation of this case')
  }
  return row
}

const rawQuery = (query: Record<string, string | undefined>) => {
  const { evaluation_id, ...rest } = query
  readQuery(ResultQuery, rest)
  return evaluation_id
}

/** Result and review routes. */
export function answerRoutes(deps: AppDeps) {
  const { sql } = deps
  const resultProblems = [...PATH_PROBLEMS, 'conflict'] as const

  return new Elysia({ name: 'answers' })
    .use(accessControl(deps.authenticate))
    .get('/v1/scenarios/:scenarioId/answers', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const evaluation = await resultEvaluation(sql, tenantId, params.scenarioId, rawQuery(query))
      return { items: (await listAnswers(sql, tenantId, evaluation.id)).map(renderAnswer), next_cursor: null }
    }, {
      access: RESULTS_READ,
      params: ScenarioParams,
      detail: withQuery(ResultQuery, { summary: "The answers of the case's latest succeeded evaluation (or ?evaluation_id=), in question order; bounded, no cursor", tags: ['Evaluations'], responses: responses({ 200: PageOf(Answer) }, resultProblems) }),
    })
    .get('/v1/scenarios/:scenarioId/evidence', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const evaluation = await resultEvaluation(sql, tenantId, params.scenarioId, rawQuery(query))
      return { items: (await listEvidence(sql, tenantId, evaluation.id)).map(renderEvidence), next_cursor: null }
    }, {
      access: RESULTS_READ,
      params: ScenarioParams,
      detail: withQuery(ResultQuery, { summary: 'The evidence the answers cite (document, block, page, quote); bounded, no cursor', tags: ['Evaluations'], responses: responses({ 200: PageOf(Evidence) }, resultProblems) }),
    })
    .get('/v1/scenarios/:scenarioId/decision', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const evaluation = await resultEvaluation(sql, tenantId, params.scenarioId, rawQuery(query))
      const computed = await findDecision(sql, tenantId, evaluation.id)
      if (!computed) throw problems.notFound('decision')
      return renderDecision(evaluation.id, computed, await latestReview(sql, tenantId, evaluation.id))
    }, {
      access: RESULTS_READ,
      params: ScenarioParams,
      detail: withQuery(ResultQuery, { summary: 'The decision: computed outcome and reasons, and the human override beside them', tags: ['Evaluations'], responses: responses({ 200: DecisionSchema }, resultProblems) }),
    })
    .post('/v1/scenarios/:scenarioId/decision/review', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if (principal.kind !== 'user') throw problems.forbidden('The decision review is a human-only surface.')
      if (body.reason.trim() === '') throw problems.rule('reason must contain a non-whitespace character.')
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        if (!(await findScenario(tx, tenantId, params.scenarioId))) throw problems.notFound('scenario')
        const evaluation = await resultEvaluation(tx, tenantId, params.scenarioId, body.evaluation_id).catch((e) => {
          throw e?.code === 'not_found' && body.evaluation_id === undefined ? problems.conflict('The case has no decision to review yet.') : e
        })
        const computed = (await findDecision(tx, tenantId, evaluation.id))!
        const review = await insertReview(tx, tenantId, { evaluationId: evaluation.id, scenarioId: params.scenarioId, outcome: body.outcome, reason: body.reason, reviewerUserId: principal.userId })
        const data = { scenario_id: params.scenarioId, evaluation_id: evaluation.id, review_id: review.id, computed_outcome: computed.outcome, outcome: body.outcome, reason: body.reason }
        await appendAudit(tx, tenantId, 'decision.reviewed', actorOf(principal), data)
        await appendCaseEvent(tx, { tenantId, scenarioId: params.scenarioId, type: 'decision.reviewed', data: {
          evaluation_id: evaluation.id, review_id: review.id, computed_outcome: computed.outcome, outcome: body.outcome, reviewer: { user_id: principal.userId },
        } })
        return { status: 200, body: renderDecision(evaluation.id, computed, review) }
      })
      return replyWith(set, result) as ReturnType<typeof renderDecision>
    }, {
      access: DECISION_REVIEW,
      params: ScenarioParams,
      body: DecisionReviewRequest,
      detail: {
        summary: 'Review (override) the decision: human-only, reviewers and admins; kept beside the computed decision and in the audit chain',
        tags: ['Evaluations'],
        responses: responses({ 200: DecisionSchema }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict', 'idempotency_conflict']),
      },
    })
}
