/**
 * The `guideline_ingestion` job (task_id = the guideline id): reads a guideline source with the same
 * registry and adapters as a case document (parseDocument), cuts it into blocks, and ends it in
 * `ready`, `ready_degraded`, `failed` or `unsupported_pending`, notifying through finishTask in the
 * same transaction. Parsing runs in `prepare`, outside any transaction. The steps and the outcome's
 * writes are those of every ingested file (documents/ingestion-outcome.ts) over the guidelines table.
 */
import type { Tx } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { Int } from '../../schemas/common'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import { parseDocument } from '../documents/ingestion'
import { ingestionSteps, type IngestionOwner } from '../documents/ingestion-outcome'
import { findGuideline, guidelinePath, replaceGuidelineBlocks, setGuidelineStatus, type GuidelineRow } from './guidelines'

/** The job kind name (also the task kind). */
export const GUIDELINE_INGESTION = 'guideline_ingestion'

/** The guideline_ingestion job's type: the guideline and the generation it was enqueued for. */
export const GuidelineIngestionJob = jobType({
  name: GUIDELINE_INGESTION,
  payload: Type.Object({ guidelineId: Type.String(), generation: Int() }),
  tenantScoped: true,
})

/** Enqueues the ingestion of a guideline (in the caller's transaction, after it moved to processing). */
export async function enqueueGuidelineIngestion(tx: Tx, row: GuidelineRow): Promise<string> {
  return enqueue(tx, GuidelineIngestionJob, { tenantId: row.tenant_id, payload: { guidelineId: row.id, generation: row.ingestion_generation } })
}

/** Guideline sources as an owner of ingested files. */
const guidelineOwner: IngestionOwner<GuidelineRow> = {
  taskKind: 'guideline_ingestion',
  failedErrorCode: 'guideline_ingestion_failed',
  passwordErrorCode: 'guideline_password_protected',
  find: findGuideline,
  parse: async (row, _generation, deps) => {
    const outcome = await parseDocument(row, deps)
    if (outcome.kind !== 'parsed' || !outcome.attachments?.length) return outcome
    // A guideline source keeps no files of its own (an email's attachments, a ZIP's members): say so, never drop them silently.
    const { attachments, ...rest } = outcome
    const n = attachments.length
    return { ...rest, degraded: true, notes: [...rest.notes, `${n} file${n === 1 ? '' : 's'} inside ${n === 1 ? 'was' : 'were'} not read: upload ${n === 1 ? 'it' : 'them'} as guideline sources of ${n === 1 ? 'its' : 'their'} own`] }
  },
  resourcePath: (row) => guidelinePath(row.question_group_id, row.id),
  replaceBlocks: replaceGuidelineBlocks,
  setStatus: setGuidelineStatus,
}

const steps = ingestionSteps(guidelineOwner)

/** The job kind (registered in server/job-kinds.ts). */
export function guidelineIngestionJobKind() {
  return defineJobKind({
    ...GuidelineIngestionJob,
    maxAttempts: 5,
    prepare: (job, deps) => steps.prepare({ tenantId: job.tenantId, id: job.payload.guidelineId, generation: job.payload.generation }, deps),
    handler: (tx, job, deps) => steps.handle(tx, { tenantId: job.tenantId, id: job.payload.guidelineId, generation: job.payload.generation }, job.prepared, deps),
    onGiveUp: (tx, job, deps) => steps.giveUp(tx, { tenantId: job.tenantId, id: job.payload.guidelineId, generation: job.payload.generation }, job.giveUpReason, deps.links),
  })
}
