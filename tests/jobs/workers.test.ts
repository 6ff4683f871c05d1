/**
 * Real worker processes (`bun server/main.ts --worker`) on one PostgreSQL database:
 * - a worker killed with SIGKILL while deliveries are in flight loses none: after restart every
 *   delivery ends delivered, and the repeats carry the same delivery id and bytes;
 * - two workers deliver 500 notifications with no delivery attempted twice at once;
 * - SIGTERM drains: in-flight deliveries finish, the process exits 0 holding no lease.
 * Multi-process runs need DATABASE_URL; on the embedded database (one in-process PGlite) the file
 * is skipped.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, type TestApp } from '../helpers/app'
import { startReceiver, type Receiver } from '../helpers/https-receiver'
import { spawnWorker, workerEnv, type WorkerProcess } from '../helpers/worker-process'
import { createSubscription } from '../../server/notifications/subscriptions'
import { finishTask } from '../../server/notifications/finish'
import { startNotifyApp } from './support'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): worker processes (SIGKILL during deliveries and the rest of the block): separate worker processes share the database, which the embedded one cannot')

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

const postgres = Boolean(process.env.DATABASE_URL)
let app: TestApp
let receiver: Receiver
let tenant: { id: string }
const workers: WorkerProcess[] = []

beforeAll(async () => {
  if (!postgres) return
  receiver = await startReceiver()
  app = await startNotifyApp({ allow: [receiver.host], retryInitialMs: 50, runner: false })
  tenant = await app.tenant()
  const key = await app.apiKey(tenant.id, ['notifications:write'])
  expect((await call(app.url, 'POST', '/v1/webhook-signing-secret/rotate', { token: key })).status).toBe(200)
}, 120_000)
afterAll(async () => {
  if (!postgres) return
  for (const w of workers) if (w.proc.exitCode === null) await w.kill('SIGKILL')
  await app.stop()
  await receiver.stop()
}, 120_000)

/** `n` tasks, each with one webhook subscription to `path`, finished in one transaction. */
async function makeDeliveries(n: number, path: string): Promise<string[]> {
  return app.sql.begin(async (tx) => {
    const ids: string[] = []
    for (let i = 0; i < n; i++) {
      const taskId = crypto.randomUUID()
      await createSubscription(tx, tenant.id, { taskKind: 'report_generated', taskId, channel: 'webhook', webhook: { url: receiver.url(path) } })
      ids.push(...await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'report_generated', taskId, resourcePath: `/v1/scenarios/s/reports/${taskId}`, result: 'succeeded' }))
    }
    return ids
  })
}

const statuses = async (ids: string[]) =>
  (await app.sql`select status, count(*)::int as n from notification_deliveries where id = any(${ids}::uuid[]) group by status`)
    .reduce((acc, r) => ({ ...acc, [r.status as string]: r.n as number }), {} as Record<string, number>)

const waitAll = async (ids: string[], timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const s = await statuses(ids)
    if ((s.delivered ?? 0) === ids.length) return
    if (Date.now() > deadline) throw new Error(`not all delivered: ${JSON.stringify(s)}`)
    await Bun.sleep(50)
  }
}

