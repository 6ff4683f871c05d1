/**
 * The job queue against its peers on the same PostgreSQL database, in one run: no-op job
 * throughput at concurrency 8 and 32, bulk enqueue rate, and enqueue-to-start latency (p50) of
 *   - this service's runner: `finishBatched` kind (one delete per tick for the jobs that ended together)
 *     and, as "before", the per-job transaction finish every kind had until issue 30;
 *   - graphile-worker with batched completion (`completeJobBatchDelay: 0`, a local queue);
 *   - pg-boss in its batch mode (LISTEN/NOTIFY on, `batchSize` = concurrency, fetching on while
 *     batches come back full; one job per fetch waited a polling interval between fetches).
 * Rounds alternate the systems so a slow spell of a shared machine lands on every side; ratios are
 * the median over rounds of ours / the peer's, measured in the same round. Targets (issue 30):
 * throughput >= 1.0 of graphile-worker (batched) at 8 and 32, enqueue >= 0.8 of its bulk add.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/jobs.bench.ts
 *   BENCH_JOBS=20000 BENCH_ROUNDS=3 BENCH_CONCURRENCY="8 32" BENCH_LATENCY_JOBS=200 BENCH_PREFETCH=100 (the defaults;
 *   BENCH_PREFETCH is graphile-worker's localQueue.size and this runner's prefetch alike)
 */
import { run as runGraphile, makeWorkerUtils } from 'graphile-worker'
import { PgBoss } from 'pg-boss'
import { createTestDatabase } from '../helpers/database'
import { openDatabase } from '../../server/db/connect'
import { migrate } from '../../server/db/migrate'
import { loadConfig } from '../../server/config'
import { wireDeps } from '../../server/wiring'
import { createLogger } from '../../server/observability/log'
import { enqueueJob, enqueueJobs } from '../../jobs/queue'
import { startRunner } from '../../jobs/runner'
import type { JobKind } from '../../jobs/types'
import { median } from './load'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

if (!process.env.DATABASE_URL) {
  console.log('jobs.bench: skipped, needs DATABASE_URL (graphile-worker and pg-boss run on PostgreSQL only)')
  process.exit(0)
}
const total = Number(process.env.BENCH_JOBS ?? 20_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '8 32').split(/\s+/).map(Number)
const latencyJobs = Number(process.env.BENCH_LATENCY_JOBS ?? 200)
const BATCH = 1000
/** Jobs each runner keeps claimed beyond its running ones: graphile-worker's local queue and this runner's prefetch alike. */
const LOCAL = Number(process.env.BENCH_PREFETCH ?? 100)

const testDb = await createTestDatabase()
const url = testDb.url!
const config = loadConfig({ ...process.env, DATABASE_URL: url, SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-jobs-bench-')), SVC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') })
const db = await openDatabase({ databaseUrl: url, dataDir: config.dataDir, max: Math.max(...concurrencies) + 2, prepare: true })
await migrate(db.sql)
const deps = wireDeps(config, db, () => false, { log: createLogger({ level: 'error' }) })
const quiet = () => {}

let done = 0
let onStart: ((payload: any) => void) | undefined
const noop = async (payload: any) => { done++; onStart?.(payload) }
const waitFor = async (n: number) => { while (done < n) await Bun.sleep(2) }
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ i }))
const chunks = <T,>(xs: T[]) => Array.from({ length: Math.ceil(xs.length / BATCH) }, (_, k) => xs.slice(k * BATCH, (k + 1) * BATCH))

/** One system under test: bulk enqueue, drain with `c` at once, and a single enqueue for latency. */
interface System {
  name: string
  enqueue(payloads: object[]): Promise<void>
  one(payload: object): Promise<void>
  start(c: number): Promise<() => Promise<void>>
  cleanup(): Promise<void>
}

const ours = (batched: boolean): System => {
  const kind = batched ? 'bench_noop_batched' : 'bench_noop_tx'
  const kinds: Record<string, JobKind> = { [kind]: { finishBatched: batched, handler: async (_tx, job) => noop(job.payload) } }
  return {
    name: batched ? 'svc (batched finish)' : 'svc (per-job transaction finish, as before)',
    enqueue: async (payloads) => { for (const part of chunks(payloads)) await db.sql.begin((tx) => enqueueJobs(tx, part.map((payload) => ({ kind, tenantId: null, payload: payload as Record<string, unknown> })))) },
    one: async (payload) => { await db.sql.begin((tx) => enqueueJob(tx, { kind, tenantId: null, payload: payload as Record<string, unknown> })) },
    start: async (c) => { const r = startRunner(deps, kinds, { concurrency: c, prefetch: LOCAL, pollMs: 500, log: quiet }); return () => r.stop() },
    cleanup: async () => { await db.sql`delete from jobs where kind = ${kind}` },
  }
}

const utils = await makeWorkerUtils({ connectionString: url })
await utils.migrate()
const graphile: System = {
  name: 'graphile-worker (batched)',
  enqueue: async (payloads) => { for (const part of chunks(payloads)) await utils.addJobs(part.map((payload) => ({ identifier: 'noop', payload }))) },
  one: async (payload) => { await utils.addJob('noop', payload) },
  start: async (c) => {
    const runner = await runGraphile({
      connectionString: url, concurrency: c, noHandleSignals: true, pollInterval: 500, maxPoolSize: c + 2,
      taskList: { noop: async (payload) => noop(payload) },
      logger: new (await import('graphile-worker')).Logger(() => quiet),
      preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0, localQueue: { size: LOCAL } } },
    })
    return () => runner.stop()
  },
  cleanup: async () => { await db.sql`delete from graphile_worker._private_jobs` },
}

