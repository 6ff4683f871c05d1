/**
 * The job runner with synthetic job kinds over the real database: the job finishes in the
 * handler's transaction, retries with back-off, gives up into onGiveUp, respects leases (crash,
 * takeover, heartbeat), bounds concurrency, never runs a job twice at once across runners, drains
 * on stop, re-arms recurring jobs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import type { TestApp } from '../helpers/app'
import { startApp } from '../helpers/app'
import { enqueueJob } from '../../jobs/queue'
import { runJobsUntilIdle, startRunner, type RunnerOptions } from '../../jobs/runner'
import type { JobKind } from '../../jobs/types'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

let app: TestApp
const quiet: RunnerOptions['log'] = () => {}

beforeAll(async () => {
  app = await startApp({ runner: false })
  await app.sql`create table runner_effects (job_id uuid not null, note text not null, at timestamptz not null default clock_timestamp())`
}, 120_000)
afterAll(() => app.stop(), 120_000)
// Each test starts with no jobs: one that fails before its own clean-up cannot leave a due job for
// the next test's runner to claim (the app runs no runner of its own).
afterEach(async () => { await app.sql`delete from jobs` })

const enqueue = async (kind: string, payload: Record<string, unknown> = {}, runAt?: Date) =>
  app.sql.begin((tx) => enqueueJob(tx, { kind, tenantId: null, payload, runAt }))
const effects = async (jobId: string) => (await app.sql`select note from runner_effects where job_id = ${jobId} order by at`).map((r) => r.note as string)
const jobRow = async (id: string) => (await app.sql`select * from jobs where id = ${id}`)[0]
const until = async (check: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await Bun.sleep(10)
  }
}

describe('job runner', () => {
  test("a job finishes in its handler's transaction; enqueue in a rolled-back transaction creates nothing", async () => {
    const kinds: Record<string, JobKind> = {
      probe: { handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, ${`ran ${job.payload.n}`})` } },
    }
    const id = await enqueue('probe', { n: 7 })
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(1)
    expect(await effects(id)).toEqual(['ran 7'])
    expect(await jobRow(id)).toBeUndefined()
    let lost = ''
    await app.sql.begin(async (tx) => {
      lost = await enqueueJob(tx, { kind: 'probe', tenantId: null, payload: {} })
      throw new Error('caller failed')
    }).catch(() => {})
    expect(await jobRow(lost)).toBeUndefined()
  })

  test('a throwing handler rolls its writes back and is retried with back-off until it succeeds', async () => {
    const runs: { attempt: number; at: number }[] = []
    const kinds: Record<string, JobKind> = {
      flaky: {
        backoffMs: (n) => 100 * n,
        handler: async (tx, job) => {
          runs.push({ attempt: job.attempts, at: Date.now() })
          await tx`insert into runner_effects (job_id, note) values (${job.id}, ${`attempt ${job.attempts}`})`
          if (job.attempts < 3) throw new Error(`boom ${job.attempts}`)
        },
      },
    }
    const id = await enqueue('flaky')
    const runner = startRunner(app.deps, kinds, { pollMs: 10, log: quiet })
    await until(async () => (await jobRow(id)) === undefined)
    await runner.stop()
    expect(runs.map((r) => r.attempt)).toEqual([1, 2, 3])
    expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(95)
    expect(runs[2]!.at - runs[1]!.at).toBeGreaterThanOrEqual(195)
    expect(await effects(id)).toEqual(['attempt 3'])
  })

  test('after max attempts the job is dead, keeps its last error, and onGiveUp runs once in its own transaction', async () => {
    let gaveUp = 0
    const kinds: Record<string, JobKind> = {
      doomed: {
        maxAttempts: 2,
        backoffMs: () => 10,
        handler: async (tx, job) => {
          await tx`insert into runner_effects (job_id, note) values (${job.id}, 'handler')`
          throw new Error(`always fails (${job.attempts})`)
        },
        onGiveUp: async (tx, job) => {
          gaveUp++
          await tx`insert into runner_effects (job_id, note) values (${job.id}, ${`gave up after ${job.attempts}`})`
        },
      },
    }
    const id = await enqueue('doomed')
    const runner = startRunner(app.deps, kinds, { pollMs: 10, log: quiet })
    await until(async () => (await jobRow(id))?.dead_at != null)
    await Bun.sleep(100)
    await runner.stop()
    const row = await jobRow(id)
    expect(row).toMatchObject({ attempts: 2, last_error: 'always fails (2)', locked_by: null })
    expect(gaveUp).toBe(1)
    expect(await effects(id)).toEqual(['gave up after 2'])
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(0)
  })

  test('a job of an unknown kind fails like a throwing handler', async () => {
    const id = await enqueue('no_such_kind')
    await app.sql`update jobs set attempts = 4 where id = ${id}`
    expect(await runJobsUntilIdle(app.deps, {}, { log: quiet })).toBe(1)
    expect(await jobRow(id)).toMatchObject({ attempts: 5, last_error: 'no handler for job kind no_such_kind' })
    expect((await jobRow(id))!.dead_at).toBeInstanceOf(Date)
  })

  test('a job whose every attempt ended its process is dead at its next claim, never run again, with a worker-crashed reason for onGiveUp', async () => {
    const seen: { attempts: number; reason?: string }[] = []
    const kinds: Record<string, JobKind> = {
      poison: {
        maxAttempts: 3,
        handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'ran')` },
        onGiveUp: async (tx, job) => {
          seen.push({ attempts: job.attempts, reason: job.giveUpReason })
          await tx`insert into runner_effects (job_id, note) values (${job.id}, 'gave up')`
        },
      },
    }
    const id = await enqueue('poison')
    // Three claims whose process died (the attempt counted at claim, nothing written after): the lease lapsed.
    await app.sql`update jobs set locked_by = 'killed-process', locked_until = now() - interval '1 second', attempts = 3 where id = ${id}`
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(0)
    const row = (await jobRow(id))!
    expect(row.dead_at).toBeInstanceOf(Date)
    expect(row.locked_by).toBeNull()
    expect(row.last_error).toContain('worker crashed')
    expect(seen).toEqual([{ attempts: 3, reason: expect.stringContaining('worker crashed') }])
    expect(await effects(id)).toEqual(['gave up'])
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(0)
  })

  test('an error with a public reason reaches onGiveUp as the give-up reason', async () => {
    let reason: string | undefined
    const kinds: Record<string, JobKind> = {
      crashy: {
        maxAttempts: 1,
        handler: async () => { throw Object.assign(new Error('internal detail'), { publicReason: 'worker crashed: the parser process ended' }) },
        onGiveUp: async (_tx, job) => { reason = job.giveUpReason },
      },
    }
    const id = await enqueue('crashy')
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(1)
    expect(reason).toBe('worker crashed: the parser process ended')
    expect((await jobRow(id))!.last_error).toBe('internal detail')
  })

  test("a crashed worker's job is claimable again once its lease lapses, not before", async () => {
    const kinds: Record<string, JobKind> = { probe: { handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'recovered')` } } }
    const id = await enqueue('probe')
    // A worker claimed it and died: its lease runs 600 ms more.
    await app.sql`update jobs set locked_by = 'crashed-worker', locked_until = now() + interval '600 milliseconds', attempts = 1 where id = ${id}`
    const started = Date.now()
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(0)
    const runner = startRunner(app.deps, kinds, { pollMs: 10, log: quiet })
    await until(async () => (await jobRow(id)) === undefined)
    await runner.stop()
    expect(Date.now() - started).toBeGreaterThanOrEqual(550)
    expect(await effects(id)).toEqual(['recovered'])
  })

  test('a worker whose lease was taken over finishes nothing', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => { release = r })
    let entered!: () => void
    const inside = new Promise<void>((r) => { entered = r })
    const kinds: Record<string, JobKind> = {
      slow: {
        prepare: async () => { entered(); await gate },
        handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'stale finish')` },
      },
    }
    const id = await enqueue('slow')
    const run = runJobsUntilIdle(app.deps, kinds, { log: quiet })
    await inside
    await app.sql`update jobs set locked_by = 'new-owner', locked_until = now() + interval '1 minute' where id = ${id}`
    release()
    await run
    expect(await effects(id)).toEqual([])
    expect(await jobRow(id)).toMatchObject({ locked_by: 'new-owner' })
    await app.sql`delete from jobs where id = ${id}`
  })

  test('a one-statement finish writes only while the job is owned, and can fall back to the transaction', async () => {
    const fast = (mode: 'fast' | 'fallback', steal: boolean): JobKind => ({
      prepare: async (job) => {
        if (steal) await app.sql`update jobs set locked_by = 'thief' where id = ${job.id}`
        return mode
      },
      finishInOneStatement: async (sql, job, _deps, done) => {
        if (job.prepared === 'fallback') return 'fallback'
        const [row] = await sql<{ owned: number }[]>`
          with done as (${done}),
          w as (insert into runner_effects (job_id, note) select ${job.id}, 'fast' where exists (select 1 from done) returning 1)
          select (select count(*) from done)::int as owned`
        return row!.owned ? 'finished' : 'lost'
      },
      handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'handler')` },
    })
    const owned = await enqueue('fast')
    expect(await runJobsUntilIdle(app.deps, { fast: fast('fast', false) }, { log: quiet })).toBe(1)
    expect(await effects(owned)).toEqual(['fast'])
    expect(await jobRow(owned)).toBeUndefined()
    const lost = await enqueue('fast')
    await runJobsUntilIdle(app.deps, { fast: fast('fast', true) }, { log: quiet })
    expect(await effects(lost)).toEqual([])
    expect(await jobRow(lost)).toMatchObject({ locked_by: 'thief' })
    await app.sql`delete from jobs where id = ${lost}`
    const fallback = await enqueue('fast')
    await runJobsUntilIdle(app.deps, { fast: fast('fallback', false) }, { log: quiet })
    expect(await effects(fallback)).toEqual(['handler'])
    expect(await jobRow(fallback)).toBeUndefined()
  })

  test('the heartbeat extends the lease of a long job, so no other runner takes it', async () => {
    let runs = 0
    const kinds: Record<string, JobKind> = {
      long: {
        prepare: async () => { runs++; await Bun.sleep(1_000) },
        handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'long done')` },
      },
    }
    const id = await enqueue('long')
    const a = startRunner(app.deps, kinds, { pollMs: 10, leaseMs: 300, log: quiet })
    const b = startRunner(app.deps, kinds, { pollMs: 10, leaseMs: 300, log: quiet })
    await until(async () => (await jobRow(id)) === undefined)
    await Promise.all([a.stop(), b.stop()])
    expect(runs).toBe(1)
    expect(await effects(id)).toEqual(['long done'])
  })

  test('concurrency is bounded per runner', async () => {
    let now = 0
    let peak = 0
    const kinds: Record<string, JobKind> = {
      busy: {
        prepare: async () => { now++; peak = Math.max(peak, now); await Bun.sleep(40); now-- },
        handler: async () => {},
      },
    }
    const ids = await Promise.all(Array.from({ length: 15 }, () => enqueue('busy')))
    const runner = startRunner(app.deps, kinds, { pollMs: 10, concurrency: 3, log: quiet })
    await until(async () => (await app.sql`select 1 from jobs where id = any(${ids}::uuid[])`).length === 0)
    await runner.stop()
    expect(peak).toBe(3)
  })

  test('two runners run every job exactly once and never one job twice at once', async () => {
    const inFlight = new Set<string>()
    const ran = new Map<string, number>()
    const by = new Map<string, Set<string>>()
    let overlap = 0
    const kinds: Record<string, JobKind> = {
      shared: {
        prepare: async (job) => {
          if (inFlight.has(job.id)) overlap++
          inFlight.add(job.id)
          await Bun.sleep(5)
          inFlight.delete(job.id)
        },
        handler: async (tx, job) => { ran.set(job.id, (ran.get(job.id) ?? 0) + 1) },
      },
    }
    const ids = await app.sql.begin(async (tx) => {
      const out: string[] = []
      for (let i = 0; i < 100; i++) out.push(await enqueueJob(tx, { kind: 'shared', tenantId: null, payload: { i } }))
      return out
    })
    const runners = [0, 1].map((n) => startRunner(app.deps,
      { shared: { ...kinds.shared!, prepare: async (job, deps) => { (by.get(String(n)) ?? by.set(String(n), new Set()).get(String(n))!).add(job.id); return kinds.shared!.prepare!(job, deps) } } },
      { pollMs: 5, concurrency: 4, log: quiet },
    ))
    await until(async () => (await app.sql`select 1 from jobs where id = any(${ids}::uuid[])`).length === 0, 60_000)
    await Promise.all(runners.map((r) => r.stop()))
    expect(overlap).toBe(0)
    expect(ran.size).toBe(100)
    expect([...ran.values()].every((n) => n === 1)).toBe(true)
    expect((by.get('0')?.size ?? 0) + (by.get('1')?.size ?? 0)).toBe(100)
  })

  test('stop() drains: claims nothing new and lets the running job finish', async () => {
    let entered!: () => void
    const inside = new Promise<void>((r) => { entered = r })
    // When the handler's work ended, against when stop() resolved: an order, not a duration, so a
    // loaded machine cannot make it fail.
    let handlerDone = Infinity
    const kinds: Record<string, JobKind> = {
      drain: {
        prepare: async () => { entered(); await Bun.sleep(300) },
        handler: async (tx, job) => {
          await tx`insert into runner_effects (job_id, note) values (${job.id}, 'finished during drain')`
          handlerDone = performance.now()
        },
      },
    }
    const first = await enqueue('drain')
    const runner = startRunner(app.deps, kinds, { pollMs: 10, log: quiet })
    await inside
    // Due only after stop() has begun: a draining runner must not claim it.
    const later = await enqueue('drain', {}, new Date(Date.now() + 100))
    try {
      await runner.stop()
      const stopped = performance.now()
      expect(handlerDone).toBeLessThanOrEqual(stopped)
      expect(await effects(first)).toEqual(['finished during drain'])
      expect(await jobRow(first)).toBeUndefined()
      expect(await jobRow(later)).toMatchObject({ locked_by: null, attempts: 0 })
    } finally {
      // Never left behind for the next test's runner to claim.
      await app.sql`delete from jobs where id = ${later}`
    }
  })

  test('jobs prefetched but not started are handed back at stop, their claim not counted as a run', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => { release = r })
    let entered!: () => void
    const inside = new Promise<void>((r) => { entered = r })
    const kinds: Record<string, JobKind> = { gated: { prepare: async () => { entered(); await gate }, handler: async () => {} } }
    const ids = [await enqueue('gated'), await enqueue('gated'), await enqueue('gated')]
    const runner = startRunner(app.deps, kinds, { pollMs: 10, concurrency: 1, log: quiet })
    await inside
    await until(async () => (await app.sql`select 1 from jobs where id = any(${ids}::uuid[]) and locked_by is not null`).length === 2)
    const stopping = runner.stop()
    await Bun.sleep(50)
    const rows = await app.sql`select id, locked_by, attempts from jobs where id = any(${ids}::uuid[]) order by id`
    expect(rows.filter((r) => r.locked_by !== null)).toHaveLength(1) // only the running one
    expect(rows.filter((r) => r.locked_by === null).map((r) => r.attempts)).toEqual([0, 0])
    release()
    await stopping
    expect(await app.sql`select 1 from jobs where id = any(${ids}::uuid[])`).toHaveLength(2)
    await app.sql`delete from jobs where id = any(${ids}::uuid[])`
  })

  test('a drain that times out releases the in-flight job for another worker; the late finish is discarded', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => { release = r })
    let entered!: () => void
    const inside = new Promise<void>((r) => { entered = r })
    const kinds: Record<string, JobKind> = {
      stuck: {
        prepare: async () => { entered(); await gate },
        handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'late')` },
      },
    }
    const id = await enqueue('stuck')
    const runner = startRunner(app.deps, kinds, { pollMs: 10, drainTimeoutMs: 100, log: quiet })
    await inside
    await runner.stop()
    expect(await jobRow(id)).toMatchObject({ locked_by: null, locked_until: null, attempts: 0 })
    release()
    await Bun.sleep(100)
    expect(await effects(id)).toEqual([])
    await app.sql`delete from jobs where id = ${id}`
  })

  test('a recurring kind is re-armed after each run instead of deleted', async () => {
    const kinds: Record<string, JobKind> = { tick: { repeatEveryMs: 60_000, handler: async (tx, job) => { await tx`insert into runner_effects (job_id, note) values (${job.id}, 'tick')` } } }
    const id = await enqueue('tick')
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(1)
    const row = await jobRow(id)
    expect(row).toMatchObject({ attempts: 0, locked_by: null, dead_at: null })
    expect(new Date(row!.run_at).getTime() - Date.now()).toBeGreaterThan(50_000)
    expect(await effects(id)).toEqual(['tick'])
    await app.sql`delete from jobs where id = ${id}`
  })
})
