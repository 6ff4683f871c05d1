/**
 * Subscriptions made around a task's end (issue 16, item 1): the task id must name a task of that
 * kind in the workspace (else 422 naming /task_id); a subscription to a task that already ended gets
 * its terminal notification at once (one, the same outcome the on-time subscribers got, keeping its
 * delivery id across redelivery); a subscription racing the end gets exactly one notification in
 * either order (50 times each, with the two transactions really interleaved on PostgreSQL: the
 * second one is seen waiting on the task's lock before the first commits); an identical
 * subscription converges on the existing one.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { seedTask } from '../helpers/tasks'
import { bankStatement } from '../helpers/underwriting-pack'
import { settled, uploadAndComplete } from '../helpers/samples'
import { finishTask } from '../../server/notifications/finish'
import { subscribeToTask } from '../../server/notifications/subscriptions'
import type { Tx } from '../../server/db/connect'

setDefaultTimeout(120_000)

const PATH = '/v1/task-notification-subscriptions'
let app: TestApp
let tenant: { id: string }
let key: string

beforeAll(async () => {
  app = await startApp()
  tenant = await app.tenant()
  key = await app.apiKey(tenant.id, ['scenarios:read', 'scenarios:write', 'notifications:write'])
}, 120_000)
afterAll(async () => { await app.stop() }, 120_000)

const email = (address = 'late@example.com') => ({ channel: 'email', email: { address } })
const subscribe = (taskKind: string, taskId: string, target: Record<string, unknown> = email(), headers: Record<string, string> = {}) =>
  call(app.url, 'POST', PATH, { token: key, body: { task_kind: taskKind, task_id: taskId, ...target }, headers })
const deliveriesOfTask = (taskId: string) =>
  app.sql<{ id: string; subscription_id: string; body: string }[]>`select id, subscription_id, body from notification_deliveries where tenant_id = ${tenant.id} and task_id = ${taskId} order by id`
const deliveriesOf = async (subscriptionId: string) =>
  (await call(app.url, 'GET', `${PATH}/${subscriptionId}/deliveries`, { token: key })).body.items as any[]

/** Ends a synthetic running document the way ingestion does: its row, then finishTask, in one transaction. */
async function endDocument(tx: Tx, task: { id: string; path: string }) {
  await tx`update documents set status = 'ready', processed_at = now(), updated_at = now() where tenant_id = ${tenant.id} and id = ${task.id}`
  return finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'document_ingestion', taskId: task.id, resourcePath: task.path, result: 'succeeded' })
}

describe('the task id names a task of that kind in this workspace', () => {
  test('an unknown id, another kind\'s id and another workspace\'s task are 422 naming /task_id; nothing is stored', async () => {
    const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
    const other = await app.tenant()
    const foreign = await seedTask(app.sql, other.id, 'document_ingestion')
    for (const [kind, id] of [['document_ingestion', crypto.randomUUID()], ['evaluation_run', doc.id], ['report_generated', doc.id], ['document_ingestion', foreign.id], ['directive_review', doc.id]] as const) {
      const p = problemOf(await subscribe(kind, id))
      expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
      expect(p.errors).toBeUndefined() // a domain rule: the detail names the field (Errors rule 1)
      expect(p.detail).toBe(`task_id names no ${kind} task of this workspace.`)
      expect(await app.sql`select 1 from task_notification_subscriptions where task_id = ${id}`).toHaveLength(0)
    }
    expect((await subscribe('document_ingestion', doc.id)).status).toBe(201)
  })

  test('every kind accepts its own task; directive_review also a case or a question set (a watch)', async () => {
    for (const kind of ['generation_run', 'diff_run', 'document_ingestion', 'guideline_ingestion', 'structure_task', 'question_set_publish', 'evaluation_run', 'report_generated', 'directive_review'] as const) {
      const task = await seedTask(app.sql, tenant.id, kind)
      const r = await subscribe(kind, task.id)
      expect([kind, r.status]).toEqual([kind, 201])
      expect(await deliveriesOf(r.body.id)).toEqual([]) // still running: nothing yet
    }
    const [set] = await app.sql`insert into question_sets (tenant_id, id, name) values (${tenant.id}, ${Bun.randomUUIDv7()}, 'watched') returning id`
    expect((await subscribe('directive_review', set!.id)).status).toBe(201)
  })
})