const boss = new PgBoss({ connectionString: url, useListenNotify: true, max: Math.max(...concurrencies) + 4, supervise: false, schedule: false } as never)
boss.on('error', () => {})
await boss.start()
await boss.createQueue('noop', { notify: true } as never)
const pgboss: System = {
  name: 'pg-boss',
  enqueue: async (payloads) => { for (const part of chunks(payloads)) await boss.insert('noop', part.map((data) => ({ data }))) },
  one: async (payload) => { await boss.send('noop', payload) },
  start: async (c) => {
    const id = await boss.work('noop', { localConcurrency: 1, batchSize: c, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 0.5, burstWhenBatchFull: true }, async (jobs) => { for (const j of jobs) await noop(j.data) })
    return async () => { await boss.offWork('noop', { id } as never).catch(() => boss.offWork('noop')) }
  },
  cleanup: async () => { await db.sql.unsafe(`delete from pgboss.job where name = 'noop'`).catch(() => {}) },
}

const systems = [ours(true), graphile, pgboss, ours(false)]

/** Bulk-enqueues `total` jobs (jobs/s), then drains them with `c` at once (jobs/s). */
async function throughput(s: System, c: number): Promise<{ enqueue: number; run: number; cpuUs: number }> {
  await s.cleanup()
  done = 0
  const t0 = performance.now()
  await s.enqueue(items(total))
  const enqueue = total / ((performance.now() - t0) / 1000)
  const t1 = performance.now()
  const cpu0 = process.cpuUsage()
  const stop = await s.start(c)
  await waitFor(total)
  const run = total / ((performance.now() - t1) / 1000)
  const cpu = process.cpuUsage(cpu0)
  await stop()
  await s.cleanup()
  return { enqueue, run, cpuUs: (cpu.user + cpu.system) / total }
}

/** Enqueue-to-start delay of single jobs enqueued one at a time into an idle, started worker (p50, ms). */
async function latency(s: System): Promise<number> {
  await s.cleanup()
  done = 0
  const stop = await s.start(8)
  const delays: number[] = []
  onStart = (payload) => { if (typeof payload?.t === 'number') delays.push(performance.now() - payload.t) }
  for (let i = 0; i < latencyJobs; i++) {
    const before = done
    await s.one({ t: performance.now() })
    const deadline = performance.now() + 5_000
    while (done === before && performance.now() < deadline) await Bun.sleep(1)
    await Bun.sleep(5)
  }
  onStart = undefined
  await stop()
  await s.cleanup()
  return median(delays)
}

console.log(`jobs.bench: ${total} no-op jobs per measurement, enqueued in batches of ${BATCH}; concurrency ${concurrencies.join(', ')}; ${rounds} alternating rounds; one PostgreSQL database`)
for (const s of systems) { done = 0; await s.cleanup(); await s.enqueue(items(200)); const stop = await s.start(8); await waitFor(200); await stop() } // warm-up
const results: Record<string, { enqueue: number[]; run: Record<number, number[]>; cpu: number[] }> = {}
for (const s of systems) results[s.name] = { enqueue: [], run: Object.fromEntries(concurrencies.map((c) => [c, []])), cpu: [] }
for (let round = 1; round <= rounds; round++) {
  for (const c of concurrencies) {
    const order = round % 2 === 1 ? systems : [...systems].reverse()
    for (const s of order) {
      const r = await throughput(s, c)
      results[s.name]!.enqueue.push(r.enqueue)
      results[s.name]!.run[c]!.push(r.run)
      results[s.name]!.cpu.push(r.cpuUs)
      console.log(`round ${round} c=${c} ${s.name}: enqueue ${r.enqueue.toFixed(0)}/s, run ${r.run.toFixed(0)} jobs/s, worker CPU ${r.cpuUs.toFixed(0)} us/job`)
    }
  }
}
const lat: Record<string, number> = {}
for (const s of systems) lat[s.name] = await latency(s)

const mine = results[systems[0]!.name]!
const per = (name: string, f: (r: typeof mine, i: number) => number, n: number) => Array.from({ length: n }, (_, i) => f(results[name]!, i))
console.log('\nsystem | enqueue/s (median) | ' + concurrencies.map((c) => `run c=${c} (median)`).join(' | ') + ' | worker-side CPU per job (median) | enqueue-to-start p50')
for (const s of systems) {
  const r = results[s.name]!
  console.log(`${s.name} | ${median(r.enqueue).toFixed(0)} | ${concurrencies.map((c) => median(r.run[c]!).toFixed(0)).join(' | ')} | ${median(r.cpu).toFixed(0)} us | ${lat[s.name]!.toFixed(1)} ms`)
}
for (const peer of systems.slice(1)) {
  const enq = per(peer.name, (r, i) => mine.enqueue[i]! / r.enqueue[i]!, mine.enqueue.length)
  const runs = concurrencies.map((c) => `c=${c} ${median(per(peer.name, (r, i) => mine.run[c]![i]! / r.run[c]![i]!, rounds)).toFixed(2)}`)
  console.log(`ratio svc (batched) / ${peer.name}: enqueue ${median(enq).toFixed(2)}, run ${runs.join(', ')}`)
}

await boss.stop({ graceful: false, wait: true } as never).catch(() => {})
await utils.release()
await db.close()
await testDb.drop()
process.exit(0)
