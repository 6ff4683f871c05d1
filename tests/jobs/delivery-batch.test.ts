/**
 * The batched finish of webhook deliveries (issue 30): the deliveries whose attempts end in one
 * tick are recorded by one statement that deletes the jobs this worker still holds, marks their
 * deliveries and adds one history row per attempt, each write tied to its job's row. A job another
 * worker took over writes nothing; a failed attempt never takes this path (it may schedule the next
 * attempt, in the transaction of `record`).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { type TestApp } from '../helpers/app'
import { startReceiver, type Receiver } from '../helpers/https-receiver'
import { createSubscription } from '../../server/notifications/subscriptions'
import { rotateSecret } from '../../server/notifications/signing-secret'
import { finishTask } from '../../server/notifications/finish'
import { deliveryJobKind } from '../../jobs/deliver'
import { startRunner } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'
import type { ClaimedJob } from '../../jobs/types'
import { startNotifyApp } from './support'

setDefaultTimeout(60_000)

let app: TestApp
let receiver: Receiver
let tenantId: string
let secretId: string
const quiet = () => {}

beforeAll(async () => {
  receiver = await startReceiver()
  app = await startNotifyApp({ allow: [receiver.host], runner: false })
  tenantId = (await app.tenant()).id
  secretId = (await app.sql.begin((tx) => rotateSecret(tx, app.deps.secretKey, tenantId))).id
}, 120_000)
afterAll(async () => {
  await app.stop()
  await receiver.stop()
}, 120_000)

/** `n` finished tasks with one webhook subscription each; returns their delivery ids. */
async function deliveries(n: number, path: string): Promise<string[]> {
  const ids: string[] = []
  await app.sql.begin(async (tx) => {
    for (let i = 0; i < n; i++) {
      const taskId = crypto.randomUUID()
      await createSubscription(tx, tenantId, { taskKind: 'evaluation_run', taskId, channel: 'webhook', webhook: { url: receiver.url(path) } })
      ids.push(...await finishTask(tx, { links: app.deps.links, tenantId, taskKind: 'evaluation_run', taskId, resourcePath: `/v1/scenarios/s/evaluations/${taskId}`, result: 'succeeded' }))
    }
  })
  return ids
}

const delivery = async (id: string) => (await app.sql<{ status: string; attempts: number; dead_letter_reason: string | null; pinned_secret_id: string | null }[]>`
  select status, attempts, dead_letter_reason, pinned_secret_id from notification_deliveries where tenant_id = ${tenantId} and id = ${id}`)[0]!
const history = (id: string) => app.sql<{ counted: boolean; response_status: number | null; error: string | null }[]>`
  select counted, response_status, error from notification_delivery_attempts where tenant_id = ${tenantId} and delivery_id = ${id}`

