/**
 * The job runner. It claims due jobs with `SELECT ... FOR UPDATE SKIP LOCKED`, marking each with a
 * lease (locked_by, locked_until) that a heartbeat extends while the job runs, and runs a handler
 * per kind with bounded concurrency. A job finishes (is deleted, or re-armed when recurring) in the
 * same transaction as its handler's writes; a throwing handler rolls back and the job is retried
 * with back-off until its kind's max attempts, then marked dead and the kind's onGiveUp runs.
 * A crash at any moment leaves the job claimable again once its lease lapses; a worker that lost
 * its lease never finishes the job (the new owner does). N runners on one database never run a
 * job twice at once. stop() drains: no new claims, in-flight jobs finish (or are released).
 *
 * Throughput: a runner keeps up to `prefetch` claimed jobs queued beyond its running ones (so a
 * freed slot starts work without a claim round trip; queued jobs are leased and heartbeated too,
 * and handed back at stop), more while a backlog of short jobs empties the slots faster than a
 * claim returns (up to 4x the concurrency, back to `prefetch` once a claim finds the backlog gone); `concurrency` bounds jobs in their working phase (`prepare`, or the
 * handler of a kind without one), while at most as many more finish their short transaction; a
 * kind may finish in one statement (`finishInOneStatement`), the jobs of a kind that ended in one
 * tick may finish together in one statement of the kind's (`finishTogether`: deliveries record
 * their attempts so), and kinds whose handler writes nothing that must commit with the finish
 * (`finishBatched`) finish together, one statement per tick (jobs/completion.ts).
 *
 * This file is the loop (claims, prefetch, slots, wake-ups, drain); one job's claim, run, finish
 * and failure are jobs/engine.ts.
 */
import type { AppDeps } from '../server/deps'
import type { JobKind } from './types'
import { Engine, type JobLog } from './engine'
import { JOBS_CHANNEL, onLocalEnqueue } from './queue'

/** Options of a runner; unset ones come from the configuration (SVC_JOB_*). */
export interface RunnerOptions {
  /** Jobs run at once by this runner (default SVC_JOB_CONCURRENCY, 8). */
  concurrency?: number
  /** Jobs kept claimed beyond the running ones (default SVC_JOB_PREFETCH, which defaults to the concurrency). */
  prefetch?: number
  /** Pause between claims when nothing is due (default SVC_JOB_POLL_MS, 500). */
  pollMs?: number
  /** Lease of a claimed job, extended by a heartbeat every third of it (default SVC_JOB_LEASE_MS, 60 s). */
  leaseMs?: number
  /** How long stop() waits for in-flight jobs before releasing them (default 20 s). */
  drainTimeoutMs?: number
  /** A structured log line. */
  log?: JobLog
}

/** A running runner. */
export interface Runner {
  readonly workerId: string
  /** Stops claiming, lets in-flight jobs finish (or releases them after the drain timeout), then resolves. */
  stop(): Promise<void>
}

/** How deep (times the concurrency) the prefetch queue may grow while claims cannot keep short jobs fed. */
const PREFETCH_GROWTH = 4

/**
 * Starts a runner of the job kinds `kinds` (by name) in this process: claims due jobs until stop()
 * is called. `bun run start` runs one beside the HTTP listener; `bun run worker` runs one alone
 * (both with the service's table, server/job-kinds.ts).
 */
