/**
 * The `generation_run` job. A run works guideline by guideline and chunk by chunk: its plan (one
 * step per chunk) is written when it first starts, and each step commits its drafts, its metered
 * usage and its checkpoint (the step marked done) in one transaction, so a step that committed is
 * never done again, whether the job re-runs after a crash, an outage check or a resume.
 *
 * The steps run in `prepare`, outside any long transaction (a model call waits on the network; the
 * embedded database has one connection). The handler then ends the run in the job's transaction:
 *  - every step done: `succeeded` (task.completed);
 *  - the model refused the request or replied without a question list: `failed` (generation_failed);
 *  - the model endpoint stayed down through the client's retries: one automatic check is counted
 *    and the job is re-armed after a back-off (SVC_GENERATION_CHECK_INTERVAL_MS, doubling); after
 *    SVC_GENERATION_OUTAGE_CHECKS checks the run is `stalled` (paused_reason vendor_outage) and
 *    task.stalled is sent; it keeps its checkpoints and drafts and continues on resume;
 *  - the workspace's cost budget is reached before a model step: `stalled` with paused_reason
 *    budget_exceeded (no notification: it is not a vendor outage); resume after the budget is raised.
 * Cancel (the route) ends the run `canceled` itself; a step in flight then finds it and stops.
 */
import type { LinkBases } from '../notifications/envelope'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { Type, type Static } from '@sinclair/typebox'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import { recordUsageEvents } from '../billing/ledger'
import { ModelOutageError, ModelResponseError, type ModelSettings } from '../evaluation'
import type { Config } from '../config'
import { findGuideline, guidelineBlocks, type GuidelineBlockRow } from './guidelines'
import { chunkBlocks, draftFromBlocks, uniqueKeys, type Draft, type GenBlock } from './obligations'
import { modelDraftChunk } from './model-generator'
import { budgetReached, costMicro, recordUsage } from '../billing/budgets'
import { checkpointStep, findRun, runPath, runSteps, setRunStatus, writePlan, type RunRow } from './generation-store'

/** The job kind name (also the task kind). */
export const GENERATION_RUN = 'generation_run'

/** The generation_run job's type (its payload names the row the job works on). */
export const GenerationRunJob = jobType({
  name: GENERATION_RUN,
  payload: Type.Object({ runId: Type.String() }),
  tenantScoped: true,
})

/** The payload of a generation_run job. */
export type GenerationPayload = Static<typeof GenerationRunJob.payload>

type Prepared =
  | { kind: 'skip' }
  | { kind: 'done' }
  | { kind: 'failed'; reason: string }
  | { kind: 'outage'; failure: string }
  | { kind: 'budget' }

/** The model settings of the configuration (the answer engine's endpoint). */
export function modelSettings(config: Config): ModelSettings {
  return { modelUrl: config.modelUrl!, modelName: config.modelName, modelApiKey: config.modelApiKey, modelTimeoutMs: config.modelTimeoutMs, modelMaxRetries: config.modelMaxRetries }
}

/** Enqueues a run's job in the caller's transaction (optionally later). */
export async function enqueueGeneration(tx: Tx, tenantId: string, runId: string, runAt?: Date): Promise<string> {
  return enqueue(tx, GenerationRunJob, { tenantId, payload: { runId }, ...(runAt ? { runAt } : {}) })
}

/** Ends a run in the caller's transaction with its notification (succeeded, failed or canceled). */
export async function endRun(tx: Tx, links: LinkBases, row: RunRow, result: 'succeeded' | 'failed' | 'canceled', reason?: string): Promise<RunRow> {
  const ended = await setRunStatus(tx, row, result, {
    finished: true,
    outageChecks: row.outage_checks,
    ...(result === 'failed' ? { errorCode: 'generation_failed', errorDetail: reason ?? 'generation failed' } : {}),
    ...(result === 'canceled' ? { errorCode: 'generation_canceled', errorDetail: 'generation was canceled' } : {}),
  })
  if (result === 'succeeded') await recordUsageEvents(tx, row.tenant_id, [{ meter: 'generation_runs', quantity: 1, sourceKind: GENERATION_RUN, sourceId: row.id }])
  await finishTask(tx, { links,
    tenantId: row.tenant_id, taskKind: 'generation_run', taskId: row.id, resourcePath: runPath(row.question_set_id, row.id), result,
    ...(reason ? { reason } : {}),
  })
  return ended
}

const isActive = (row: RunRow | null): row is RunRow => row !== null && (row.status === 'queued' || row.status === 'running')

async function start(deps: AppDeps, tenantId: string, runId: string): Promise<RunRow | null> {
  return deps.sql.begin(async (tx) => {
    const row = await findRun(tx, tenantId, runId, { lock: true })
    if (!isActive(row)) return null
    const running = row.status === 'queued' ? await setRunStatus(tx, row, 'running', { started: true, outageChecks: row.outage_checks }) : row
    if (running.steps_total === null) {
      const plan: { guidelineId: string; chunk: number; blockIds: string[] }[] = []
      for (const guidelineId of running.guideline_ids) {
        const blocks = await guidelineBlocks(tx, tenantId, guidelineId)
        chunkBlocks(blocks, deps.config.generationChunkChars).forEach((chunk, i) => plan.push({ guidelineId, chunk: i, blockIds: chunk.map((b) => b.id) }))
      }
      await writePlan(tx, tenantId, runId, plan)
      return { ...running, steps_total: plan.length }
    }
    return running
  })
}

