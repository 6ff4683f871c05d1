/**
 * Generation runs in the database: runs, their plan of steps (the checkpoints) and their drafted
 * questions; API shapes. Owns `generation_runs`, `generation_steps` and `generation_drafts`.
 */
import type { Tx } from '../db/connect'
import type { Draft } from './obligations'
import { renderUsage, runUsage } from '../billing/budgets'

/** Run status values. */
export type RunStatus = 'queued' | 'running' | 'stalled' | 'succeeded' | 'failed' | 'canceled'

/** A row of `generation_runs`. */
export interface RunRow {
  tenant_id: string
  id: string
  question_set_id: string
  guideline_ids: string[]
  generator: 'builtin' | 'model'
  status: RunStatus
  paused_reason: 'vendor_outage' | 'budget_exceeded' | null
  outage_checks: number
  steps_total: number | null
  steps_done: number
  error_code: string | null
  error_detail: string | null
  accepted_version_ids: string[]
  started_at: Date | null
  finished_at: Date | null
  created_at: Date
  updated_at: Date
}

/** A row of `generation_steps`. */
export interface StepRow { step: number; guideline_id: string; chunk: number; block_ids: string[]; drafted: number; done_at: Date | null }

/** The REST path of a run (links.resource of its task). */
export const runPath = (questionSetId: string, runId: string) => `/v1/question-sets/${questionSetId}/generation-runs/${runId}`

