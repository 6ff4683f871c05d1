/**
 * The `guideline_ingestion` job (task_id = the guideline id): reads a guideline source with the same
 * registry and adapters as a case document (parseDocument), cuts it into blocks, and ends it in
 * `ready`, `ready_degraded`, `failed` or `unsupported_pending`, notifying through finishTask in the
 * same transaction. Parsing runs in `prepare`, outside any transaction.
 */
import type { Tx } from '../db/connect'
import { Type, type Static } from '@sinclair/typebox'
import { Int } from '../../schemas/common'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import { giveUpReason, parseDocument, type IngestionOutcome } from '../documents/ingestion'
import { findGuideline, guidelinePath, replaceGuidelineBlocks, setGuidelineStatus, type GuidelineRow } from './guidelines'

/** The job kind name (also the task kind). */
export const GUIDELINE_INGESTION = 'guideline_ingestion'

/** The guideline_ingestion job's type (its payload names the row the job works on). */
export const GuidelineIngestionJob = jobType({
  name: GUIDELINE_INGESTION,
  payload: Type.Object({ guidelineId: Type.String(), generation: Int() }),
  tenantScoped: true,
})

type Payload = Static<typeof GuidelineIngestionJob.payload>

/** Enqueues the ingestion of a guideline (in the caller's transaction, after it moved to processing). */
export async function enqueueGuidelineIngestion(tx: Tx, row: GuidelineRow): Promise<string> {
  return enqueue(tx, GuidelineIngestionJob, { tenantId: row.tenant_id, payload: { guidelineId: row.id, generation: row.ingestion_generation } })
}

const current = (row: GuidelineRow | null, p: Payload): row is GuidelineRow =>
  row !== null && row.status === 'processing' && row.ingestion_generation === p.generation

/** Writes an outcome: blocks, status and notifications, in the job's transaction. */
async function applyOutcome(tx: Tx, row: GuidelineRow, outcome: IngestionOutcome): Promise<void> {
  const base = { tenantId: row.tenant_id, taskKind: 'guideline_ingestion' as const, taskId: row.id, resourcePath: guidelinePath(row.question_group_id, row.id) }
  switch (outcome.kind) {
    case 'skip':
      return
    case 'unsupported':
      await replaceGuidelineBlocks(tx, row.tenant_id, row.id, [])
      await setGuidelineStatus(tx, row, 'unsupported_pending', { errorCode: 'unsupported_pending', errorDetail: outcome.reason ?? null, pageCount: null, blockCount: 0, pages: null, processed: true })
      await finishTask(tx, { ...base, result: 'unsupported_pending' })
      return
    case 'unreadable':
      await replaceGuidelineBlocks(tx, row.tenant_id, row.id, [])
      await setGuidelineStatus(tx, row, 'failed', { errorCode: 'guideline_ingestion_failed', errorDetail: outcome.reason, pageCount: outcome.pages?.total ?? null, blockCount: 0, pages: outcome.pages ?? null, processed: true })
      await finishTask(tx, { ...base, result: 'failed', reason: outcome.reason })
      return
    case 'parsed':
      await replaceGuidelineBlocks(tx, row.tenant_id, row.id, outcome.blocks)
      await setGuidelineStatus(tx, row, outcome.degraded ? 'ready_degraded' : 'ready', {
        pageCount: outcome.pageCount,
        blockCount: outcome.blocks.length,
        pages: outcome.pages,
        errorDetail: outcome.degraded ? outcome.notes.join('; ') || 'part of the file could not be read' : null,
        processed: true,
      })
      await finishTask(tx, { ...base, result: 'succeeded', degraded: outcome.degraded })
  }
}

/** The job kind (registered in server/job-kinds.ts). */
export function guidelineIngestionJobKind() {
  return defineJobKind({
    ...GuidelineIngestionJob,
    maxAttempts: 5,
    async prepare(job, deps): Promise<IngestionOutcome> {
      const p = job.payload
      const row = await findGuideline(deps.sql, job.tenantId, p.guidelineId)
      if (!current(row, p)) return { kind: 'skip' }
      return parseDocument(row, deps)
    },
    async handler(tx, job, deps) {
      const p = job.payload
      const row = await findGuideline(tx, job.tenantId, p.guidelineId, true)
      if (!current(row, p)) return
      const outcome = job.prepared as IngestionOutcome | undefined
      await applyOutcome(tx, row, !outcome || outcome.kind === 'skip' ? await parseDocument(row, deps) : outcome)
    },
    async onGiveUp(tx, job) {
      const p = job.payload
      const row = await findGuideline(tx, job.tenantId, p.guidelineId, true)
      if (!current(row, p)) return
      await applyOutcome(tx, row, { kind: 'unreadable', reason: giveUpReason(job) })
    },
  })
}