describe('an identical subscription converges', () => {
  test('same task, channel and target (address without case): 200 with the existing one, not a second', async () => {
    const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
    const first = await subscribe('document_ingestion', doc.id, email('Ops@Example.com'))
    expect(first.status).toBe(201)
    const again = await subscribe('document_ingestion', doc.id, email('ops@example.com'))
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get('location')).toBe(`${PATH}/${first.body.id}`)
    // Another target, channel or task is another subscription.
    expect((await subscribe('document_ingestion', doc.id, email('other@example.com'))).status).toBe(201)
    expect((await subscribe('document_ingestion', doc.id, { channel: 'webhook', webhook: { url: 'https://hooks.example.test/a' } })).status).toBe(201)
    expect((await subscribe('document_ingestion', doc.id, { channel: 'webhook', webhook: { url: 'https://hooks.example.test/A' } })).status).toBe(201)
    expect((await subscribe('document_ingestion', doc.id, { channel: 'webhook', webhook: { url: 'https://hooks.example.test/a' } })).status).toBe(200)
    expect(await app.sql`select 1 from task_notification_subscriptions where task_id = ${doc.id}`).toHaveLength(4)
  })

  test('concurrent identical requests make one subscription', async () => {
    const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
    const replies = await Promise.all(Array.from({ length: 8 }, () => subscribe('document_ingestion', doc.id)))
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1)
    expect(replies.filter((r) => r.status === 200)).toHaveLength(7)
  })
})

describe('a subscription to a task that already ended', () => {
  test('a document that is already ready: its notification is enqueued at once, the same outcome the on-time subscriber got', async () => {
    const sc = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Late subscriber' } })
    const { doc, complete } = await uploadAndComplete(app, key, sc.body.id, bankStatement(), { notifications: [email('on-time@example.com')] })
    expect(complete.status).toBe(202)
    expect((await settled(app, key, sc.body.id, doc.id)).status).toBe('ready')

    const late = await subscribe('document_ingestion', doc.id, email(), { 'idempotency-key': `late-${doc.id}` })
    expect(late.status).toBe(201)
    const [d] = await deliveriesOf(late.body.id)
    expect(d).toBeDefined()
    const onTimeSub = (await call(app.url, 'GET', `${PATH}?task_id=${doc.id}`, { token: key })).body.items.find((s: any) => s.email.address === 'on-time@example.com')
    const [onTime] = await deliveriesOf(onTimeSub.id)
    expect(d.payload).toEqual({ ...onTime.payload, delivery_id: d.id })
    expect(d.payload).toMatchObject({ event_type: 'task.completed', task_id: doc.id, outcome: { status: 'succeeded', error_code: null } })

    // A replay of the same request, and an identical subscription, add nothing.
    const replay = await subscribe('document_ingestion', doc.id, email(), { 'idempotency-key': `late-${doc.id}` })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect((await subscribe('document_ingestion', doc.id)).status).toBe(200)
    expect((await deliveriesOfTask(doc.id)).filter((r) => r.subscription_id === late.body.id)).toHaveLength(1)
  })

  test('the late delivery keeps its delivery id and body when it is redelivered', async () => {
    const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
    await app.sql.begin((tx) => endDocument(tx, doc))
    // No signing secret in this workspace: the webhook is dead-lettered at once, then redelivered.
    const late = await subscribe('document_ingestion', doc.id, { channel: 'webhook', webhook: { url: 'https://hooks.example.test/late' } })
    expect(late.status).toBe(201)
    const deadline = Date.now() + 20_000
    let [d] = await deliveriesOf(late.body.id)
    while (d.status !== 'dead_lettered' && Date.now() < deadline) { await Bun.sleep(25); [d] = await deliveriesOf(late.body.id) }
    expect(d).toMatchObject({ status: 'dead_lettered', dead_letter_reason: 'refused_no_signing_secret' })
    const again = await call(app.url, 'POST', `${PATH}/${late.body.id}/deliveries/${d.id}/redeliver`, { token: key })
    expect(again.status).toBe(202)
    expect(again.body).toMatchObject({ id: d.id, delivery_id: d.id, cycle: 2, payload: d.payload })
    expect(await deliveriesOf(late.body.id)).toHaveLength(1)
  })

  test('a failed task: the stored task.failed outcome with its reason', async () => {
    const run = await seedTask(app.sql, tenant.id, 'diff_run')
    await app.sql.begin(async (tx) => {
      await tx`update diff_runs set status = 'failed', error_detail = 'the old guideline has no text', finished_at = now() where tenant_id = ${tenant.id} and id = ${run.id}`
      await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'diff_run', taskId: run.id, resourcePath: run.path, result: 'failed', reason: 'the old guideline has no text' })
    })
    const late = await subscribe('diff_run', run.id)
    const [d] = await deliveriesOf(late.body.id)
    expect(d.payload).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'diff_failed', summary: 'diff failed: the old guideline has no text' } })
    expect(d.payload.links.resource).toEndWith(run.path)
  })

  test('a task that ended before outcomes were stored: the outcome comes from its own row', async () => {
    const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
    const endedAt = new Date('2026-03-04T05:06:07.000Z')
    await app.sql`update documents set status = 'failed', error_code = 'document_ingestion_failed', error_detail = 'not a PDF', processed_at = ${endedAt}
                  where tenant_id = ${tenant.id} and id = ${doc.id}`
    const late = await subscribe('document_ingestion', doc.id)
    const [d] = await deliveriesOf(late.body.id)
    expect(d.payload).toMatchObject({
      event_type: 'task.failed', occurred_at: endedAt.toISOString(),
      outcome: { status: 'failed', error_code: 'document_ingestion_failed', summary: 'ingestion failed: not a PDF' },
    })
  })

  test('a stalled generation run has not ended: nothing at once, the terminal event after it ends', async () => {
    const run = await seedTask(app.sql, tenant.id, 'generation_run')
    await app.sql.begin(async (tx) => {
      await tx`update generation_runs set status = 'stalled', paused_reason = 'vendor_outage' where tenant_id = ${tenant.id} and id = ${run.id}`
      await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'generation_run', taskId: run.id, resourcePath: run.path, result: 'stalled', attempts: 5 })
    })
    const late = await subscribe('generation_run', run.id)
    expect(await deliveriesOf(late.body.id)).toEqual([])
    await app.sql.begin(async (tx) => {
      await tx`update generation_runs set status = 'succeeded', finished_at = now() where tenant_id = ${tenant.id} and id = ${run.id}`
      await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'generation_run', taskId: run.id, resourcePath: run.path, result: 'succeeded' })
    })
    const ds = await deliveriesOf(late.body.id)
    expect(ds.map((d) => d.event_type)).toEqual(['task.completed'])
  })
})

