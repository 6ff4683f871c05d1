/**
 * The inline `notifications` array of task-creating requests (document or guideline finalize,
 * generation, diff and structure runs). Each item produces the same subscription resource as
 * POST /v1/task-notification-subscriptions, with the same write permission.
 */
import { t, type Static } from 'elysia'
import type { Tx } from '../db/connect'
import { authorize } from '../auth/access'
import { problems, type ProblemError } from '../http/problem'
import type { Principal } from '../auth/principal'
import { EmailTarget, WebhookTarget } from '../../schemas/notifications'
import type { TaskKind } from './outcomes'
import { NOTIFICATIONS_WRITE } from './access'
import { checkTarget, createSubscription, type SubscriptionRow } from './subscriptions'

/** One inline item: `{channel: 'email', email: {address}}` or `{channel: 'webhook', webhook: {url}}`. */
export const InlineNotification = t.Object({
  channel: t.Union([t.Literal('email'), t.Literal('webhook')]),
  email: t.Optional(EmailTarget),
  webhook: t.Optional(WebhookTarget),
})
export type InlineNotification = Static<typeof InlineNotification>

/**
 * TypeBox schema of the optional `notifications` body member; use as
 * `notifications: InlineNotifications` in a body schema.
 */
export const InlineNotifications = t.Optional(t.Array(InlineNotification, {
  maxItems: 20,
  description: 'Optional subscriptions to this task: each item is {channel: "email", email: {address}} or {channel: "webhook", webhook: {url}}. Needs the notification write permission.',
}))

/**
 * In the caller's transaction: validates (http URL, bad address -> 422 with pointer
 * /notifications/i/...), checks the principal may write notifications (else 403), and creates one
 * subscription per item, identical to POST /v1/task-notification-subscriptions (an item identical
 * to an earlier one is that subscription, not a second). The task is being created in the caller's
 * transaction, so it has neither ended nor needs looking up. Call it before
 * the task's other writes are relied on: its refusal throws, so the caller's transaction stores nothing.
 */
export async function subscribeInline(tx: Tx, principal: Principal, input: {
  tenantId: string; taskKind: TaskKind; taskId: string; items: InlineNotification[] | undefined
}): Promise<SubscriptionRow[]> {
  const items = input.items ?? []
  if (items.length === 0) return []
  authorize(NOTIFICATIONS_WRITE, principal, { method: 'POST' })
  const inputs = items.map((item) => ({ taskKind: input.taskKind, taskId: input.taskId, channel: item.channel, email: item.email, webhook: item.webhook }))
  const errors = inputs.flatMap((i, n) => {
    try { checkTarget(i, `/notifications/${n}`); return [] } catch (e) { return (e as ProblemError).options.errors ?? [] }
  })
  if (errors.length) throw problems.schema(errors)
  const rows: SubscriptionRow[] = []
  for (const i of inputs) {
    const { row, created } = await createSubscription(tx, input.tenantId, i)
    if (created) rows.push(row) // an item identical to an earlier one is that subscription
  }
  return rows
}
