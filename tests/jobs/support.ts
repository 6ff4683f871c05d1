/**
 * Shared steps of the notification tests: an app wired to the local HTTPS receiver, subscribing,
 * finishing synthetic tasks through finishTask (the product has no HTTP backdoor for that) and
 * waiting for deliveries to settle.
 */
import { call, startApp, type StartOptions, type TestApp } from '../helpers/app'
import { testPki } from '../helpers/https-receiver'
import { finishTask, type FinishTaskInput } from '../../server/notifications/finish'
import { JOB_KINDS } from '../../server/job-kinds'
import { deliveryJobKind } from '../../jobs/deliver'
import { findTask } from '../../server/notifications/tasks'
import type { TaskKind } from '../../server/notifications/outcomes'
import { seedTask } from '../helpers/tasks'

/** Addresses test sends actually connected to (after the SSRF guard passed them). */
export const connectedTo: string[] = []

/**
 * A safety net of every notification test: a send may only ever connect to loopback, even if the
 * SSRF guard under test were broken, so no test traffic leaves the machine.
 */
function loopbackOnly(target: { address: string }): void {
  connectedTo.push(target.address)
  if (!/^127\./.test(target.address) && target.address !== '::1') throw new Error(`test safety net: refused to connect to ${target.address}`)
}

/** An app whose webhooks trust the test CA and may reach `allow` (the receiver's address). */
export async function startNotifyApp(opts: { allow?: string[]; retryInitialMs?: number; totalTimeoutMs?: number; env?: Record<string, string>; runner?: StartOptions['runner'] } = {}): Promise<TestApp> {
  const env: Record<string, string> = {
    SVC_WEBHOOK_CA_FILE: testPki().caFile,
    SVC_WEBHOOK_RETRY_INITIAL_MS: String(opts.retryInitialMs ?? 30),
    ...(opts.allow?.length ? { SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: opts.allow.join(',') } : {}),
    ...opts.env,
  }
  const kinds = { ...JOB_KINDS, deliver_notification: deliveryJobKind({ totalTimeoutMs: opts.totalTimeoutMs ?? 600, beforeConnect: loopbackOnly }) }
  return startApp({ env, runner: opts.runner === false ? false : { pollMs: 10, kinds, ...opts.runner } })
}

/**
 * Creates a subscription through the API and returns its body. The task (a synthetic running row of
 * its kind, see seedTask) is made first when the workspace has none with that id: a subscription
 * must name a task of its kind.
 */
export async function subscribe(app: TestApp, token: string, target: { url: string } | { address: string }, task: { kind?: string; id?: string } = {}) {
  const kind = (task.kind ?? 'document_ingestion') as TaskKind
  const me = await call(app.url, 'GET', '/v1/tenants/me', { token })
  if (me.status !== 200) throw new Error(`tenants/me: ${me.status} ${me.text}`)
  const taskId = task.id ?? Bun.randomUUIDv7()
  const tenantId = me.body.tenant.id as string
  if (!(await app.deps.sql.begin((tx) => findTask(tx, tenantId, kind, taskId)))) await seedTask(app.sql, tenantId, kind, taskId)
  const body = {
    task_kind: kind,
    task_id: taskId,
    ...('url' in target ? { channel: 'webhook', webhook: { url: target.url } } : { channel: 'email', email: { address: target.address } }),
  }
  const r = await call(app.url, 'POST', '/v1/task-notification-subscriptions', { token, body })
  if (r.status !== 201) throw new Error(`subscribe: ${r.status} ${r.text}`)
  return r.body as { id: string; task_kind: string; task_id: string; channel: string }
}

/** Finishes a synthetic task in its own transaction; returns the delivery ids created. */
export async function finish(app: TestApp, input: Omit<FinishTaskInput, 'resourcePath' | 'links'> & { resourcePath?: string }): Promise<string[]> {
  const resourcePath = input.resourcePath ?? `/v1/scenarios/${crypto.randomUUID()}/documents/${input.taskId}`
  return app.sql.begin((tx) => finishTask(tx, { ...input, resourcePath, links: app.deps.links }))
}

/** Reads a delivery through the API. */
export async function getDelivery(app: TestApp, token: string, subscriptionId: string, deliveryId: string) {
  const r = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${subscriptionId}/deliveries/${deliveryId}`, { token })
  if (r.status !== 200) throw new Error(`get delivery: ${r.status} ${r.text}`)
  return r.body
}

/** Polls a delivery until `until` holds (default: no longer pending). */
export async function waitDelivery(app: TestApp, token: string, subscriptionId: string, deliveryId: string,
  until: (d: any) => boolean = (d) => d.status !== 'pending', timeoutMs = 45_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const d = await getDelivery(app, token, subscriptionId, deliveryId)
    if (until(d)) return d
    if (Date.now() > deadline) throw new Error(`delivery did not settle: ${JSON.stringify(d)}`)
    await Bun.sleep(25)
  }
}

/** Parses an SVC-Signature header. */
export function parseSignature(header: string): { t: number; v1: string } {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)
  if (!m) throw new Error(`bad signature header ${header}`)
  return { t: Number(m[1]), v1: m[2]! }
}
