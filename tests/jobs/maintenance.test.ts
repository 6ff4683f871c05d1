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
    await app.sql`update notification_deliveries set status = 'delivered', attempts = 1, updated_at = now() - interval '31 days' where id = ${oldDelivered}`
    await app.sql`insert into notification_delivery_attempts (tenant_id, delivery_id, id, cycle, counted, attempted_at, duration_ms, response_status)
                  values (${t.id}, ${oldDelivered}, ${Bun.randomUUIDv7()}, 1, true, now() - interval '31 days', 5, 204)`
    await app.sql`update notification_deliveries set updated_at = now() - interval '90 days' where id = ${oldPending}`
    await app.sql`update notification_deliveries set status = 'dead_lettered', updated_at = now() - interval '29 days' where id = ${recent}`
    const deadJob = Bun.randomUUIDv7()
    await app.sql`insert into jobs (id, kind, payload, dead_at) values (${deadJob}, 'x', '{}', now() - interval '31 days')`
    const removed = await app.sql.begin((tx) => runMaintenance(tx))
    expect(removed.deliveries).toBe(1)
    expect(removed.jobs).toBe(1)
    const left = (await app.sql`select id from notification_deliveries where id = any(${ids}::uuid[])`).map((r) => r.id)
    expect(left.sort()).toEqual([oldPending, recent].sort())
    expect(await app.sql`select 1 from notification_delivery_attempts where delivery_id = ${oldDelivered}`).toHaveLength(0)
  })
})
