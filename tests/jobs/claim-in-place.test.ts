/**
 * A job's claim rewrites its row in place (sql/031_job_claim_hot.sql): no index of `jobs` names a
 * column a claim, a heartbeat or a release writes, and the table's pages keep room for a new
 * version of each of their rows, so a claim of a whole batch of queued jobs is heap-only (HOT) in
 * PostgreSQL's own statistics. Without that room a claim wrote a new row version on another page
 * and an entry into every index of the table, per job.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { startApp } from '../helpers/app'
import { enqueueJobs } from '../../jobs/queue'
import { Engine } from '../../jobs/engine'
import type { JobKind } from '../../jobs/types'
import { indexesNaming, storageOptions, updatesSoFar } from '../helpers/heap-only'

setDefaultTimeout(60_000)

let app: TestApp
beforeAll(async () => { app = await startApp({ runner: false }) }, 120_000)
afterAll(() => app.stop(), 120_000)

describe('a job claim is a heap-only update', () => {
  test('no index names a column a claim writes; pages keep 60% free at insert', async () => {
    const written = ['locked_by', 'locked_until', 'attempts', 'updated_at', 'last_error']
    const indexes = await indexesNaming(app.sql, 'jobs', written)
    expect(indexes.length).toBeGreaterThan(0)
    expect(indexes).toEqual(indexes.map(({ name }) => ({ name, names: null })))
    expect(await storageOptions(app.sql, 'jobs')).toContain('fillfactor=40')
  })

  test('the runner claiming 400 queued deliveries-sized jobs updates every row in place', async () => {
    const kind = `claim_in_place_${crypto.randomUUID().slice(0, 8)}`
    // Jobs the size of a delivery's, enqueued together as a finished task's deliveries are.
    await app.sql.begin((tx) => enqueueJobs(tx, Array.from({ length: 400 }, () => ({
      kind, tenantId: crypto.randomUUID(), payload: { deliveryId: crypto.randomUUID(), cycle: 1 },
    }))))
    const kinds: Record<string, JobKind> = { [kind]: { handler: async () => {} } as unknown as JobKind }
    const { claimed, updates, inPlace } = await app.sql.begin(async (tx) => {
      const before = await updatesSoFar(tx, 'jobs')
      // The runner's own claim statement, run on this transaction so its statistics are readable here.
      const engine = new Engine({ ...app.deps, sql: tx as never }, kinds, { log: () => {} })
      const jobs = await engine.claim(400)
      const after = await updatesSoFar(tx, 'jobs')
      return { claimed: jobs.length, updates: after.updated - before.updated, inPlace: after.heapOnly - before.heapOnly }
    })
    expect(claimed).toBe(400)
    expect(updates).toBe(400)
    expect(inPlace).toBe(400)
    await app.sql`delete from jobs where kind = ${kind}`
  })
})
