/**
 * The recurring maintenance job: armed once per database however many runners start, purges
 * finished deliveries (with their history) past the retention but never pending ones, destroys
 * expired secret values, removes old dead jobs.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { armMaintenance, MAINTENANCE_JOB_KIND, runMaintenance } from '../../server/notifications/maintenance'
import { JOB_KINDS } from '../../server/job-kinds'
import { startRunner } from '../../jobs/runner'
import { finish, startNotifyApp, subscribe } from './support'
import { indexesNaming, storageOptions, updatesSoFar } from '../helpers/heap-only'

setDefaultTimeout(60_000)

let app: TestApp
beforeAll(async () => { app = await startNotifyApp({ runner: false }) }, 120_000)
afterAll(() => app.stop(), 120_000)

describe('notifications maintenance', () => {
  test('armed exactly once, by however many runners, as a recurring job', async () => {
    await Promise.all([armMaintenance(app.sql), armMaintenance(app.sql)])
    const runners = [startRunner(app.deps, JOB_KINDS, { log: () => {} }), startRunner(app.deps, JOB_KINDS, { log: () => {} })]
    await Bun.sleep(200)
    await Promise.all(runners.map((r) => r.stop()))
    const rows = await app.sql`select kind, run_at from jobs where kind = ${MAINTENANCE_JOB_KIND}`
    expect(rows).toHaveLength(1)
    expect(JOB_KINDS[MAINTENANCE_JOB_KIND]!.repeatEveryMs).toBe(3_600_000)
  })

  test('finished deliveries past the retention go with their history; pending ones and recent ones stay', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['notifications:write'])
    const sub = await subscribe(app, key, { address: 'keep@example.com' }, { kind: 'diff_run' })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push(...await finish(app, { tenantId: t.id, taskKind: 'diff_run', taskId: sub.task_id, result: 'succeeded' }))
    const [oldDelivered, oldPending, recent] = ids as [string, string, string]
    await app.sql`update notification_deliveries set status = 'delivered', attempts = 1, created_at = now() - interval '32 days', updated_at = now() - interval '31 days' where id = ${oldDelivered}`
    await app.sql`insert into notification_delivery_attempts (tenant_id, delivery_id, id, cycle, counted, attempted_at, duration_ms, response_status)
                  values (${t.id}, ${oldDelivered}, ${Bun.randomUUIDv7()}, 1, true, now() - interval '31 days', 5, 204)`
    await app.sql`update notification_deliveries set created_at = now() - interval '90 days', updated_at = now() - interval '90 days' where id = ${oldPending}`
    await app.sql`update notification_deliveries set status = 'dead_lettered', created_at = now() - interval '40 days', updated_at = now() - interval '29 days' where id = ${recent}`
    const deadJob = Bun.randomUUIDv7()
    await app.sql`insert into jobs (id, kind, payload, dead_at) values (${deadJob}, 'x', '{}', now() - interval '31 days')`
    const removed = await app.sql.begin((tx) => runMaintenance(tx))
    expect(removed.deliveries).toBe(1)
    expect(removed.jobs).toBe(1)
    const left = (await app.sql`select id from notification_deliveries where id = any(${ids}::uuid[])`).map((r) => r.id)
    expect(left.sort()).toEqual([oldPending, recent].sort())
    expect(await app.sql`select 1 from notification_delivery_attempts where delivery_id = ${oldDelivered}`).toHaveLength(0)
  })

  test('a delivery\'s finish can be a heap-only update: no index names a column it writes, and pages keep room', async () => {
    // The columns an attempt's finish (jobs/deliver.ts) and a redeliver write. An index naming one
    // of them, as a key or in its predicate, would make every finish write a new entry into every
    // index of the table (migration 030).
    const written = ['status', 'attempts', 'cycle', 'cycle_attempts', 'delivered_at', 'dead_lettered_at', 'dead_letter_reason', 'next_attempt_at', 'pinned_secret_id', 'last_attempt_at', 'updated_at']
    const indexes = await indexesNaming(app.sql, 'notification_deliveries', written)
    expect(indexes.length).toBeGreaterThan(0)
    expect(indexes).toEqual(indexes.map(({ name }) => ({ name, names: null })))
    expect(await storageOptions(app.sql, 'notification_deliveries')).toContain('fillfactor=80')

    // And in storage: finishing a pending delivery whose page has room, the way a delivered attempt
    // does, is counted by PostgreSQL as a heap-only update (this transaction's own statistics).
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['notifications:write'])
    const sub = await subscribe(app, key, { address: 'hot@example.com' }, { kind: 'diff_run' })
    const [id] = await finish(app, { tenantId: t.id, taskKind: 'diff_run', taskId: sub.task_id, result: 'succeeded' })
    const hot = await app.sql.begin(async (tx) => {
      const count = async () => (await updatesSoFar(tx, 'notification_deliveries')).heapOnly
      const before = await count()
      const updated = await tx`
        update notification_deliveries
        set status = 'delivered', attempts = attempts + 1, cycle_attempts = cycle_attempts + 1, delivered_at = now(),
            last_attempt_at = now(), next_attempt_at = null, updated_at = now()
        where tenant_id = ${t.id} and id = ${id!} and status = 'pending'`
      expect(updated.count).toBe(1)
      return (await count()) - before
    })
    expect(hot).toBe(1)
  })
})