export function startRunner(deps: AppDeps, kinds: Record<string, JobKind>, opts: RunnerOptions = {}): Runner {
  const engine = new Engine(deps, kinds, opts)
  const concurrency = Math.max(1, opts.concurrency ?? deps.config.jobConcurrency ?? 8)
  const prefetch = Math.max(1, opts.prefetch ?? deps.config.jobPrefetch ?? concurrency)
  // The queue deepens while a backlog of short jobs outruns the claims (see the loop), to at most this.
  const maxDepth = Math.max(prefetch, PREFETCH_GROWTH * concurrency)
  let depth = prefetch
  const pollMs = Math.max(1, opts.pollMs ?? deps.config.jobPollMs ?? 500)
  const drainTimeoutMs = opts.drainTimeoutMs ?? 20_000
  let stopping = false
  let wake: () => void = () => {}
  const nap = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    wake = () => { clearTimeout(timer); resolve() }
  })

  const heartbeat = setInterval(() => {
    engine.heartbeat().catch((e) => engine.log('warn', 'job lease heartbeat failed', { error: String((e as Error)?.message ?? e) }))
  }, Math.max(50, Math.floor(engine.leaseMs / 3)))

  // Starts queued jobs while working slots are free (and at most `concurrency` more jobs are still
  // finishing); a job leaving its working phase starts the next one at once.
  const hasSlot = () => engine.working < concurrency && engine.inflight.size - engine.batchedFinishing < 2 * concurrency
  const fill = () => {
    while (!stopping && hasSlot() && engine.queued.length > 0) {
      const next = () => { fill(); wake() }
      void engine.start(engine.queued.shift()!, next).then(next)
    }
  }

  let claimFailures = 0
  // A committed job wakes the runner at once (NOTIFY at commit); polling remains the fallback.
  // Where no notification comes (the embedded database, or a LISTEN that failed), jobs enqueued in
  // this process wake it shortly after their enqueue instead. Only there: such a wake comes before
  // the enqueuing transaction commits, so on PostgreSQL it only bought empty claims (a transaction
  // writing 2,000 deliveries one task at a time set off about 1,600 empty claims a second, each a
  // locking update of the jobs table, beside the NOTIFY at its commit).
  let unlisten: (() => Promise<void>) | undefined
  let stopLocal: (() => void) | undefined = onLocalEnqueue(() => wake())
  deps.listen(JOBS_CHANNEL, () => wake())
    .then((u) => {
      if (u === null) return
      stopLocal?.()
      stopLocal = undefined
      unlisten = u
      if (stopping) void u().catch(() => {})
    })
    .catch((e) => engine.log('warn', 'job notifications unavailable; polling only', { error: String((e as Error)?.message ?? e) }))
  const loop = (async () => {
    // Kinds that arm their own job (the hourly maintenance, a key rotation's re-encryption) do it now.
    for (const [name, kind] of Object.entries(engine.kinds)) {
      await kind.arm?.(deps).catch((e) => engine.log('warn', 'could not arm a job kind', { kind: name, error: String((e as Error)?.message ?? e) }))
    }
    while (!stopping) {
      fill()
      // Keep up to `depth` jobs queued beyond the running ones; refill once the queue runs low,
      // with a claim of at least half of that (or whatever fits when nothing is queued), not one job
      // per finished job: a claim is a round trip and a locking update, shared by the jobs it brings.
      const room = concurrency + depth - engine.working - engine.queued.length
      let exhausted = false
      if (engine.queued.length < depth && (room >= Math.ceil(depth / 2) || (engine.queued.length === 0 && room > 0))) {
        try {
          const jobs = await engine.claim(room)
          exhausted = jobs.length < room
          // Short jobs with a backlog: the slots emptied while the claim was under way (a claim
          // is a committed update, several milliseconds). Claim deeper next time, up to
          // maxDepth; once a claim finds fewer jobs than it asked for, back to `prefetch`.
          const starved = !exhausted && engine.queued.length === 0 && engine.working < concurrency
          depth = exhausted ? prefetch : starved ? Math.min(maxDepth, depth * 2) : depth
          engine.queued.push(...jobs)
          fill()
        } catch (e) {
          if (stopping) break
          // The database is away: back off (doubling to 10 s) and try again; nothing is lost, the jobs wait in their table.
          engine.claimLost = true
          claimFailures++
          const wait = Math.min(10_000, pollMs * 2 ** Math.min(claimFailures, 10))
          engine.log(claimFailures === 1 ? 'error' : 'warn', 'job claim failed', { error: String((e as Error)?.message ?? e), retry_in_ms: wait })
          await nap(wait)
          continue
        }
        claimFailures = 0
      }
      if (stopping) break
      // Nothing more was due and a slot is free: poll again after the interval (or when a job ends).
      // Otherwise wait until a job ends and the queue needs topping up.
      await nap(exhausted && hasSlot() && engine.queued.length === 0 ? pollMs : 60_000)
    }
  })()

  return {
    workerId: engine.workerId,
    async stop() {
      if (stopping) return loop
      stopping = true
      wake()
      stopLocal?.()
      await unlisten?.().catch(() => {})
      await loop
      // Prefetched jobs never started: hand them back at once.
      await engine.release(engine.queued.splice(0).map((j) => j.id)).catch(() => 0)
      const pending = [...engine.inflight.values()]
      if (pending.length) {
        const drained = await Promise.race([
          Promise.allSettled(pending).then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), drainTimeoutMs)),
        ])
        if (!drained) {
          const released = await engine.release().catch(() => 0)
          engine.log('warn', 'drain timed out; released in-flight jobs', { released })
        }
      }
      clearInterval(heartbeat)
    },
  }
}

/**
 * Runs every due job (and the jobs those enqueue, while due) until none is due, then resolves with
 * how many runs it made. For deterministic tests and scripts; jobs scheduled in the future (retries
 * after back-off) are left for later.
 */
export async function runJobsUntilIdle(deps: AppDeps, kinds: Record<string, JobKind>, opts: Pick<RunnerOptions, 'concurrency' | 'log' | 'leaseMs'> & { maxRuns?: number } = {}): Promise<number> {
  const engine = new Engine(deps, kinds, opts)
  const concurrency = Math.max(1, opts.concurrency ?? 4)
  const maxRuns = opts.maxRuns ?? 100_000
  let runs = 0
  while (runs < maxRuns) {
    const rejected = engine.rejected
    const jobs = await engine.claim(Math.min(concurrency, maxRuns - runs))
    if (jobs.length === 0 && engine.rejected === rejected) break
    runs += jobs.length
    await Promise.all(jobs.map((j) => engine.start(j)))
  }
  return runs
}