/** Reads a run of a workspace (optionally of a set), or null; `lock` holds its row. */
export async function findRun(sql: Tx, tenantId: string, runId: string, opts: { questionSetId?: string; lock?: boolean } = {}): Promise<RunRow | null> {
  const [row] = await sql<RunRow[]>`
    select * from generation_runs where tenant_id = ${tenantId} and id = ${runId}
    ${opts.questionSetId ? sql`and question_set_id = ${opts.questionSetId}` : sql``}
    ${opts.lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Inserts a queued generation run of a question set over its guideline sources. */
export async function insertRun(tx: Tx, tenantId: string, input: { id: string; questionSetId: string; guidelineIds: string[]; generator: string }): Promise<RunRow> {
  const [row] = await tx<RunRow[]>`
    insert into generation_runs (tenant_id, id, question_set_id, guideline_ids, generator)
    values (${tenantId}, ${input.id}, ${input.questionSetId}, ${input.guidelineIds}::uuid[], ${input.generator})
    returning *`
  return row!
}

/** One page of a question set's generation runs, newest first (rows of `window`). */
export async function listRuns(sql: Tx, tenantId: string, questionSetId: string, window: { after: string | null; fetch: number }): Promise<RunRow[]> {
  return sql<RunRow[]>`
    select * from generation_runs
    where tenant_id = ${tenantId} and question_set_id = ${questionSetId} ${window.after !== null ? sql`and id < ${window.after}` : sql``}
    order by id desc limit ${window.fetch}`
}

/** Fields a status change may set. */
export interface RunFields {
  pausedReason?: RunRow['paused_reason']
  outageChecks?: number
  errorCode?: string | null
  errorDetail?: string | null
  started?: boolean
  finished?: boolean
}

/** Moves a run to a status in the caller's transaction; returns the row. */
export async function setRunStatus(tx: Tx, row: Pick<RunRow, 'tenant_id' | 'id'>, status: RunStatus, f: RunFields = {}): Promise<RunRow> {
  const [updated] = await tx<RunRow[]>`
    update generation_runs set
      status = ${status},
      paused_reason = ${f.pausedReason !== undefined ? f.pausedReason : null},
      outage_checks = ${f.outageChecks !== undefined ? tx`${f.outageChecks}` : tx`outage_checks`},
      error_code = ${f.errorCode !== undefined ? f.errorCode : null},
      error_detail = ${f.errorDetail !== undefined ? f.errorDetail : null},
      started_at = ${f.started ? tx`coalesce(started_at, now())` : tx`started_at`},
      finished_at = ${f.finished ? tx`now()` : tx`finished_at`},
      updated_at = now()
    where tenant_id = ${row.tenant_id} and id = ${row.id}
    returning *`
  return updated!
}

/** The steps of a run in order. */
export async function runSteps(sql: Tx, tenantId: string, runId: string): Promise<StepRow[]> {
  return sql<StepRow[]>`
    select step, guideline_id, chunk, block_ids, drafted, done_at from generation_steps
    where tenant_id = ${tenantId} and run_id = ${runId} order by step`
}

/** Writes a run's plan (once): one step per chunk; sets steps_total. */
export async function writePlan(tx: Tx, tenantId: string, runId: string, plan: { guidelineId: string; chunk: number; blockIds: string[] }[]): Promise<void> {
  if (plan.length) {
    const rows = plan.map((p, step) => ({ tenant_id: tenantId, run_id: runId, step, guideline_id: p.guidelineId, chunk: p.chunk, block_ids: p.blockIds }))
    await tx`insert into generation_steps ${tx(rows, 'tenant_id', 'run_id', 'step', 'guideline_id', 'chunk', 'block_ids')} on conflict do nothing`
  }
  await tx`update generation_runs set steps_total = ${plan.length}, updated_at = now() where tenant_id = ${tenantId} and id = ${runId}`
}

/** A stored draft. */
export interface DraftRow { position: number; step: number; key: string; question: Record<string, unknown>; thresholds: unknown[]; citations: unknown[] }

/** The drafts of a run in drafting order. */
export async function runDrafts(sql: Tx, tenantId: string, runId: string): Promise<DraftRow[]> {
  return sql<DraftRow[]>`
    select position, step, key, question, thresholds, citations from generation_drafts
    where tenant_id = ${tenantId} and run_id = ${runId} order by position`
}

/**
 * The checkpoint of one step, in the caller's transaction (which holds the run's row): its drafts
 * (keys made unique within the run), the step marked done, the run's progress. Returns false, and
 * writes nothing, when the step was done already.
 */
export async function checkpointStep(tx: Tx, tenantId: string, runId: string, step: number, drafts: Draft[], uniqueKeys: (d: Draft[], taken: Set<string>) => Draft[]): Promise<boolean> {
  const [s] = await tx<{ done_at: Date | null }[]>`
    select done_at from generation_steps where tenant_id = ${tenantId} and run_id = ${runId} and step = ${step} for update`
  if (!s || s.done_at !== null) return false
  const existing = await tx<{ key: string; position: number }[]>`select key, position from generation_drafts where tenant_id = ${tenantId} and run_id = ${runId}`
  const taken = new Set(existing.map((e) => e.key))
  let position = existing.reduce((m, e) => Math.max(m, e.position + 1), 0)
  for (const d of uniqueKeys(drafts, taken)) {
    const { thresholds, citations, ...question } = d
    await tx`
      insert into generation_drafts (tenant_id, run_id, position, step, key, question, thresholds, citations)
      values (${tenantId}, ${runId}, ${position++}, ${step}, ${question.key}, ${tx.json(question as never)}, ${tx.json(thresholds as never)}, ${tx.json(citations as never)})`
  }
  await tx`update generation_steps set done_at = now(), drafted = ${drafts.length} where tenant_id = ${tenantId} and run_id = ${runId} and step = ${step}`
  await tx`update generation_runs set steps_done = steps_done + 1, outage_checks = 0, updated_at = now() where tenant_id = ${tenantId} and id = ${runId}`
  return true
}

/** The API shape of a draft. */
export function renderDraft(d: DraftRow) {
  return { ...(d.question as object), thresholds: d.thresholds, citations: d.citations } as Record<string, unknown>
}

/** The API shape of a run, with its drafts and usage. */
export async function renderRun(sql: Tx, row: RunRow) {
  const drafts = await runDrafts(sql, row.tenant_id, row.id)
  const usage = await runUsage(sql, row.tenant_id, row.id)
  return {
    id: row.id,
    question_set_id: row.question_set_id,
    guideline_ids: row.guideline_ids,
    generator: row.generator,
    status: row.status,
    ...(row.paused_reason !== null ? { paused_reason: row.paused_reason } : {}),
    outage_checks: row.outage_checks,
    progress: { steps_total: row.steps_total, steps_done: row.steps_done, drafted: drafts.length },
    usage: renderUsage(usage),
    ...(row.error_code !== null ? { error_code: row.error_code } : {}),
    ...(row.error_detail !== null ? { error_detail: row.error_detail } : {}),
    drafted_questions: drafts.map(renderDraft),
    accepted_version_ids: row.accepted_version_ids,
    ...(row.started_at !== null ? { started_at: row.started_at.toISOString() } : {}),
    ...(row.finished_at !== null ? { finished_at: row.finished_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}
