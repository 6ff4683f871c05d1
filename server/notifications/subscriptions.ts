/**
 * Task-notification subscriptions: create (standalone or inline on a task-creating request), read
 * one, list. Owns the `task_notification_subscriptions` table. A standalone subscription must name
 * a task of its kind in the workspace; one made after its task ended gets the terminal notification
 * at once (subscribeToTask); identical subscriptions converge.
 */
import type { LinkBases } from './envelope'
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { charLength } from '../http/json-text'
import { explainPattern } from '../http/pattern-messages'
import { HTTPS_URL_PATTERN, RECIPIENT_EMAIL_PATTERN } from '../../schemas/patterns'
import { PageOf } from '../../schemas/common'
import { Subscription, SubscriptionCreate, SubscriptionListQuery, SubscriptionParams } from '../../schemas/notifications'
import { TASK_KINDS, type TaskKind } from './outcomes'
import { NOTIFICATIONS_READ, NOTIFICATIONS_WRITE } from './access'
import { findTask, lockTask } from './tasks'
import { notifyEndedTask } from './finish'

/** A row of `task_notification_subscriptions`. */
export interface SubscriptionRow {
  id: string
  task_kind: string
  task_id: string
  channel: 'email' | 'webhook'
  email_address: string | null
  webhook_url: string | null
  status: string
  created_at: Date
}

const COLUMNS = 'id, task_kind, task_id, channel, email_address, webhook_url, status, created_at'

/** The API shape of a subscription; the target member of the other channel is absent. */
export function renderSubscription(row: SubscriptionRow) {
  return {
    id: row.id,
    task_kind: row.task_kind,
    task_id: row.task_id,
    channel: row.channel,
    ...(row.email_address !== null ? { email: { address: row.email_address } } : {}),
    ...(row.webhook_url !== null ? { webhook: { url: row.webhook_url } } : {}),
    status: row.status,
    created_at: row.created_at.toISOString(),
  }
}

/** What creating a subscription takes (the standalone body and an inline item both map to it). */
export interface SubscriptionInput {
  taskKind: TaskKind
  taskId: string
  channel: 'email' | 'webhook'
  email?: { address: string } | undefined
  webhook?: { url: string } | undefined
}

/** Why a webhook URL is refused at write time, or null when it is acceptable (https, no userinfo). */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL
  try { url = new URL(raw) } catch { return 'must be an absolute https URL' }
  if (url.protocol !== 'https:') return 'must be an https URL (http and other schemes are refused)'
  if (url.username !== '' || url.password !== '') return 'must not carry credentials'
  if (url.hostname === '') return 'must name a host'
  return null
}

const EMAIL = new RegExp(RECIPIENT_EMAIL_PATTERN)
const NOT_AN_EMAIL = 'must be an email address'
explainPattern(HTTPS_URL_PATTERN, webhookUrlProblem, 'must be an absolute https URL: https://, a host name or address, an optional port, then a path, query or fragment; no userinfo')
explainPattern(RECIPIENT_EMAIL_PATTERN, () => null, NOT_AN_EMAIL)

/**
 * Checks the channel and its target; throws a 422 schema problem whose pointers start with
 * `pointerBase` ("" for the standalone body, "/notifications/3" for an inline item).
 */
export function checkTarget(input: SubscriptionInput, pointerBase = ''): void {
  const errors: { pointer: string; message: string }[] = []
  const other = input.channel === 'email' ? 'webhook' : 'email'
  if (input[input.channel] === undefined) errors.push({ pointer: `${pointerBase}/${input.channel}`, message: `is required when channel is ${input.channel}` })
  if (input[other] !== undefined) errors.push({ pointer: `${pointerBase}/${other}`, message: `must be absent when channel is ${input.channel}` })
  if (input.channel === 'webhook' && input.webhook) {
    const why = webhookUrlProblem(input.webhook.url)
    if (why) errors.push({ pointer: `${pointerBase}/webhook/url`, message: why })
  }
  if (input.channel === 'email' && input.email && (!EMAIL.test(input.email.address) || charLength(input.email.address) > 254)) {
    errors.push({ pointer: `${pointerBase}/email/address`, message: NOT_AN_EMAIL })
  }
  if (errors.length) throw problems.schema(errors)
}

/**
 * Creates one subscription in the caller's transaction (after checkTarget), or returns the existing
 * identical one (same task, channel and target; email addresses compared without case) with
 * `created: false`. Convergent under concurrency too (a unique index; a concurrent identical
 * insert waits for the first to commit and then returns it).
 */
export async function createSubscription(tx: Tx, tenantId: string, input: SubscriptionInput): Promise<{ row: SubscriptionRow; created: boolean }> {
  const email = input.channel === 'email' ? input.email!.address : null
  const url = input.channel === 'webhook' ? input.webhook!.url : null
  const [row] = await tx<SubscriptionRow[]>`
    insert into task_notification_subscriptions (tenant_id, id, task_kind, task_id, channel, email_address, webhook_url)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.taskKind}, ${input.taskId}, ${input.channel}, ${email}, ${url})
    on conflict (tenant_id, task_kind, task_id, channel, (coalesce(lower(email_address), webhook_url))) where not earlier_duplicate do nothing
    returning ${tx.unsafe(COLUMNS)}`
  if (row) return { row, created: true }
  const [existing] = await tx<SubscriptionRow[]>`
    select ${tx.unsafe(COLUMNS)} from task_notification_subscriptions
    where tenant_id = ${tenantId} and task_kind = ${input.taskKind} and task_id = ${input.taskId} and channel = ${input.channel}
      and coalesce(lower(email_address), webhook_url) = ${email !== null ? email.toLowerCase() : url} and not earlier_duplicate`
  if (!existing) throw new Error('an identical subscription conflicted but cannot be read')
  return { row: existing, created: false }
}

