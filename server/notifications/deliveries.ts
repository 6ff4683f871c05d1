/**
 * Deliveries of task notifications: their attempt history, redelivery, and the routes to list, read
 * and redeliver them. Owns `notification_deliveries` and `notification_delivery_attempts`, but for
 * the outbox row written when a task finishes (outbox.ts, which task finishing imports without these
 * routes). The sending itself is the job runner's (jobs/deliver.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Sql, Tx } from '../db/connect'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { cursorScope } from '../http/pagination'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { PageOf, PageQuery } from '../../schemas/common'
import { Delivery, DeliveryParams, SubscriptionParams } from '../../schemas/notifications'
import { enqueue } from '../../jobs/define'
import { DeliveryJob } from './outbox'
import { NOTIFICATIONS_READ, NOTIFICATIONS_WRITE } from './access'
import { findSubscription } from './subscriptions'

/** A row of `notification_deliveries`. */
export interface DeliveryRow {
  id: string
  subscription_id: string
  task_kind: string
  task_id: string
  event_type: string
  channel: 'email' | 'webhook'
  body: string
  status: 'pending' | 'delivered' | 'dead_lettered'
  attempts: number
  cycle: number
  cycle_attempts: number
  pinned_secret_id: string | null
  next_attempt_at: Date | null
  last_attempt_at: Date | null
  delivered_at: Date | null
  dead_lettered_at: Date | null
  dead_letter_reason: string | null
  occurred_at: Date
  created_at: Date
  updated_at: Date
}

/** A row of `notification_delivery_attempts`. */
export interface AttemptRow {
  delivery_id: string
  cycle: number
  counted: boolean
  attempted_at: Date
  duration_ms: number
  response_status: number | null
  error: string | null
}

const COLUMNS = `id, subscription_id, task_kind, task_id, event_type, channel, body, status, attempts, cycle, cycle_attempts,
  pinned_secret_id, next_attempt_at, last_attempt_at, delivered_at, dead_lettered_at, dead_letter_reason, occurred_at, created_at, updated_at`

