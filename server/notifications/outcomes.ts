/**
 * Task kinds and the outcome table of the notification channel: the spec's "Task outcomes" and
 * "Outcome values emitted" as ONE table. Every (task kind, result) pair that can be notified has
 * exactly one row; a pair without a row is a programming error (finishTask throws).
 */

import { TASK_KINDS, type TaskKind } from '../../schemas/notifications'

export { TASK_KINDS, type TaskKind }

/** How a task ended (or paused, for `stalled`). */
export type TaskResult = 'succeeded' | 'failed' | 'canceled' | 'stalled' | 'unsupported_pending'

/** The notification event types. */
export type EventType = 'task.completed' | 'task.failed' | 'task.stalled'

/** A variant of a result that changes only the summary (a degraded parse, a directive without analog). */
export type OutcomeVariant = 'default' | 'degraded' | 'no_analog'

/** One row of the outcome table. `summary` may contain `<reason>` and `<attempts>`. */
export interface OutcomeRow {
  kind: TaskKind
  result: TaskResult
  /** A summary-only variant of the result; absent on the default row. */
  variant?: Exclude<OutcomeVariant, 'default'>
  eventType: EventType
  status: 'succeeded' | 'failed'
  errorCode: string | null
  summary: string
}

const ok = (kind: TaskKind, summary: string, variant?: OutcomeRow['variant']): OutcomeRow =>
  ({ kind, result: 'succeeded', ...(variant ? { variant } : {}), eventType: 'task.completed', status: 'succeeded', errorCode: null, summary })
const bad = (kind: TaskKind, result: TaskResult, errorCode: string, summary: string): OutcomeRow =>
  ({ kind, result, eventType: 'task.failed', status: 'failed', errorCode, summary })

/**
 * The outcome table, row for row the spec's "Outcome values emitted". canceled is delivered as
 * task.failed with its own code; task.stalled (generation_run only) does not end the task, so the
 * subscription keeps receiving; directive_review has no failure branch.
 */
export const OUTCOME_TABLE: readonly OutcomeRow[] = [
  ok('generation_run', 'question generation completed, look at drafted questions'),
  bad('generation_run', 'failed', 'generation_failed', 'generation failed: <reason>'),
  bad('generation_run', 'canceled', 'generation_canceled', 'generation was canceled'),
  { kind: 'generation_run', result: 'stalled', eventType: 'task.stalled', status: 'failed', errorCode: 'generation_vendor_outage', summary: 'on hold after <attempts> automatic checks; choose Resume' },
  ok('diff_run', 're-upload diff ready for review'),
  bad('diff_run', 'failed', 'diff_failed', 'diff failed: <reason>'),
  ok('document_ingestion', 'ingestion completed'),
  ok('document_ingestion', 'ingestion completed with a degraded parse (some content may be incomplete)', 'degraded'),
  bad('document_ingestion', 'failed', 'document_ingestion_failed', 'ingestion failed: <reason>'),
  bad('document_ingestion', 'unsupported_pending', 'unsupported_pending', 'format not yet supported for automatic ingestion'),
  ok('guideline_ingestion', 'processing completed'),
  ok('guideline_ingestion', 'processing completed with a degraded parse', 'degraded'),
  bad('guideline_ingestion', 'failed', 'guideline_ingestion_failed', 'processing failed: <reason>'),
  bad('guideline_ingestion', 'unsupported_pending', 'unsupported_pending', 'format not yet supported for automatic processing'),
  ok('structure_task', 'structuring completed, look at the proposal'),
  bad('structure_task', 'failed', 'structure_task_failed', 'structuring failed: <reason>'),
  ok('question_set_publish', 'version is published'),
  bad('question_set_publish', 'failed', 'question_set_publish_failed', 'version could not be published'),
  ok('evaluation_run', 'evaluation completed, review answers and decision'),
  bad('evaluation_run', 'failed', 'evaluation_failed', 'evaluation failed'),
  bad('evaluation_run', 'canceled', 'evaluation_canceled', 'evaluation was canceled'),
  ok('report_generated', 'findings report is ready to download'),
  bad('report_generated', 'failed', 'report_failed', 'report could not be generated'),
  ok('directive_review', 'a supersession from a directive needs review'),
  ok('directive_review', 'a confirmed supersession has no analog in the latest directive re-derive', 'no_analog'),
  // Additive (the list grows): a billing reconciliation of an external invoice (docs/billing.md).
  ok('billing_reconciliation', 'billing reconciliation completed, review the findings'),
  bad('billing_reconciliation', 'failed', 'billing_reconciliation_failed', 'billing reconciliation failed: <reason>'),
]

/** A reason or count as it may appear in a summary: one line, at most 200 characters. */
function clean(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

/**
 * The row for a task kind, result and variant, with `<reason>` and `<attempts>` spliced into the
 * summary. A variant the kind does not have falls back to the default row. Throws for a pair the
 * table does not have (a caller bug, never a runtime condition).
 */
export function outcomeOf(kind: TaskKind, result: TaskResult, opts: { variant?: OutcomeVariant; reason?: string; attempts?: number } = {}): OutcomeRow {
  const rows = OUTCOME_TABLE.filter((r) => r.kind === kind && r.result === result)
  const row = rows.find((r) => r.variant !== undefined && r.variant === opts.variant) ?? rows.find((r) => r.variant === undefined)
  if (!row) throw new Error(`task kind ${kind} has no ${result} outcome`)
  const summary = row.summary
    .replace('<reason>', clean(opts.reason ?? '') || 'unknown error')
    .replace('<attempts>', String(opts.attempts ?? 0))
  return { ...row, summary }
}
