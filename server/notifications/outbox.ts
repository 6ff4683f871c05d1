/**
 * The transactional outbox of the notification channel: a rendered delivery stored in the caller's
 * transaction (the one that ends its task) with the job of its first attempt, so both commit
 * together or not at all. Apart from deliveries.ts (its routes read subscriptions, whose late
 * subscription path finishes tasks: see finish.ts) so that task finishing imports no route.
 */
import { Type } from '@sinclair/typebox'
import type { Tx } from '../db/connect'
import { enqueueMany, jobType } from '../../jobs/define'
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

/**
 * Stores rendered deliveries and enqueues their first attempts, in the caller's transaction: one
 * insert for the deliveries and one for their jobs with one notification, however many
 * subscriptions the task has (a task's end fans out to all of them at once).
 */
export async function insertDeliveries(tx: Tx, list: NewDelivery[]): Promise<void> {
  if (list.length === 0) return
  // The request (or job) that ended the task: its request id and trace go with the delivery and its webhook.
  const ctx = currentContext()
  const col = <K extends keyof NewDelivery>(k: K) => list.map((d) => d[k])
  await tx`
    insert into notification_deliveries (tenant_id, id, subscription_id, task_kind, task_id, event_type, channel, body, occurred_at, next_attempt_at, request_id, traceparent)
    select d.tenant_id, d.id, d.subscription_id, d.task_kind, d.task_id, d.event_type, d.channel, d.body, d.occurred_at, now(),
           ${ctx?.requestId ?? null}, ${ctx ? traceparentOf(ctx) : null}
    from unnest(${col('tenantId')}::uuid[], ${col('deliveryId')}::uuid[], ${col('subscriptionId')}::uuid[], ${col('taskKind')}::text[],
                ${col('taskId')}::uuid[], ${col('eventType')}::text[], ${col('channel')}::text[], ${col('body')}::text[],
                ${list.map((d) => d.occurredAt.toISOString())}::timestamptz[])
      as d(tenant_id, id, subscription_id, task_kind, task_id, event_type, channel, body, occurred_at)`
  await enqueueMany(tx, DeliveryJob, list.map((d) => ({ tenantId: d.tenantId, payload: { deliveryId: d.deliveryId, cycle: 1 } })))
}
