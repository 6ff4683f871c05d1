/**
 * What wakes a runner. On PostgreSQL a committed job wakes it by NOTIFY at commit; a job enqueued
 * in the runner's own process used to wake it as well, a few milliseconds after each enqueue, that
 * is before the enqueuing transaction committed: a transaction writing job after job (a bench
 * writing 2,000 deliveries one task at a time) set off about 1,600 empty claims a second, each a
 * locking update of the jobs table. Now those local wakes are for the embedded database only (no
 * notifications there), and share one timer however many jobs are enqueued.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { enqueueJob, onLocalEnqueue } from '../../jobs/queue'
import { startRunner, type Runner } from '../../jobs/runner'
import type { JobKind } from '../../jobs/types'

setDefaultTimeout(60_000)

let app: TestApp
let runner: Runner | undefined
beforeAll(async () => { app = await startApp({ runner: false }) }, 120_000)
afterAll(async () => { await runner?.stop(); await app.stop() }, 120_000)

test('a transaction enqueuing job after job sets off no claims before it commits; its jobs run after the commit', async () => {
  const claims = { jobs: 0, empty: 0 }
  const record = app.deps.metrics.jobClaim.bind(app.deps.metrics)
  app.deps.metrics.jobClaim = (result) => { claims[result]++; record(result) }
  // The runner's LISTEN, awaited below: until it is in place the runner still takes local wakes.
  const listen = app.deps.listen
  let listening: Promise<unknown> = Promise.resolve()
  app.deps.listen = (channel, fn) => (listening = listen(channel, fn)) as ReturnType<typeof listen>
  const ran: number[] = []
  const kinds: Record<string, JobKind> = { wake_probe: { handler: async (_tx, job) => { ran.push(job.payload.i as number) } } }
  // No poll comes round during the test: every claim below is one a wake set off.
  runner = startRunner(app.deps, kinds, { concurrency: 4, pollMs: 600_000, log: () => {} })
  app.deps.listen = listen
  await listening
  for (let waited = 0; claims.empty === 0 && waited < 30_000; waited += 10) await Bun.sleep(10) // its first claim is behind it
  expect(claims).toEqual({ jobs: 0, empty: 1 })

  await app.sql.begin(async (tx) => {
    for (let i = 0; i < 200; i++) {
      await enqueueJob(tx, { kind: 'wake_probe', tenantId: null, payload: { i } })
      await Bun.sleep(2)
    }
    // None before the commit: on PostgreSQL nothing wakes the runner until the NOTIFY at commit (a
    // wake per enqueue gave 401 claims here); embedded, a woken runner's claim waits for the one
    // connection, which this transaction holds.
    expect(claims).toEqual({ jobs: 0, empty: 1 })
  })

  // A job's handler runs inside the transaction that deletes its row, so the 200th handler can
  // return before the last deletes commit: wait for the table, not for the handlers.
  const left = async () => (await app.sql`select count(*)::int as n from jobs where kind = 'wake_probe'`)[0]!.n as number
  for (let waited = 0; (ran.length < 200 || await left() > 0) && waited < 30_000; waited += 20) await Bun.sleep(20)
  expect(await left()).toBe(0)
  expect(ran.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i))
  expect(claims.jobs).toBeGreaterThan(0)
})

test('local wakes (the embedded database\'s) share one timer: a burst of enqueues wakes at most every few milliseconds, and once more after the last', async () => {
  const at: number[] = []
  const stop = onLocalEnqueue(() => { at.push(performance.now()) })
  try {
    let lastEnqueue = 0
    const t0 = performance.now()
    await app.sql.begin(async (tx) => {
      for (let i = 0; i < 100; i++) {
        await enqueueJob(tx, { kind: 'wake_count_probe', tenantId: null, payload: { i } })
        lastEnqueue = performance.now()
      }
      await tx`delete from jobs where kind = 'wake_count_probe'`
    })
    const burst = lastEnqueue - t0
    await Bun.sleep(300)
    // Three timers per enqueue gave 300 wakes; one shared timer at most one per ~5 ms of the burst,
    // plus the two after it (30 and 120 ms after the last enqueue).
    expect(at.length).toBeLessThanOrEqual(Math.ceil(burst / 4) + 4)
    expect(at.filter((t) => t > lastEnqueue + 20).length).toBeGreaterThanOrEqual(2)
  } finally {
    stop()
  }
})