describe('a subscription racing the task\'s end gets exactly one notification', () => {
  const ROUNDS = 50

  /** Resolves once a transaction of this database waits for an advisory lock (the task's). */
  async function someoneWaitsOnTheLock(): Promise<void> {
    const deadline = Date.now() + 10_000
    for (;;) {
      const [w] = await app.sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted
                                and database = (select oid from pg_database where datname = current_database())`
      if (w!.n > 0) return
      if (Date.now() > deadline) throw new Error('nobody waited on the task lock')
      await Bun.sleep(2)
    }
  }
  const gate = () => { let open!: () => void; const p = new Promise<void>((r) => { open = r }); return { p, open } }
  /** The embedded database is one session: transactions cannot interleave there, so the orders run one after the other. */
  const interleaved = () => !app.db.embedded

  test(`the task ends first, the subscription arrives before that commits: the subscription enqueues it (x${ROUNDS})`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
      let late: Awaited<ReturnType<typeof subscribe>>
      let ended: string[]
      if (interleaved()) {
        const done = gate()
        const finished = gate()
        const ending = app.sql.begin(async (tx) => { const ids = await endDocument(tx, doc); finished.open(); await done.p; return ids })
        await finished.p
        const subscribing = subscribe('document_ingestion', doc.id)
        await someoneWaitsOnTheLock()
        done.open()
        ;[ended, late] = await Promise.all([ending, subscribing])
      } else {
        ended = await app.sql.begin((tx) => endDocument(tx, doc))
        late = await subscribe('document_ingestion', doc.id)
      }
      expect(late.status).toBe(201)
      expect(ended).toEqual([]) // the end saw no subscription...
      const rows = await deliveriesOfTask(doc.id)
      expect(rows.map((r) => r.subscription_id)).toEqual([late.body.id]) // ...and the subscription enqueued its one notification
      expect(JSON.parse(rows[0]!.body)).toMatchObject({ event_type: 'task.completed', task_id: doc.id })
    }
  })

  test(`the subscription comes first, the task ends before it commits: the end delivers it (x${ROUNDS})`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
      let sub: Awaited<ReturnType<typeof subscribeToTask>>
      let ended: string[]
      const input = { taskKind: 'document_ingestion' as const, taskId: doc.id, channel: 'email' as const, email: { address: 'race@example.com' } }
      if (interleaved()) {
        const done = gate()
        const subscribed = gate()
        const subscribing = app.sql.begin(async (tx) => { const s = await subscribeToTask(tx, tenant.id, input, app.deps.links); subscribed.open(); await done.p; return s })
        await subscribed.p
        const ending = app.sql.begin((tx) => endDocument(tx, doc))
        await someoneWaitsOnTheLock()
        done.open()
        ;[sub, ended] = await Promise.all([subscribing, ending])
      } else {
        sub = await app.sql.begin((tx) => subscribeToTask(tx, tenant.id, input, app.deps.links))
        ended = await app.sql.begin((tx) => endDocument(tx, doc))
      }
      expect(sub).toMatchObject({ created: true, deliveryId: null }) // the subscription saw a running task...
      const rows = await deliveriesOfTask(doc.id)
      expect(rows.map((r) => r.id)).toEqual(ended) // ...and the end delivered to it, once
      expect(rows.map((r) => r.subscription_id)).toEqual([sub.row.id])
    }
  })

  test(`both at once, no order arranged (x${ROUNDS})`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const doc = await seedTask(app.sql, tenant.id, 'document_ingestion')
      const [late] = await Promise.all([subscribe('document_ingestion', doc.id), app.sql.begin((tx) => endDocument(tx, doc))])
      expect(late.status).toBe(201)
      expect((await deliveriesOfTask(doc.id)).map((r) => r.subscription_id)).toEqual([late.body.id])
    }
  })
})
