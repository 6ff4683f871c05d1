/**
 * Diff runs in the database and the `diff_run` job (task_id = the run): the re-uploaded guideline is
 * compared with the source it replaces, block by block, and question proposals are made against the
 * base version (diff.ts). Deterministic and local, so the comparison runs in the job's transaction.
 * Owns `diff_runs`.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import { recordUsageEvents } from '../billing/ledger'
import { findVersionById } from '../question-sets/store'
import { findGuideline, guidelineBlocks } from './guidelines'
import { provenanceOf } from './accept'
import { diffBlocks, proposeChanges } from './diff'

/** The job kind name (also the task kind). */
export const DIFF_RUN = 'diff_run'

/** The diff_run job's type (its payload names the row the job works on). */
export const DiffRunJob = jobType({
  name: DIFF_RUN,
  payload: Type.Object({ runId: Type.String() }),
  tenantScoped: true,
})

/** A row of `diff_runs`. */
export interface DiffRunRow {
  tenant_id: string
  id: string
  question_set_id: string
  guideline_id: string
  previous_guideline_id: string
  base_version_id: string
  status: 'queued' | 'running' | 'succeeded' | 'failed'
  result: { summary: Record<string, number>; block_changes: unknown[]; proposals: unknown[] } | null
  error_detail: string | null
  finished_at: Date | null
  created_at: Date
  updated_at: Date
}

/** The REST path of a diff run. */
export const diffRunPath = (questionSetId: string, runId: string) => `/v1/question-sets/${questionSetId}/diff-runs/${runId}`

/** The API shape of a diff run. */
export function renderDiffRun(row: DiffRunRow) {
  return {
    id: row.id,
    question_set_id: row.question_set_id,
    guideline_id: row.guideline_id,
    previous_guideline_id: row.previous_guideline_id,
    base_version_id: row.base_version_id,
    status: row.status,
    ...(row.result ? { summary: row.result.summary, block_changes: row.result.block_changes, proposals: row.result.proposals } : {}),
    ...(row.error_detail !== null ? { error_detail: row.error_detail } : {}),
    ...(row.finished_at !== null ? { finished_at: row.finished_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Reads a diff run, or null. */
export async function findDiffRun(sql: Tx, tenantId: string, id: string, opts: { questionSetId?: string; lock?: boolean } = {}): Promise<DiffRunRow | null> {
  const [row] = await sql<DiffRunRow[]>`
    select * from diff_runs where tenant_id = ${tenantId} and id = ${id}
    ${opts.questionSetId ? sql`and question_set_id = ${opts.questionSetId}` : sql``} ${opts.lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Inserts a queued diff run of a question set. */
export async function insertDiffRun(tx: Tx, tenantId: string, input: {
  id: string; questionSetId: string; guidelineId: string; previousGuidelineId: string | null; baseVersionId: string
}): Promise<DiffRunRow> {
  const [row] = await tx<DiffRunRow[]>`
    insert into diff_runs (tenant_id, id, question_set_id, guideline_id, previous_guideline_id, base_version_id)
    values (${tenantId}, ${input.id}, ${input.questionSetId}, ${input.guidelineId}, ${input.previousGuidelineId}, ${input.baseVersionId})
    returning *`
  return row!
}

/** One page of a question set's diff runs, newest first (rows of `window`). */
export async function listDiffRuns(sql: Tx, tenantId: string, questionSetId: string, window: { after: string | null; fetch: number }): Promise<DiffRunRow[]> {
  return sql<DiffRunRow[]>`
    select * from diff_runs where tenant_id = ${tenantId} and question_set_id = ${questionSetId}
    ${window.after !== null ? sql`and id < ${window.after}` : sql``} order by id desc limit ${window.fetch}`
}

/** Enqueues a diff run's job in the caller's transaction. */
export const enqueueDiffRun = (tx: Tx, tenantId: string, runId: string) => enqueue(tx, DiffRunJob, { tenantId, payload: { runId } })

async function end(tx: Tx, links: LinkBases, row: DiffRunRow, outcome: { result: DiffRunRow['result'] } | { reason: string }): Promise<void> {
  const ok = 'result' in outcome
  await tx`
    update diff_runs set status = ${ok ? 'succeeded' : 'failed'}, result = ${ok ? tx.json(outcome.result as never) : null},
      error_detail = ${ok ? null : outcome.reason}, finished_at = now(), updated_at = now()
    where tenant_id = ${row.tenant_id} and id = ${row.id}`
  if (ok) await recordUsageEvents(tx, row.tenant_id, [{ meter: 'diff_runs', quantity: 1, sourceKind: DIFF_RUN, sourceId: row.id }])
  await finishTask(tx, { links,
    tenantId: row.tenant_id, taskKind: 'diff_run', taskId: row.id, resourcePath: diffRunPath(row.question_set_id, row.id),
    result: ok ? 'succeeded' : 'failed', ...(ok ? {} : { reason: outcome.reason }),
  })
}

const asGen = (rows: Awaited<ReturnType<typeof guidelineBlocks>>) => rows.map((b) => ({ id: b.id, guidelineId: b.guideline_id, page: b.page, text: b.text }))

/** The job kind (registered in server/job-kinds.ts). */
export function diffRunJobKind() {
  return defineJobKind({
    ...DiffRunJob,
    maxAttempts: 3,
    async handler(tx, job, deps) {
      const tenantId = job.tenantId
      const row = await findDiffRun(tx, tenantId, job.payload.runId, { lock: true })
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      const [now, before] = [await findGuideline(tx, tenantId, row.guideline_id), await findGuideline(tx, tenantId, row.previous_guideline_id)]
      const ready = (s?: string) => s === 'ready' || s === 'ready_degraded'
      if (!ready(now?.status) || !ready(before?.status)) {
        await end(tx, deps.links, row, { reason: 'a guideline of the comparison is not processed' })
        return
      }
      const base = await findVersionById(tx, tenantId, row.base_version_id)
      if (!base) {
        await end(tx, deps.links, row, { reason: 'the base version is gone' })
        return
      }
      const oldBlocks = asGen(await guidelineBlocks(tx, tenantId, row.previous_guideline_id))
      const newBlocks = asGen(await guidelineBlocks(tx, tenantId, row.guideline_id))
      const { changes, unchanged } = diffBlocks(oldBlocks, newBlocks)
      const proposals = proposeChanges(changes, oldBlocks, newBlocks, base.questions, await provenanceOf(tx, tenantId, base.id))
      const count = (c: string) => changes.filter((x) => x.change === c).length
      await end(tx, deps.links, row, { result: {
        summary: { blocks_added: count('added'), blocks_removed: count('removed'), blocks_changed: count('changed'), blocks_unchanged: unchanged },
        block_changes: changes,
        proposals,
      } })
    },
    async onGiveUp(tx, job, deps) {
      const row = await findDiffRun(tx, job.tenantId, job.payload.runId, { lock: true })
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      await end(tx, deps.links, row, { reason: 'the comparison could not be completed' })
    },
  })
}
