/**
 * The inline `notifications` array of task-creating requests (document or guideline finalize,
 * generation, diff and structure runs). Each item produces the same subscription resource as
 * POST /v1/task-notification-subscriptions, with the same write permission.
 */
import type { Tx } from '../db/connect'
import { authorize } from '../auth/access'
import { problems, type ProblemError } from '../http/problem'
import type { Principal } from '../auth/principal'
import type { InlineNotification } from '../../schemas/notifications'
import type { TaskKind } from './outcomes'

export type { InlineNotification }
import { NOTIFICATIONS_WRITE } from './access'
import { checkTarget, createSubscription, type SubscriptionRow } from './subscriptions'

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