/**
 * The standalone subscribe (POST /v1/task-notification-subscriptions), in the caller's transaction:
 * the task id must name a task of that kind in the workspace (else 422 naming /task_id); an
 * identical subscription is the existing one; a new subscription to a task that has already ended
 * gets the task's terminal notification enqueued at once. lockTask makes this and the task's end
 * (finishTask) take turns, so a subscription racing the end gets exactly one notification.
 */
export async function subscribeToTask(tx: Tx, tenantId: string, input: SubscriptionInput, links: LinkBases): Promise<{ row: SubscriptionRow; created: boolean; deliveryId: string | null }> {
  await lockTask(tx, tenantId, input.taskKind, input.taskId)
  const task = await findTask(tx, tenantId, input.taskKind, input.taskId)
  // A domain rule (the id is a well-formed UUID): 422 without errors[], the detail naming the field (Errors rule 1).
  if (!task) throw problems.rule(`task_id names no ${input.taskKind} task of this workspace.`)
  const { row, created } = await createSubscription(tx, tenantId, input)
  if (!created || task.end === null) return { row, created, deliveryId: null }
  const deliveryId = await notifyEndedTask(tx, { tenantId, taskKind: input.taskKind, taskId: input.taskId, subscriptionId: row.id, channel: row.channel, end: task.end, links })
  return { row, created, deliveryId }
}

/** Reads one subscription of a workspace, or null (absent and foreign look the same). */
export async function findSubscription(sql: Tx, tenantId: string, id: string): Promise<SubscriptionRow | null> {
  const [row] = await sql<SubscriptionRow[]>`
    select ${sql.unsafe(COLUMNS)} from task_notification_subscriptions where tenant_id = ${tenantId} and id = ${id}`
  return row ?? null
}

/** Subscription routes. */
export function subscriptionRoutes(deps: AppDeps) {
  const { sql, cursors } = deps

  return new Elysia({ name: 'task-notification-subscriptions' })
    .use(accessControl(deps.authenticate))
    .post('/v1/task-notification-subscriptions', async ({ principal, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const input: SubscriptionInput = { taskKind: body.task_kind, taskId: body.task_id, channel: body.channel, email: body.email, webhook: body.webhook }
      checkTarget(input)
      const result = await runIdempotent(
        { sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) },
        async (tx) => {
          const { row, created } = await subscribeToTask(tx, tenantId, input, deps.links)
          return { status: created ? 201 : 200, body: renderSubscription(row), location: `/v1/task-notification-subscriptions/${row.id}` }
        },
      )
      return replyWith(set, result) as ReturnType<typeof renderSubscription>
    }, {
      access: NOTIFICATIONS_WRITE,
      body: SubscriptionCreate,
      detail: {
        summary: 'Subscribe to a task notification (email or signed https webhook)',
        description: 'task_id must name a task of task_kind in this workspace (else 422 with pointer /task_id). '
          + 'An identical subscription (same task, channel and target) returns the existing one with 200. '
          + 'A new subscription to a task that has already ended gets its terminal notification at once.',
        tags: ['Notifications'],
        responses: responses({ 201: Subscription, 200: Subscription }, [...BODY_PROBLEMS, 'idempotency_conflict', 'conflict']),
      },
    })
    .get('/v1/task-notification-subscriptions', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(SubscriptionListQuery, query)
      if (q.task_kind !== undefined && !(TASK_KINDS as readonly string[]).includes(q.task_kind)) {
        throw problems.schema([{ pointer: '/task_kind', message: `must be one of: ${TASK_KINDS.join(', ')}` }])
      }
      const list = cursors.open(q, cursorScope(tenantId, `subscriptions|${q.task_kind ?? ''}|${q.task_id ?? ''}`))
      const rows = await sql<SubscriptionRow[]>`
        select ${sql.unsafe(COLUMNS)} from task_notification_subscriptions
        where tenant_id = ${tenantId}
          ${list.after !== null ? sql`and id < ${list.after}` : sql``}
          ${q.task_kind !== undefined ? sql`and task_kind = ${q.task_kind}` : sql``}
          ${q.task_id !== undefined ? sql`and task_id = ${q.task_id}` : sql``}
        order by id desc
        limit ${list.fetch}`
      return list.page(rows, (r) => r.id, renderSubscription)
    }, {
      access: NOTIFICATIONS_READ,
      detail: withQuery(SubscriptionListQuery, { summary: 'List task-notification subscriptions, newest first', tags: ['Notifications'], responses: responses({ 200: PageOf(Subscription) }, LIST_PROBLEMS) }),
    })
    .get('/v1/task-notification-subscriptions/:subscriptionId', async ({ principal, params }) => {
      const row = await findSubscription(sql, tenantOf(principal), params.subscriptionId)
      if (!row) throw problems.notFound('subscription')
      return renderSubscription(row)
    }, {
      access: NOTIFICATIONS_READ,
      params: SubscriptionParams,
      detail: { summary: 'Read a task-notification subscription', tags: ['Notifications'], responses: responses({ 200: Subscription }, PATH_PROBLEMS) },
    })
}