/** The API shape of a delivery with its history (oldest attempt first) and its stored envelope. */
export function renderDelivery(row: DeliveryRow, history: AttemptRow[]) {
  return {
    id: row.id,
    delivery_id: row.id,
    subscription_id: row.subscription_id,
    task_kind: row.task_kind,
    task_id: row.task_id,
    event_type: row.event_type,
    channel: row.channel,
    status: row.status,
    attempts: row.attempts,
    cycle: row.cycle,
    ...(row.status === 'pending' && row.next_attempt_at ? { next_attempt_at: row.next_attempt_at.toISOString() } : {}),
    ...(row.delivered_at ? { delivered_at: row.delivered_at.toISOString() } : {}),
    ...(row.status === 'dead_lettered' && row.dead_lettered_at ? { dead_lettered_at: row.dead_lettered_at.toISOString() } : {}),
    ...(row.status === 'dead_lettered' && row.dead_letter_reason ? { dead_letter_reason: row.dead_letter_reason } : {}),
    history: history.map((a) => ({
      attempted_at: a.attempted_at.toISOString(),
      cycle: a.cycle,
      counted: a.counted,
      duration_ms: a.duration_ms,
      ...(a.response_status !== null ? { response_status: a.response_status } : {}),
      ...(a.error !== null ? { error: a.error } : {}),
    })),
    payload: JSON.parse(row.body),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** The histories of some deliveries, by delivery id, oldest attempt first. */
export async function historiesOf(sql: Tx, tenantId: string, ids: string[]): Promise<Map<string, AttemptRow[]>> {
  const out = new Map<string, AttemptRow[]>(ids.map((id) => [id, []]))
  if (ids.length === 0) return out
  const rows = await sql<AttemptRow[]>`
    select delivery_id, cycle, counted, attempted_at, duration_ms, response_status, error
    from notification_delivery_attempts
    where tenant_id = ${tenantId} and delivery_id = any(${ids}::uuid[])
    order by delivery_id, id`
  for (const r of rows) out.get(r.delivery_id)?.push(r)
  return out
}

/** Reads one delivery of a subscription (absent, foreign and of another subscription look the same). */
export async function findDelivery(sql: Tx, tenantId: string, subscriptionId: string, deliveryId: string): Promise<DeliveryRow | null> {
  const [row] = await sql<DeliveryRow[]>`
    select ${sql.unsafe(COLUMNS)} from notification_deliveries
    where tenant_id = ${tenantId} and subscription_id = ${subscriptionId} and id = ${deliveryId}`
  return row ?? null
}

/**
 * Moves a dead-lettered delivery back to pending with a fresh retry cycle (first attempt now, then
 * the first back-off), the pinned secret dropped and `attempts` kept; enqueues its attempt. Throws
 * 404 when absent and 409 conflict when the delivery is not dead_lettered.
 */
export async function redeliver(tx: Tx, tenantId: string, subscriptionId: string, deliveryId: string): Promise<DeliveryRow> {
  const [row] = await tx<DeliveryRow[]>`
    update notification_deliveries
    set status = 'pending', cycle = cycle + 1, cycle_attempts = 0, pinned_secret_id = null, next_attempt_at = now(),
        dead_lettered_at = null, dead_letter_reason = null, updated_at = now()
    where tenant_id = ${tenantId} and subscription_id = ${subscriptionId} and id = ${deliveryId} and status = 'dead_lettered'
    returning ${tx.unsafe(COLUMNS)}`
  if (!row) {
    const existing = await findDelivery(tx, tenantId, subscriptionId, deliveryId)
    if (!existing) throw problems.notFound('delivery')
    throw problems.conflict(`Only a dead_lettered delivery can be redelivered; this one is ${existing.status}.`)
  }
  await enqueue(tx, DeliveryJob, { tenantId, payload: { deliveryId, cycle: row.cycle } })
  return row
}

/** Delivery routes (under a subscription). */
export function deliveryRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  const base = '/v1/task-notification-subscriptions/:subscriptionId/deliveries'

  const one = async (db: Sql | Tx, tenantId: string, row: DeliveryRow) =>
    renderDelivery(row, (await historiesOf(db, tenantId, [row.id])).get(row.id)!)

  return new Elysia({ name: 'notification-deliveries' })
    .use(accessControl(deps.authenticate))
    .get(base, async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(PageQuery, query)
      if (!(await findSubscription(sql, tenantId, params.subscriptionId))) throw problems.notFound('subscription')
      const list = cursors.open(q, cursorScope(tenantId, `deliveries|${params.subscriptionId}`))
      const rows = await sql<DeliveryRow[]>`
        select ${sql.unsafe(COLUMNS)} from notification_deliveries
        where tenant_id = ${tenantId} and subscription_id = ${params.subscriptionId}
          ${list.after !== null ? sql`and id < ${list.after}` : sql``}
        order by id desc
        limit ${list.fetch}`
      const histories = await historiesOf(sql, tenantId, rows.slice(0, list.limit).map((r) => r.id))
      return list.page(rows, (r) => r.id, (r) => renderDelivery(r, histories.get(r.id) ?? []))
    }, {
      access: NOTIFICATIONS_READ,
      params: SubscriptionParams,
      detail: withQuery(PageQuery, { summary: "List a subscription's deliveries, newest first", tags: ['Notifications'], responses: responses({ 200: PageOf(Delivery) }, [...LIST_PROBLEMS, 'not_found']) }),
    })
    .get(`${base}/:deliveryId`, async ({ principal, params }) => {
      const tenantId = tenantOf(principal)
      const row = await findDelivery(sql, tenantId, params.subscriptionId, params.deliveryId)
      if (!row) throw problems.notFound('delivery')
      return one(sql, tenantId, row)
    }, {
      access: NOTIFICATIONS_READ,
      params: DeliveryParams,
      detail: { summary: 'Read a delivery with its attempt history', tags: ['Notifications'], responses: responses({ 200: Delivery }, PATH_PROBLEMS) },
    })
    .post(`${base}/:deliveryId/redeliver`, async ({ principal, params, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const result = await runIdempotent(
        { sql, tenantId, method: 'POST', path, body: null, key: idempotencyKeyOf(request) },
        async (tx) => {
          const row = await redeliver(tx, tenantId, params.subscriptionId, params.deliveryId)
          return { status: 202, body: await one(tx, tenantId, row) }
        },
      )
      return replyWith(set, result) as Awaited<ReturnType<typeof one>>
    }, {
      access: NOTIFICATIONS_WRITE,
      params: DeliveryParams,
      detail: {
        summary: 'Redeliver a dead-lettered delivery (a fresh retry cycle; attempts keep accumulating)',
        tags: ['Notifications'],
        responses: responses({ 202: Delivery }, [...PATH_PROBLEMS, 'conflict', 'idempotency_conflict']),
      },
    })
}
