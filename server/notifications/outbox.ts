/**
 * The transactional outbox of the notification channel: a rendered delivery stored in the caller's
 * transaction (the one that ends its task) with the job of its first attempt, so both commit
 * together or not at all. Apart from deliveries.ts (its routes read subscriptions, whose late
 * subscription path finishes tasks: see finish.ts) so that task finishing imports no route.
 */
import { Type } from '@sinclair/typebox'
import type { Tx } from '../db/connect'
import { enqueue, jobType } from '../../jobs/define'
import { Int } from '../../schemas/common'
import { currentContext, traceparentOf } from '../observability/context'

/** The job kind that makes one delivery attempt (its handler: jobs/deliver.ts; registered in server/job-kinds.ts). */
export const DELIVERY_JOB_KIND = 'deliver_notification'

/** The delivery job's type: the delivery and its retry cycle (absent on jobs enqueued before cycles existed). */
export const DeliveryJob = jobType({
  name: DELIVERY_JOB_KIND,
  payload: Type.Object({ deliveryId: Type.String(), cycle: Type.Optional(Int()) }),
  tenantScoped: true,
})

/** What one delivery is made of when a task finishes. */
export interface NewDelivery {
  tenantId: string
  subscriptionId: string
  deliveryId: string
  taskKind: string
  taskId: string
  eventType: string
  channel: 'email' | 'webhook'
  body: string
  occurredAt: Date
}

/** Stores a rendered delivery and enqueues its first attempt, in the caller's transaction. */
export async function insertDelivery(tx: Tx, d: NewDelivery): Promise<void> {
  // The request (or job) that ended the task: its request id and trace go with the delivery and its webhook.
  const ctx = currentContext()
  await tx`
    insert into notification_deliveries (tenant_id, id, subscription_id, task_kind, task_id, event_type, channel, body, occurred_at, next_attempt_at, request_id, traceparent)
    values (${d.tenantId}, ${d.deliveryId}, ${d.subscriptionId}, ${d.taskKind}, ${d.taskId}, ${d.eventType}, ${d.channel}, ${d.body}, ${d.occurredAt}, now(),
            ${ctx?.requestId ?? null}, ${ctx ? traceparentOf(ctx) : null})`
  await enqueue(tx, DeliveryJob, { tenantId: d.tenantId, payload: { deliveryId: d.deliveryId, cycle: 1 } })
}
