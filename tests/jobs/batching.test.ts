/**
 * The queue's batched paths (issue 30): a bulk enqueue is one statement with one notification,
 * jobs of a `finishBatched` kind that end together are finished by one statement only while this
 * worker holds them, attempts still count at claim, and a task's end fans out its deliveries in
 * one enqueue.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { enqueueJobs, JOBS_CHANNEL } from '../../jobs/queue'
import { runJobsUntilIdle, startRunner } from '../../jobs/runner'
import type { JobKind } from '../../jobs/types'
import { postgresClient } from '../../server/db/connect'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000)

let app: TestApp
const quiet = () => {}

beforeAll(async () => { app = await startApp({ runner: false }) }, 120_000)
afterAll(() => app.stop(), 120_000)

const jobs = (kind: string, n: number, payload: (i: number) => Record<string, unknown> = (i) => ({ i })) =>
  Array.from({ length: n }, (_, i) => ({ kind, tenantId: null, payload: payload(i) }))

describe('batched queue paths', () => {
  test('a bulk enqueue stores every job with its payload, in order, and only when the caller commits', async () => {
    const ids = await app.sql.begin((tx) => enqueueJobs(tx, jobs('bulk_probe', 50, (i) => ({ i, text: `quote " and \\ back ${i}` }))))
    expect(ids.length).toBe(50)
    const rows = await app.sql<{ id: string; payload: { i: number; text: string } }[]>`select id, payload from jobs where kind = 'bulk_probe' order by id`
    expect(rows.map((r) => r.id)).toEqual([...ids].sort())
    expect(rows.find((r) => r.id === ids[7])!.payload).toEqual({ i: 7, text: 'quote " and \\ back 7' })
    await app.sql.begin(async (tx) => { await enqueueJobs(tx, jobs('bulk_probe_rolled_back', 5)); throw new Error('caller failed') }).catch(() => {})
    expect((await app.sql`select 1 from jobs where kind = 'bulk_probe_rolled_back'`).length).toBe(0)
    await app.sql`delete from jobs where kind = 'bulk_probe'`
  })

  test.skipIf(!process.env.DATABASE_URL)(skipTitle('a bulk enqueue of 200 due jobs sends one notification', NEEDS_POSTGRES && 'needs PostgreSQL (DATABASE_URL): it counts NOTIFYs, which the embedded runner does not use (it polls)'), async () => {
    const listener = postgresClient(app.config.databaseUrl!, { max: 1, onnotice: () => {} })
    let heard = 0
    await listener.listen(JOBS_CHANNEL, () => { heard++ })
    await app.sql.begin((tx) => enqueueJobs(tx, jobs('notify_probe', 200)))
    await Bun.sleep(300)
    await listener.end()
    expect(heard).toBe(1)
    await app.sql`delete from jobs where kind = 'notify_probe'`
  })

  test('finishBatched: jobs run outside a transaction, are finished together, attempts counted at claim', async () => {
    const seen: number[] = []
    const kinds: Record<string, JobKind> = { batched: { finishBatched: true, handler: async (_sql, job) => { seen.push(job.attempts) } } }
    await app.sql.begin((tx) => enqueueJobs(tx, jobs('batched', 40)))
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet, concurrency: 8 })).toBe(40)
    expect(seen.length).toBe(40)
    expect(seen.every((a) => a === 1)).toBe(true)
    expect((await app.sql`select 1 from jobs where kind = 'batched'`).length).toBe(0)
  })

  test('finishBatched: a job whose lease another worker took over is not finished by the batch', async () => {
    let stolen = ''
    const kinds: Record<string, JobKind> = {
      batched_steal: {
        finishBatched: true,
        handler: async (_sql, job) => {
          if (job.payload.i === 0) { stolen = job.id; await app.sql`update jobs set locked_by = 'new-owner', locked_until = now() + interval '1 minute' where id = ${job.id}` }
        },
      },
    }
    await app.sql.begin((tx) => enqueueJobs(tx, jobs('batched_steal', 6)))
    await runJobsUntilIdle(app.deps, kinds, { log: quiet, concurrency: 6 })
    const left = await app.sql<{ id: string; locked_by: string }[]>`select id, locked_by from jobs where kind = 'batched_steal'`
    expect([...left]).toEqual([{ id: stolen, locked_by: "new-owner" }])
    await app.sql`delete from jobs where kind = 'batched_steal'`
  })

  test('finishBatched: a throwing handler is retried like any other, with its attempt kept', async () => {
    let runs = 0
    const kinds: Record<string, JobKind> = {
      batched_flaky: { finishBatched: true, backoffMs: () => 10, handler: async () => { if (++runs === 1) throw new Error('first run fails') } },
    }
    await app.sql.begin((tx) => enqueueJobs(tx, jobs('batched_flaky', 1)))
    const runner = startRunner(app.deps, kinds, { pollMs: 10, log: quiet })
    const deadline = Date.now() + 10_000
    while ((await app.sql`select 1 from jobs where kind = 'batched_flaky'`).length > 0 && Date.now() < deadline) await Bun.sleep(20)
    await runner.stop()
    expect(runs).toBe(2)
    expect((await app.sql`select 1 from jobs where kind = 'batched_flaky'`).length).toBe(0)
  })

  test('a backlog of short jobs deepens the prefetch queue beyond the configured one; all run once and nothing stays claimed', async () => {
    const total = 300
    let deepest = 0
    const ran = new Set<number>()
    const kinds: Record<string, JobKind> = {
      deep_probe: {
        finishBatched: true,
        handler: async (sql, job) => {
          ran.add(job.payload.i as number)
          // Claimed and not yet started: the prefetch queue of this runner.
          const locked = await sql<{ i: string }[]>`select payload->>'i' as i from jobs where kind = 'deep_probe' and locked_by is not null`
          deepest = Math.max(deepest, locked.filter((r) => !ran.has(Number(r.i))).length)
        },
      },
    }
    await app.sql.begin((tx) => enqueueJobs(tx, jobs('deep_probe', total)))
    const runner = startRunner(app.deps, kinds, { concurrency: 2, prefetch: 2, pollMs: 10, log: quiet })
    const deadline = Date.now() + 30_000
    while ((await app.sql`select 1 from jobs where kind = 'deep_probe' limit 1`).length > 0 && Date.now() < deadline) await Bun.sleep(20)
    await runner.stop()
    expect(ran.size).toBe(total)
    // A queue of the configured prefetch never holds more than 2 waiting jobs.
    expect(deepest).toBeGreaterThan(2)
    expect((await app.sql`select 1 from jobs where kind = 'deep_probe'`).length).toBe(0)
  })
})
