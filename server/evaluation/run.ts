/**
 * The `evaluation_run` job: answers every question of the pinned version over the case's blocks,
 * decides, and stores the results. The answering runs in the job's `prepare` step, outside any
 * transaction (a model-backed run waits on the network; the embedded database has one connection),
 * reporting "answered k of n" to the case event stream as it goes and stopping early when the
 * evaluation is canceled. The handler then stores answers, evidence and decision, ends the
 * evaluation and its task in one transaction. A vendor outage ends it `failed` (evaluation_failed);
 * a cancel ends it `canceled` (through the cancel route). The model engine is metered: each answer's
 * tokens are a `model_usage` row (run_kind evaluation_run) the moment it arrives, and the workspace's
 * hard budget is checked before every model call; once reached the evaluation ends `failed` with
 * error_code `budget_exceeded` (its notification: task.failed, evaluation_failed), no answers kept.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import type { AppDeps } from '../deps'
import { Type, type Static } from '@sinclair/typebox'
import { defineJobKind, jobType, MISFIT_REASON } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import { budgetReached, costMicro, recordUsage } from '../billing/budgets'
import { appendCaseEvent } from '../events'
import { recordUsageEvents } from '../billing/ledger'
import { findVersionById } from '../question-sets/store'
import { settleCaseStatus } from '../scenarios/store'
import { buildCaseContext, withCheckNotes, type EngineAnswer, type Question } from './engine'
import { builtinEngine, createEngine, ModelOutageError, ModelResponseError } from './index'
import { decide, type Decision } from './decision'
import { synonymTable } from './synonyms'
import { readTenantSettings } from '../workspaces/settings-store'
import {
  evaluationPath, findEvaluation, findEvaluationById, loadCaseBlocks, loadFailedChecks, recordProgress, saveResults, setEvaluationStatus,
  type EvaluationRow,
} from './store'

/** The job kind name (also the task kind). */
export const EVALUATION_RUN = 'evaluation_run'

/** The evaluation_run job's type: the evaluation (and its case) to run. */
export const EvaluationRunJob = jobType({
  name: EVALUATION_RUN,
  payload: Type.Object({ scenarioId: Type.String(), evaluationId: Type.String() }),
  tenantScoped: true,
})

/** The payload of an evaluation_run job. */
export type EvaluationPayload = Static<typeof EvaluationRunJob.payload>

/** What the prepare step hands the handler. */
type Prepared =
  | { kind: 'skip' }
  | { kind: 'failed'; reason: string }
  | { kind: 'budget' }
  | { kind: 'done'; questions: Question[]; answers: EngineAnswer[]; decision: Decision; documentCount: number; blockCount: number }

/** Why an evaluation stopped at the budget (its `error`; the notification is task.failed / evaluation_failed). */
export const BUDGET_STOP = "the workspace's cost budget was reached before every question was answered; start a new evaluation after an operator raises the budget"

/** Progress events per evaluation at most (a large set reports every few questions). */
const MAX_PROGRESS_EVENTS = 20

/** The data of an evaluation.status event. */
export function statusEvent(row: Pick<EvaluationRow, 'id' | 'status' | 'answered' | 'total'>, extra: Record<string, unknown> = {}) {
  return {
    evaluation_id: row.id,
    status: row.status,
    answered: row.answered,
    total: row.total,
    message: row.status === 'running' || row.status === 'succeeded' ? `answered ${row.answered} of ${row.total}` : row.status,
    ...extra,
  }
}

/**
 * Ends an evaluation in the caller's transaction: status, case status, event and the task's
 * notification (`evaluation_failed` / `evaluation_canceled` / success row of the outcome table).
 */
export async function endEvaluation(tx: Tx, links: LinkBases, tenantId: string, row: EvaluationRow, result: 'succeeded' | 'failed' | 'canceled', fields: { reason?: string; errorCode?: string; answered?: number; documentCount?: number; blockCount?: number } = {}): Promise<EvaluationRow> {
  const ended = await setEvaluationStatus(tx, tenantId, row.id, result, {
    answered: fields.answered,
    documentCount: fields.documentCount,
    blockCount: fields.blockCount,
    ...(result === 'failed' ? { errorCode: fields.errorCode ?? 'evaluation_failed', errorDetail: fields.reason ?? 'evaluation failed' } : {}),
    ...(result === 'canceled' ? { errorCode: 'evaluation_canceled', errorDetail: 'evaluation was canceled' } : {}),
  })
  await settleCaseStatus(tx, tenantId, row.scenario_id, result)
  if (result === 'succeeded') {
    await recordUsageEvents(tx, tenantId, [{ meter: 'evaluations_succeeded', quantity: 1, sourceKind: EVALUATION_RUN, sourceId: row.id, occurredAt: ended.finished_at ?? new Date() }])
  }
  await appendCaseEvent(tx, { tenantId, scenarioId: row.scenario_id, type: 'evaluation.status', data: statusEvent(ended, result === 'failed' ? { error: ended.error_detail } : {}) })
  await finishTask(tx, { links,
    tenantId, taskKind: 'evaluation_run', taskId: row.id, resourcePath: evaluationPath(row.scenario_id, row.id), result,
    ...(fields.reason ? { reason: fields.reason } : {}),
  })
  return ended
}

