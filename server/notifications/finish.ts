/**
 * The single place where a task reaches a terminal (or stalled) state on the notification channel.
 * In the caller's transaction, next to the task's own state change, it renders the envelope once
 * per active subscription of the task, stores it verbatim and enqueues its delivery, so a task's
 * end and its notifications commit together or not at all (the transactional outbox).
 */
import type { Tx } from '../db/connect'
import { outcomeOf, TASK_KINDS, OUTCOME_TABLE, type EventType, type TaskKind, type TaskResult } from './outcomes'
import { renderEnvelope, taskLinks, type LinkBases } from './envelope'
import { insertDeliveries, type NewDelivery } from './outbox'
import { lockTaskQuery, type TaskEnd } from './tasks'

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
  /** The bases of the envelope's links (AppDeps.links: SVC_BASE_URL and SVC_UI_BASE_URL). */
  links: LinkBases
}

/**
 * In the caller's transaction: renders the envelope once per active subscription of
 * (tenant, task_kind, task_id), stores it verbatim and enqueues its delivery; a terminal outcome is
 * also kept (task_outcomes) for subscriptions made later. Call it after the task's own state change. `reason` is spliced
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
  // Serialises this end with a subscription to the task made at the same moment: the subscription
  // either committed before (and is read below) or reads the outcome stored here (subscribeToTask).
  // The lock, the outcome and the read of the subscriptions go out together (pipelined on the
  // transaction's one connection): the server runs them in this order, each after the one before,
  // so the read still sees every subscription that committed before the lock was granted. One
  // round trip instead of three, which every document's ingestion paid. Outside a transaction
  // (a pool, whose statements may take different connections) they go one after another.
  const inTransaction = 'savepoint' in tx
  const lock = lockTaskQuery(tx, input.tenantId, input.taskKind, input.taskId)
  const outcome = input.result === 'stalled' ? null : tx`
      insert into task_outcomes (tenant_id, task_kind, task_id, event_type, status, error_code, summary, resource_path, occurred_at)
      values (${input.tenantId}, ${input.taskKind}, ${input.taskId}, ${row.eventType}, ${row.status}, ${row.errorCode}, ${row.summary}, ${input.resourcePath}, ${occurredAt})
      on conflict (tenant_id, task_kind, task_id) do update
      set event_type = excluded.event_type, status = excluded.status, error_code = excluded.error_code, summary = excluded.summary,
          resource_path = excluded.resource_path, occurred_at = excluded.occurred_at, updated_at = now()`
  const read = tx<{ id: string; channel: 'email' | 'webhook' }[]>`
    select id, channel from task_notification_subscriptions
    where tenant_id = ${input.tenantId} and task_kind = ${input.taskKind} and task_id = ${input.taskId} and status = 'active'
    order by id`
  const queries = [lock, ...(outcome ? [outcome] : []), read]
  if (inTransaction) {
    // Sent now, in this order; every one is awaited (a failed one fails the transaction; none is left unobserved).
    for (const q of queries) q.execute()
    const settled = await Promise.allSettled(queries)
    for (const s of settled) if (s.status === 'rejected') throw s.reason
  } else {
    for (const q of queries) await q
  }
  const subscriptions = await read
  const deliveries = subscriptions.map((s) => renderDelivery({
    tenantId: input.tenantId, taskKind: input.taskKind, taskId: input.taskId, subscriptionId: s.id, channel: s.channel,
    eventType: row.eventType, outcome: { status: row.status, summary: row.summary, errorCode: row.errorCode }, resourcePath: input.resourcePath, occurredAt, links: input.links,
  }))
  await insertDeliveries(tx, deliveries)
  return deliveries.map((d) => d.deliveryId)
}

/** One outcome of one task for one subscription; see deliverOutcome. */
interface OutcomeDelivery {
  tenantId: string
  taskKind: TaskKind
  taskId: string
  subscriptionId: string
  channel: 'email' | 'webhook'
  eventType: EventType
  outcome: { status: 'succeeded' | 'failed'; summary: string; errorCode: string | null }
  resourcePath: string
  occurredAt: Date
  links: LinkBases
}

/** Renders the envelope of one delivery, stores it and enqueues its first attempt; returns its id. */
async function deliverOutcome(tx: Tx, d: OutcomeDelivery): Promise<string> {
  const delivery = renderDelivery(d)
  await insertDeliveries(tx, [delivery])
  return delivery.deliveryId
}

/** Renders the envelope of one delivery (a fresh delivery id), to store with insertDeliveries. */
function renderDelivery(d: OutcomeDelivery): NewDelivery {
  const deliveryId = Bun.randomUUIDv7()
  const body = renderEnvelope({
    deliveryId, eventType: d.eventType, taskKind: d.taskKind, taskId: d.taskId, tenantId: d.tenantId,
    occurredAt: d.occurredAt, outcome: d.outcome, links: taskLinks(d.resourcePath, d.links),
  })
  return {
    tenantId: d.tenantId, subscriptionId: d.subscriptionId, deliveryId, taskKind: d.taskKind, taskId: d.taskId,
    eventType: d.eventType, channel: d.channel, body, occurredAt: d.occurredAt,
  }
}

/**
 * For a subscription made after its task ended (in the caller's transaction, which holds lockTask
 * and read the end after taking it): enqueues the task's terminal notification to that one
 * subscription, with the outcome, links and occurred_at finishTask stored when the task ended; a
 * task that ended before those were stored (before migration 013) gets them from its own row.
 * Returns the delivery id.
 */
export async function notifyEndedTask(tx: Tx, input: {
  tenantId: string; taskKind: TaskKind; taskId: string; subscriptionId: string; channel: 'email' | 'webhook'; end: TaskEnd; links: LinkBases
}): Promise<string> {
  const [stored] = await tx<{ event_type: EventType; status: 'succeeded' | 'failed'; error_code: string | null; summary: string; resource_path: string; occurred_at: Date }[]>`
    select event_type, status, error_code, summary, resource_path, occurred_at from task_outcomes
    where tenant_id = ${input.tenantId} and task_kind = ${input.taskKind} and task_id = ${input.taskId}`
  const base = { tenantId: input.tenantId, taskKind: input.taskKind, taskId: input.taskId, subscriptionId: input.subscriptionId, channel: input.channel, links: input.links }
  if (stored) {
    return deliverOutcome(tx, {
      ...base, eventType: stored.event_type, outcome: { status: stored.status, summary: stored.summary, errorCode: stored.error_code },
      resourcePath: stored.resource_path, occurredAt: stored.occurred_at,
    })
  }
  const row = outcomeOf(input.taskKind, input.end.result, { variant: input.end.variant, ...(input.end.reason ? { reason: input.end.reason } : {}) })
  return deliverOutcome(tx, {
    ...base, eventType: row.eventType, outcome: { status: row.status, summary: row.summary, errorCode: row.errorCode },
    resourcePath: input.end.resourcePath, occurredAt: input.end.occurredAt,
  })
}
