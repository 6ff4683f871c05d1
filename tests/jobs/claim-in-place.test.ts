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

setDefaultTimeout(60_000)

let app: TestApp
beforeAll(async () => { app = await startApp({ runner: false }) }, 120_000)
afterAll(() => app.stop(), 120_000)

describe('a job claim is a heap-only update', () => {
  test('no index names a column a claim writes; pages are half free at insert', async () => {
    const written = ['locked_by', 'locked_until', 'attempts', 'updated_at', 'last_error']
    const indexes = await app.sql<{ name: string; def: string }[]>`
      select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as def from pg_index where indrelid = 'jobs'::regclass`
    expect(indexes.length).toBeGreaterThan(0)
    for (const { name, def } of indexes) {
      for (const column of written) expect({ name, names: new RegExp(`\\b${column}\\b`).test(def) ? column : null }).toEqual({ name, names: null })
    }
    const [table] = await app.sql<{ options: string[] | null }[]>`select reloptions as options from pg_class where oid = 'jobs'::regclass`
    expect(table!.options ?? []).toContain('fillfactor=40')
  })

  test('the runner claiming 400 queued deliveries-sized jobs updates every row in place', async () => {
    const kind = `claim_in_place_${crypto.randomUUID().slice(0, 8)}`
    // Jobs the size of a delivery's, enqueued together as a finished task's deliveries are.
    await app.sql.begin((tx) => enqueueJobs(tx, Array.from({ length: 400 }, () => ({
      kind, tenantId: crypto.randomUUID(), payload: { deliveryId: crypto.randomUUID(), cycle: 1 },
    }))))
    const kinds: Record<string, JobKind> = { [kind]: { handler: async () => {} } as unknown as JobKind }
    const { claimed, updates, inPlace } = await app.sql.begin(async (tx) => {
      const stats = async () => (await tx<{ upd: number; hot: number }[]>`
        select coalesce(sum(n_tup_upd), 0)::int as upd, coalesce(sum(n_tup_hot_upd), 0)::int as hot
        from pg_stat_xact_user_tables where relname = 'jobs'`)[0]!
      const before = await stats()
      // The runner's own claim statement, run on this transaction so its statistics are readable here.
      const engine = new Engine({ ...app.deps, sql: tx as never }, kinds, { log: () => {} })
      const jobs = await engine.claim(400)
      const after = await stats()
      return { claimed: jobs.length, updates: after.upd - before.upd, inPlace: after.hot - before.hot }
    })
    expect(claimed).toBe(400)
    expect(updates).toBe(400)
    expect(inPlace).toBe(400)
    await app.sql`delete from jobs where kind = ${kind}`
  })
})