describe.skipIf(!postgres)(skipTitle('worker processes (PostgreSQL)', NEEDS_POSTGRES), () => {
  test('SIGKILL while deliveries are in flight: after restart every delivery ends delivered, none lost, repeats carry the same delivery id', async () => {
    receiver.respond((r) => (r.path.startsWith('/crash') ? { status: 200, delayMs: 400 } : { status: 204 }))
    const ids = await makeDeliveries(40, '/crash')
    const env = workerEnv(app, { SVC_JOB_LEASE_MS: '1500', SVC_JOB_POLL_MS: '20', SVC_JOB_CONCURRENCY: '8' })
    const first = await spawnWorker(env)
    workers.push(first)
    await receiver.waitFor((rs) => rs.filter((r) => r.path === '/crash').length >= 12, 30_000)
    // Some requests are being answered right now (400 ms each): kill the worker mid-flight.
    expect(await first.kill('SIGKILL')).not.toBe(0)
    const receivedBeforeKill = new Set(receiver.requests.filter((r) => r.path === '/crash').map((r) => r.deliveryId!))
    const leased = await app.sql`select payload ->> 'deliveryId' as id from jobs where locked_by = ${first.workerId} and locked_until > now()`
    expect(leased.length).toBeGreaterThan(0) // claimed, in flight, now orphaned until their lease lapses
    expect((await statuses(ids)).pending).toBeGreaterThan(0)

    const second = await spawnWorker(env)
    workers.push(second)
    await waitAll(ids, 60_000)
    await second.kill('SIGTERM')

    expect(await statuses(ids)).toEqual({ delivered: 40 })
    const got = receiver.requests.filter((r) => r.path === '/crash')
    expect(new Set(got.map((r) => r.deliveryId))).toEqual(new Set(ids))
    const repeated = ids.filter((id) => receiver.byDelivery(id).length > 1)
    // The orphaned in-flight sends were sent again after the lease: same id, same bytes, each verifiable.
    expect(repeated.length).toBeGreaterThan(0)
    for (const id of repeated) {
      expect(receivedBeforeKill.has(id)).toBe(true)
      const reqs = receiver.byDelivery(id)
      expect(new Set(reqs.map((r) => r.raw.toString('hex'))).size).toBe(1)
      expect(reqs.every((r) => r.headers['svc-delivery-id'] === id && JSON.parse(r.raw.toString()).delivery_id === id)).toBe(true)
    }
    expect(repeated.every((id) => leased.some((l) => l.id === id))).toBe(true)
    const rows = await app.sql`select id, attempts from notification_deliveries where id = any(${ids}::uuid[])`
    expect(rows.every((r) => r.attempts === 1)).toBe(true)
  }, 120_000)

  test('two workers deliver 500 notifications with no delivery attempted twice at once', async () => {
    receiver.respond((r) => (r.path.startsWith('/pair') ? { status: 204, delayMs: Math.floor(Math.random() * 15) } : { status: 204 }))
    const ids = await makeDeliveries(500, '/pair')
    const env = workerEnv(app, { SVC_JOB_POLL_MS: '20', SVC_JOB_CONCURRENCY: '8' })
    const pair = await Promise.all([spawnWorker(env), spawnWorker(env)])
    workers.push(...pair)
    const owners = new Set<string>()
    const deadline = Date.now() + 120_000
    for (;;) {
      for (const r of await app.sql`select distinct locked_by from jobs where locked_by is not null`) owners.add(r.locked_by as string)
      if ((await statuses(ids)).delivered === 500) break
      if (Date.now() > deadline) throw new Error(`not all delivered: ${JSON.stringify(await statuses(ids))}`)
      await Bun.sleep(20)
    }
    await Promise.all(pair.map((w) => w.kill('SIGTERM')))
    expect(owners).toEqual(new Set(pair.map((w) => w.workerId)))
    const got = receiver.requests.filter((r) => r.path === '/pair')
    expect(new Set(got.map((r) => r.deliveryId))).toEqual(new Set(ids))
    expect(ids.filter((id) => receiver.overlaps.has(id))).toEqual([])
    // No crash here, so at-least-once was exactly once.
    expect(got).toHaveLength(500)
  }, 180_000)

  test('SIGTERM drains: in-flight deliveries finish, the process exits 0 and holds no lease', async () => {
    receiver.respond((r) => (r.path.startsWith('/drain') ? { status: 200, delayMs: 700 } : { status: 204 }))
    const ids = await makeDeliveries(6, '/drain')
    const worker = await spawnWorker(workerEnv(app, { SVC_JOB_POLL_MS: '20', SVC_JOB_CONCURRENCY: '4' }))
    workers.push(worker)
    await receiver.waitFor((rs) => rs.filter((r) => r.path === '/drain').length >= 4, 30_000)
    const inFlight = receiver.requests.filter((r) => r.path === '/drain').map((r) => r.deliveryId!)
    const code = await worker.kill('SIGTERM')
    expect(code).toBe(0)
    expect(worker.output()).toContain('"message":"job runner drained"')
    const rows = await app.sql`select id, status from notification_deliveries where id = any(${inFlight}::uuid[])`
    expect(rows.map((r) => r.status)).toEqual(inFlight.map(() => 'delivered'))
    expect(await app.sql`select 1 from jobs where locked_by = ${worker.workerId}`).toHaveLength(0)
    // The rest was never claimed by the drained worker; a new worker finishes it.
    const next = await spawnWorker(workerEnv(app, { SVC_JOB_POLL_MS: '20' }))
    workers.push(next)
    await waitAll(ids, 30_000)
    await next.kill('SIGTERM')
  }, 90_000)
})
