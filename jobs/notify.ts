/**
 * The single place where a task reaches a terminal (or stalled) state on the notification channel.
 * In the caller's transaction, next to the task's own state change, it renders the envelope once
 * per active subscription of the task, stores it verbatim and enqueues its delivery, so a task's
 * end and its notifications commit together or not at all (the transactional outbox).
 */
import type { Tx } from '../server/db/connect'
import { outcomeOf, TASK_KINDS, OUTCOME_TABLE, type TaskKind, type TaskResult } from '../server/notifications/outcomes'
import { renderEnvelope, taskLinks } from '../server/notifications/envelope'
import { insertDelivery } from '../server/notifications/deliveries'

export type { TaskKind, TaskResult }
export { TASK_KINDS, OUTCOME_TABLE }

/** What finishing a task takes; see finishTask. */
export interface FinishTaskInput {
  tenantId: string
  taskKind: TaskKind
  taskId: string
  /** The REST path of the task (links.resource), like /v1/scenarios/{id}/documents/{documentId}. */
  resourcePath: string
  result: TaskResult
  /** Spliced into "...failed: <reason>" summaries; one short line, never document content. */
  reason?: string
  /** Spliced into the stalled summary ("on hold after <attempts> automatic checks"). */
  attempts?: number
  /** Selects the "completed with a degraded parse" summary (document and guideline ingestion). */
  degraded?: boolean
  /** Selects the directive_review summary for a confirmed supersession with no analog. */
  noAnalog?: boolean
  /** When the task reached the state (occurred_at = sent_at); now by default. */
  occurredAt?: Date
}

/**
 * In the caller's transaction: renders the envelope once per active subscription of
 * (tenant, task_kind, task_id), stores it verbatim and enqueues its delivery. `reason` is spliced
 * into "...failed: <reason>" summaries; `attempts` into the stalled summary; `degraded` selects the
 * "completed with a degraded parse" summary. resourcePath is like /v1/scenarios/{id}/documents/{documentId}.
 * Returns the delivery ids it created. Throws for a (kind, result) pair the outcome table lacks.
 */
export async function finishTask(tx: Tx, input: FinishTaskInput): Promise<string[]> {
  const row = outcomeOf(input.taskKind, input.result, {
    variant: input.degraded ? 'degraded' : input.noAnalog ? 'no_analog' : 'default',
    reason: input.reason,
    attempts: input.attempts,
  })
  const occurredAt = input.occurredAt ?? new Date()
  const links = taskLinks(input.resourcePath)
  const subscriptions = await tx<{ id: string; channel: 'email' | 'webhook' }[]>`
    select id, channel from task_notification_subscriptions
    where tenant_id = ${input.tenantId} and task_kind = ${input.taskKind} and task_id = ${input.taskId} and status = 'active'
    order by id`
  const ids: string[] = []
  for (const s of subscriptions) {
    const deliveryId = Bun.randomUUIDv7()
    const body = renderEnvelope({
      deliveryId,
      eventType: row.eventType,
      taskKind: input.taskKind,
      taskId: input.taskId,
      tenantId: input.tenantId,
      occurredAt,
      outcome: { status: row.status, summary: row.summary, errorCode: row.errorCode },
      links,
    })
    await insertDelivery(tx, {
      tenantId: input.tenantId, subscriptionId: s.id, deliveryId, taskKind: input.taskKind, taskId: input.taskId,
      eventType: row.eventType, channel: s.channel, body, occurredAt,
    })
    ids.push(deliveryId)
  }
  return ids
}