describe('batched delivery finish', () => {
  test('one statement records delivered, refused and skipped outcomes of the jobs this worker holds; a job taken over writes nothing', async () => {
    const ids = await deliveries(5, '/batch-statement')
    const worker = `batch-test-${crypto.randomUUID()}`
    const rows = await app.sql<{ id: string; kind: string; tenant_id: string; payload: { deliveryId: string; cycle?: number }; attempts: number }[]>`
      update jobs set locked_by = ${worker}, locked_until = now() + interval '1 minute', attempts = attempts + 1
      where kind = 'deliver_notification' and tenant_id = ${tenantId} and payload->>'deliveryId' = any(${ids})
      returning id, kind, tenant_id, payload, attempts`
    expect(rows.length).toBe(5)
    const jobOf = (deliveryId: string) => {
      const r = rows.find((x) => x.payload.deliveryId === deliveryId)!
      return { id: r.id, kind: r.kind, tenantId: r.tenant_id, payload: r.payload, attempts: r.attempts } as ClaimedJob
    }
    const at = new Date()
    const [ok1, ok2, refused, skipped, takenOver] = ids.map(jobOf) as [ClaimedJob, ClaimedJob, ClaimedJob, ClaimedJob, ClaimedJob]
    ok1.prepared = { kind: 'sent', ok: true, status: 204, at, durationMs: 3, secretId }
    ok2.prepared = { kind: 'sent', ok: true, status: 200, at, durationMs: 4, secretId }
    refused.prepared = { kind: 'refused', reason: 'refused_http_url', at, durationMs: 0 }
    skipped.prepared = { kind: 'skip' }
    takenOver.prepared = { kind: 'sent', ok: true, status: 204, at, durationMs: 5, secretId }
    await app.sql`update jobs set locked_by = 'another-worker' where id = ${takenOver.id}`

    const kind = deliveryJobKind()
    const batch = [ok1, ok2, refused, skipped, takenOver]
    expect(batch.every((j) => kind.finishTogether!.accepts(j))).toBe(true)
    // A failed send is never batched: it may schedule the next attempt, in its own transaction.
    expect(kind.finishTogether!.accepts({ ...ok1, prepared: { kind: 'sent', ok: false, status: 500, at, durationMs: 1, secretId } })).toBe(false)

    const done = app.sql`delete from jobs where locked_by = ${worker} and id = any(${batch.map((j) => j.id)}::uuid[]) returning id`
    const finished = await kind.finishTogether!.run(app.sql, batch, app.deps, done)
    expect([...finished].sort()).toEqual([ok1.id, ok2.id, refused.id, skipped.id].sort())

    expect(await delivery(ok1.payload.deliveryId)).toMatchObject({ status: 'delivered', attempts: 1, pinned_secret_id: secretId })
    expect(await delivery(ok2.payload.deliveryId)).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(await delivery(refused.payload.deliveryId)).toMatchObject({ status: 'dead_lettered', attempts: 0, dead_letter_reason: 'refused_http_url' })
    expect(await delivery(skipped.payload.deliveryId)).toMatchObject({ status: 'pending', attempts: 0 })
    expect(await delivery(takenOver.payload.deliveryId)).toMatchObject({ status: 'pending', attempts: 0 })
    expect([...await history(ok1.payload.deliveryId)]).toEqual([{ counted: true, response_status: 204, error: null }])
    expect([...await history(ok2.payload.deliveryId)]).toEqual([{ counted: true, response_status: 200, error: null }])
    expect([...await history(refused.payload.deliveryId)]).toEqual([{ counted: false, response_status: null, error: 'refused_http_url' }])
    expect((await history(skipped.payload.deliveryId)).length).toBe(0)
    expect((await history(takenOver.payload.deliveryId)).length).toBe(0)
    // The job taken over stays with its new owner, who finishes (and records) it.
    expect([...await app.sql`select locked_by from jobs where id = ${takenOver.id}`]).toEqual([{ locked_by: 'another-worker' }])
    await app.sql`delete from jobs where id = any(${[skipped.id, takenOver.id]}::uuid[])`
    await app.sql`update notification_deliveries set status = 'delivered' where tenant_id = ${tenantId} and id = any(${[skipped.payload.deliveryId, takenOver.payload.deliveryId]}::uuid[])`
  })

  test('through the runner: every delivery is sent once and recorded once, all by the batched finish', async () => {
    const ids = await deliveries(24, '/batch-runner')
    const kind = deliveryJobKind()
    const together = kind.finishTogether!
    const sizes: number[] = []
    const counted = { ...kind, finishTogether: { accepts: together.accepts, run: (...args: Parameters<typeof together.run>) => { sizes.push(args[1].length); return together.run(...args) } } }
    const runner = startRunner(app.deps, { ...JOB_KINDS, deliver_notification: counted }, { concurrency: 8, pollMs: 10, log: quiet })
    const deadline = Date.now() + 45_000
    while ((await app.sql`select 1 from notification_deliveries where tenant_id = ${tenantId} and id = any(${ids}::uuid[]) and status = 'pending'`).length > 0 && Date.now() < deadline) await Bun.sleep(20)
    await runner.stop()

    for (const id of ids) {
      expect(await delivery(id)).toMatchObject({ status: 'delivered', attempts: 1 })
      expect([...await history(id)]).toEqual([{ counted: true, response_status: 204, error: null }])
      expect(receiver.byDelivery(id).length).toBe(1)
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(ids.length)
    expect((await app.sql`select 1 from jobs where kind = 'deliver_notification' and payload->>'deliveryId' = any(${ids})`).length).toBe(0)
  })
})