/** Runs the pending steps of a run; see the file comment. */
async function prepare(deps: AppDeps, tenantId: string, payload: GenerationPayload): Promise<Prepared> {
  const { sql, config } = deps
  const run = await start(deps, tenantId, payload.runId)
  if (!run) return { kind: 'skip' }
  const steps = await runSteps(sql, tenantId, run.id)
  const blocks = new Map<string, GuidelineBlockRow & { filename: string }>()
  for (const guidelineId of run.guideline_ids) {
    const filename = (await findGuideline(sql, tenantId, guidelineId))?.filename ?? 'guideline'
    for (const b of await guidelineBlocks(sql, tenantId, guidelineId)) blocks.set(b.id, { ...b, filename })
  }
  for (const step of steps) {
    if (step.done_at !== null) continue
    const [now] = await sql<{ status: string }[]>`select status from generation_runs where tenant_id = ${tenantId} and id = ${run.id}`
    if (now?.status !== 'running') return { kind: 'skip' }
    const chunk: (GenBlock & { filename: string })[] = step.block_ids.flatMap((id) => {
      const b = blocks.get(id)
      return b ? [{ id: b.id, guidelineId: b.guideline_id, page: b.page, text: b.text, filename: b.filename }] : []
    })
    let drafts: Draft[]
    let usage: { input_tokens: number; output_tokens: number; cost_micro: number } | null = null
    if (run.generator === 'model') {
      if (!config.modelUrl) return { kind: 'failed', reason: 'no model endpoint is configured (SVC_MODEL_URL)' }
      if (await budgetReached(sql, tenantId)) return { kind: 'budget' }
      try {
        const r = await modelDraftChunk(modelSettings(config), chunk)
        drafts = r.drafts
        usage = { input_tokens: r.inputTokens, output_tokens: r.outputTokens, cost_micro: costMicro(config, r.inputTokens, r.outputTokens) }
      } catch (e) {
        if (e instanceof ModelOutageError) return { kind: 'outage', failure: e.lastFailure }
        if (e instanceof ModelResponseError) return { kind: 'failed', reason: e.message }
        throw e
      }
    } else {
      drafts = draftFromBlocks(chunk)
    }
    const going = await sql.begin(async (tx) => {
      const row = await findRun(tx, tenantId, run.id, { lock: true })
      if (row?.status !== 'running') return false
      const wrote = await checkpointStep(tx, tenantId, run.id, step.step, drafts, uniqueKeys)
      if (wrote && usage) await recordUsage(tx, tenantId, { runKind: GENERATION_RUN, runId: run.id, step: step.step, ...usage })
      return true
    })
    if (!going) return { kind: 'skip' }
  }
  return { kind: 'done' }
}

/** The wait before automatic check `n + 1` (1-based n checks made): the interval, doubling, at most 1 h. */
export function checkBackoffMs(intervalMs: number, checks: number): number {
  return Math.min(3_600_000, intervalMs * 2 ** Math.max(0, checks - 1))
}

/** The job kind (registered in server/job-kinds.ts). */
export function generationRunJobKind() {
  return defineJobKind({
    ...GenerationRunJob,
    maxAttempts: 5,
    prepare: (job, deps) => prepare(deps, job.tenantId, job.payload),
    async handler(tx, job, deps) {
      const { tenantId, payload, prepared } = job
      const row = await findRun(tx, tenantId, payload.runId, { lock: true })
      if (!row || row.status !== 'running' || prepared.kind === 'skip') return
      switch (prepared.kind) {
        case 'done':
          await endRun(tx, deps.links, row, 'succeeded')
          return
        case 'failed':
          await endRun(tx, deps.links, row, 'failed', prepared.reason)
          return
        case 'budget':
          await setRunStatus(tx, row, 'stalled', { pausedReason: 'budget_exceeded', outageChecks: 0 })
          return
        case 'outage': {
          const checks = row.outage_checks + 1
          if (checks >= deps.config.generationOutageChecks) {
            await setRunStatus(tx, row, 'stalled', { pausedReason: 'vendor_outage', outageChecks: checks, errorCode: 'generation_vendor_outage', errorDetail: `the model endpoint is unavailable (last: ${prepared.failure})` })
            await finishTask(tx, { links: deps.links, tenantId, taskKind: 'generation_run', taskId: row.id, resourcePath: runPath(row.question_set_id, row.id), result: 'stalled', attempts: checks })
            return
          }
          await tx`update generation_runs set outage_checks = ${checks}, updated_at = now() where tenant_id = ${tenantId} and id = ${row.id}`
          await enqueueGeneration(tx, tenantId, row.id, new Date(Date.now() + checkBackoffMs(deps.config.generationCheckIntervalMs, checks)))
        }
      }
    },
    async onGiveUp(tx, job, deps) {
      const row = await findRun(tx, job.tenantId, job.payload.runId, { lock: true })
      if (!isActive(row)) return
      await endRun(tx, deps.links, row, 'failed', 'the generation could not be completed')
    },
  })
}