/** Answers the questions outside any transaction; see the file comment. */
async function prepare(tenantId: string, payload: EvaluationPayload, deps: AppDeps): Promise<Prepared> {
  const { sql } = deps
  const started = await sql.begin(async (tx) => {
    const row = await findEvaluation(tx, tenantId, payload.scenarioId, payload.evaluationId, true)
    if (!row || (row.status !== 'queued' && row.status !== 'running')) return null
    if (row.status === 'running') return row // a re-run after a crash: start over
    const running = await setEvaluationStatus(tx, tenantId, row.id, 'running', { answered: 0 })
    await appendCaseEvent(tx, { tenantId, scenarioId: row.scenario_id, type: 'evaluation.status', data: statusEvent(running) })
    return running
  })
  if (!started) return { kind: 'skip' }
  const version = await findVersionById(sql, tenantId, started.question_set_version_id)
  if (!version) return { kind: 'failed', reason: 'the pinned question-set version is gone' }
  const questions = version.questions
  const { blocks, documentCount } = await loadCaseBlocks(sql, tenantId, started.scenario_id)
  // The workspace's label synonyms (the built-in table with its edits) name facts by their other names.
  const settings = await readTenantSettings(sql, tenantId)
  // Answers drawn from a document that failed an arithmetic check carry a note and a lowered confidence.
  const failedChecks = await loadFailedChecks(sql, tenantId, started.scenario_id)
  const context = buildCaseContext(blocks, { synonyms: synonymTable(settings.label_synonyms ?? {}), failedChecks })
  // The engine pinned at start (a workspace's evaluation policy may hold it to the built-in one).
  const engine = started.engine === 'model' ? createEngine(deps.config) : builtinEngine
  const metered = engine.name === 'model'
  const every = Math.max(1, Math.ceil(questions.length / MAX_PROGRESS_EVENTS))
  const answers: EngineAnswer[] = []
  for (const [i, question] of questions.entries()) {
    // The hard budget, checked before every model call like a generation step: once reached, stop.
    if (metered && (await budgetReached(sql, tenantId))) return { kind: 'budget' }
    try {
      const answer = withCheckNotes(await engine.answer(question, context), context)
      if (answer.usage) {
        const { inputTokens, outputTokens } = answer.usage
        await recordUsage(sql, tenantId, {
          runKind: EVALUATION_RUN, runId: started.id, step: i,
          input_tokens: inputTokens, output_tokens: outputTokens, cost_micro: costMicro(deps.config, inputTokens, outputTokens),
        })
      }
      answers.push(answer)
    } catch (e) {
      if (e instanceof ModelOutageError || e instanceof ModelResponseError) return { kind: 'failed', reason: e.message }
      throw e
    }
    const k = i + 1
    if (k % every === 0 || k === questions.length) {
      const stillRunning = await sql.begin(async (tx) => {
        if (!(await recordProgress(tx, tenantId, started.id, k))) return false
        await appendCaseEvent(tx, { tenantId, scenarioId: started.scenario_id, type: 'evaluation.status', data: statusEvent({ ...started, answered: k }) })
        return true
      })
      if (!stillRunning) return { kind: 'skip' }
    }
  }
  const decision = decide(answers.map((a, i) => ({
    questionKey: questions[i]!.key, criticality: questions[i]!.criticality, status: a.status,
    ...(a.accepted !== undefined ? { accepted: a.accepted } : {}),
    ...(questions[i]!.accept ? { rule: questions[i]!.accept, value: a.status === 'answered' && a.source !== 'retrieval' ? a.value : null } : {}),
  })))
  return { kind: 'done', questions, answers, decision, documentCount, blockCount: blocks.length }
}

/** The job kind. */
export function evaluationRunJobKind() {
  return defineJobKind({
    ...EvaluationRunJob,
    maxAttempts: 3,
    async prepare(job, deps) {
      const started = performance.now()
      const engine = deps.config.modelUrl ? 'model' : 'builtin'
      try {
        const prepared = await prepare(job.tenantId, job.payload, deps)
        if (prepared.kind !== 'skip') deps.metrics.evaluation(engine, prepared.kind === 'done' ? 'succeeded' : 'failed', (performance.now() - started) / 1000)
        return prepared
      } catch (e) {
        deps.metrics.evaluation(engine, 'error', (performance.now() - started) / 1000) // retried as a job
        throw e
      }
    },
    async handler(tx, job, deps) {
      const { tenantId, payload, prepared } = job
      const row = await findEvaluation(tx, tenantId, payload.scenarioId, payload.evaluationId, true)
      // Ended meanwhile (canceled, or settled by an earlier run): nothing to do.
      if (!row || (row.status !== 'queued' && row.status !== 'running') || prepared.kind === 'skip') return
      if (prepared.kind === 'failed') {
        await endEvaluation(tx, deps.links, tenantId, row, 'failed', { reason: prepared.reason })
        return
      }
      if (prepared.kind === 'budget') {
        await endEvaluation(tx, deps.links, tenantId, row, 'failed', { reason: BUDGET_STOP, errorCode: 'budget_exceeded' })
        return
      }
      await saveResults(tx, tenantId, row.id, prepared.questions, prepared.answers, prepared.decision)
      await endEvaluation(tx, deps.links, tenantId, row, 'succeeded', {
        answered: prepared.answers.length, documentCount: prepared.documentCount, blockCount: prepared.blockCount,
      })
    },
    // The evaluation id alone finds it, so a payload that lost its case id still ends its evaluation.
    giveUpPayload: Type.Object({ evaluationId: Type.String() }),
    async onGiveUp(tx, job, deps) {
      const row = await findEvaluationById(tx, job.tenantId, job.payload.evaluationId, true)
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      await endEvaluation(tx, deps.links, job.tenantId, row, 'failed', { reason: job.giveUpReason === MISFIT_REASON ? MISFIT_REASON : 'the evaluation could not be completed' })
    },
  })
}
