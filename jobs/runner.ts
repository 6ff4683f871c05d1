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
 */
import { hostname } from 'node:os'
import type { AppDeps } from '../server/deps'
import type { Tx } from '../server/db/connect'
import type { ClaimedJob, JobKind } from './types'
import { jobBackoffMs } from './backoff'
import { isDependencyOutage } from '../server/http/dependency-errors'
import { CompletionBatch, TickBatch } from './completion'
import { JOBS_CHANNEL, onLocalEnqueue } from './queue'
import { contextFromStored, runWithContext } from '../server/observability/context'

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
  log?: (level: 'info' | 'warn' | 'error', message: string, extra?: Record<string, unknown>) => void
}

/** A running runner. */
export interface Runner {
  readonly workerId: string
  /** Stops claiming, lets in-flight jobs finish (or releases them after the drain timeout), then resolves. */
  stop(): Promise<void>
}

const DEFAULT_MAX_ATTEMPTS = 5
/** How deep (times the concurrency) the prefetch queue may grow while claims cannot keep short jobs fed. */
const PREFETCH_GROWTH = 4
/** A run that failed because a dependency was unavailable is retried after 1-2 x this, without spending an attempt... */
const OUTAGE_RETRY_MS = 1_000
/** ...while the job is younger than this. */
const OUTAGE_GRACE_MS = 6 * 3600_000

/** The claim-run-finish engine shared by the long-running runner and runJobsUntilIdle. */
class Engine {
  readonly workerId = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
  readonly inflight = new Map<string, Promise<void>>()
  /** Claimed jobs waiting for a free slot (prefetched so a freed slot starts work without a claim round trip). */
  readonly queued: ClaimedJob[] = []
  readonly kinds: Record<string, JobKind>
  readonly leaseMs: number
  readonly log: NonNullable<RunnerOptions['log']>
  /** Finishes jobs of `finishBatched` kinds together, one statement per tick. */
  readonly completions: CompletionBatch
  /** Per kind with `finishTogether`: its jobs ending in one tick, finished by one statement of the kind's. */
  readonly together = new Map<string, TickBatch<ClaimedJob>>()

  constructor(readonly deps: AppDeps, kinds: Record<string, JobKind>, opts: RunnerOptions) {
    this.kinds = kinds
    this.completions = new CompletionBatch(deps.sql, this.workerId)
    for (const [name, kind] of Object.entries(kinds)) {
      const together = kind.finishTogether
      if (!together || kind.repeatEveryMs !== undefined) continue
      this.together.set(name, new TickBatch<ClaimedJob>((jobs) => together.run(deps.sql, jobs, deps,
        deps.sql`delete from jobs where locked_by = ${this.workerId} and id = any(${jobs.map((j) => j.id)}::uuid[]) returning id`)))
    }
    this.leaseMs = opts.leaseMs ?? deps.config.jobLeaseMs ?? 60_000
    this.log = opts.log ?? ((level, message, extra) => deps.log.log(level, message, extra))
  }

  /**
   * Set when a claim failed: its update may have committed with the reply lost (a connection ended
   * under it), leaving jobs locked by this worker that it does not know it holds.
   */
  claimLost = false

  /** Claims up to `n` due jobs for this worker. */
  async claim(n: number): Promise<ClaimedJob[]> {
    if (n <= 0) return []
    const { sql } = this.deps
    if (this.claimLost) {
      // Jobs locked by this worker that it neither runs nor holds queued were claimed by a claim whose
      // answer never came: hand them back at once, the attempt not counted (nothing ran). Without
      // this each waited for its lease and lost an attempt to every dropped connection.
      const known = [...this.inflight.keys(), ...this.queued.map((j) => j.id)]
      await sql`
        update jobs set locked_by = null, locked_until = null, attempts = greatest(attempts - 1, 0), updated_at = now()
        where locked_by = ${this.workerId} and not (id = any(${known}::uuid[]))`
      this.claimLost = false
    }
    const rows = await sql<{ id: string; kind: string; tenant_id: string | null; payload: Record<string, any>; attempts: number; last_error: string | null; request_id: string | null; traceparent: string | null; lease_expired: boolean }[]>`
      update jobs j
      set locked_by = ${this.workerId}, locked_until = now() + make_interval(secs => ${this.leaseMs / 1000}),
          attempts = j.attempts + 1, updated_at = now()
      from (
        -- A lease still set here lapsed: every normal end of a run clears it.
        select id, locked_until is not null as lease_expired from jobs
        where dead_at is null and run_at <= now() and (locked_until is null or locked_until < now())
        order by run_at
        limit ${n}
        for update skip locked
      ) due
      where j.id = due.id
      returning j.id, j.kind, j.tenant_id, j.payload, j.attempts, j.last_error, j.request_id, j.traceparent, due.lease_expired`
    const claimed: ClaimedJob[] = rows.map((r) => ({
      id: r.id, kind: r.kind, tenantId: r.tenant_id, payload: r.payload, attempts: r.attempts,
      ...(r.request_id ? { requestId: r.request_id } : {}), ...(r.traceparent ? { traceparent: r.traceparent } : {}),
    }))
    for (const r of rows) {
      if (!r.lease_expired) continue
      this.deps.metrics.jobLeaseExpired(r.kind)
      this.log('warn', 'job lease lapsed; claimed again', { job_id: r.id, kind: r.kind, attempts: r.attempts, request_id: r.request_id ?? undefined })
    }
    // An attempt counts when it is claimed. A job claimed past its limit had its last run end with
    // its worker or its whole process (a crash never throws): it is dead, not run again.
    const jobs: ClaimedJob[] = []
    for (const job of claimed) {
      const kind = this.kinds[job.kind]
      // A stored payload that no longer fits its kind (an older deploy's shape) never runs, not even in part.
      const misfit = kind?.check?.(job)
      if (misfit) {
        this.rejected++
        await this.inContext(job, () => this.reject(job, misfit, kind)).catch((e) =>
          this.log('error', 'job rejection failed', { job_id: job.id, kind: job.kind, error: String((e as Error)?.message ?? e) }))
        continue
      }
      const max = kind?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
      if (job.attempts <= max) { jobs.push(job); continue }
      job.attempts = max // this claim is not an attempt: the record keeps the limit
      job.giveUpReason = `worker crashed: the process running the job ended during its last attempt (${max} attempts)`
      await this.inContext(job, () => this.giveUp(job, kind, job.giveUpReason!)).catch((e) =>
        this.log('error', 'job give-up failed', { job_id: job.id, kind: job.kind, error: String((e as Error)?.message ?? e) }))
    }
    // Kinds with a batch read get one query for all their jobs of this claim.
    for (const [name, kind] of Object.entries(this.kinds)) {
      const mine = kind.load ? jobs.filter((j) => j.kind === name) : []
      if (mine.length > 0) await kind.load!(sql, mine, this.deps).catch(() => {})
    }
    return jobs
  }

  /** Claimed jobs that were dead at once because they did not fit their kind (see reject). */
  rejected = 0

  /**
   * Marks an owned job dead at once with `reason` (why its payload does not fit its kind), without
   * running prepare or handler; in the same transaction its task ends failed with an internal
   * reason (and its notification) when the kind can still find it (JobKind.onMisfit), so the task
   * is never left queued behind a job that will not run.
   */
  async reject(job: ClaimedJob, reason: string, kind?: JobKind): Promise<void> {
    this.deps.metrics.jobRun(job.kind, 'dead', 0)
    this.log('error', 'job payload does not fit its kind; dead without running', { job_id: job.id, kind: job.kind, attempts: job.attempts, error: reason })
    const markDead = (tx: Tx) => tx`
      update jobs set dead_at = now(), last_error = ${reason.slice(0, 2000)}, locked_by = null, locked_until = null, updated_at = now()
      where id = ${job.id} and locked_by = ${this.workerId} returning id`
    let taskEnded = false
    try {
      await this.deps.sql.begin(async (tx) => {
        const [own] = await markDead(tx)
        if (own && kind?.onMisfit) taskEnded = await kind.onMisfit(tx, job, this.deps)
      })
    } catch (e) {
      this.log('error', 'ending the task of a misfit job failed', { job_id: job.id, kind: job.kind, error: String((e as Error)?.message ?? e) })
      await this.deps.sql.begin((tx) => markDead(tx))
    }
    if (!taskEnded && kind?.onGiveUp) this.log('error', 'the task of a misfit job could not be found from its payload; it stays as it is', { job_id: job.id, kind: job.kind })
  }

  /** Jobs in their working phase: a prepare step, or a handler of a kind without one. */
  working = 0
  /** Jobs of `finishBatched` kinds waiting for their batch's finish (in `inflight` too). */
  batchedFinishing = 0

  /**
   * Runs `fn` in the trace context of the request that enqueued the job (when it has one): its log
   * lines carry the request id, and the jobs and deliveries it writes keep it.
   */
  inContext<T>(job: ClaimedJob, fn: () => T): T {
    const ctx = contextFromStored(job.requestId ?? null, job.traceparent ?? null, job.tenantId)
    return ctx ? runWithContext(ctx, fn) : fn()
  }

  /**
   * Starts running a claimed job; the promise settles when the job is finished, retried or lost.
   * `onWorkDone` runs once when its working phase ends: after `prepare` for kinds that have one
   * (their short finishing transaction no longer holds a working slot), else at the end.
   */
  start(job: ClaimedJob, onWorkDone: () => void = () => {}): Promise<void> {
    this.working++
    let done = false
    const workDone = () => {
      if (done) return
      done = true
      this.working--
      onWorkDone()
    }
    const p = this.inContext(job, () => this.run(job, workDone)).catch((e) => {
      // Neither the finish nor the retry could be written (the database is away): hand the job
      // back as soon as the database answers again, rather than when its lease lapses.
      this.log('warn', 'job runner failure; handing the job back once the database answers', { job_id: job.id, kind: job.kind, error: String((e as Error)?.message ?? e) })
      void this.handBack(job, !isDependencyOutage(e))
    })
      .finally(() => { this.inflight.delete(job.id); workDone() })
    this.inflight.set(job.id, p)
    return p
  }

  async run(job: ClaimedJob, workDone: () => void = () => {}): Promise<void> {
    const kind = this.kinds[job.kind]
    const { sql } = this.deps
    const started = performance.now()
    const ended = (outcome: 'succeeded' | 'lost') => {
      const seconds = (performance.now() - started) / 1000
      this.deps.metrics.jobRun(job.kind, outcome, seconds)
      this.log(outcome === 'succeeded' ? 'info' : 'warn', outcome === 'succeeded' ? 'job finished' : 'job lost to another worker (its lease had lapsed)',
        { job_id: job.id, kind: job.kind, attempts: job.attempts, duration_ms: Math.round(seconds * 1000) })
    }
    try {
      if (!kind) throw new Error(`no handler for job kind ${job.kind}`)
      if (kind.prepare) {
        job.prepared = await kind.prepare(job, this.deps)
        workDone()
      }
      if (kind.finishBatched && kind.repeatEveryMs === undefined) {
        await kind.handler(sql, job, this.deps)
        // The work is done: the slot starts the next job while this one's finish joins the tick's
        // batch (a batched finish holds no connection, so it does not count against the finishing bound).
        workDone()
        this.batchedFinishing++
        try {
          return ended(await this.completions.finish(job.id) ? 'succeeded' : 'lost')
        } finally {
          this.batchedFinishing--
        }
      }
      const together = this.together.get(job.kind)
      if (together && kind.finishTogether!.accepts(job)) {
        // Finished with the jobs of its kind that ended in this tick (one statement; it holds no
        // connection of its own, like a batched finish). A failed statement leaves the finish to
        // the paths below: one job's bad outcome does not retry the others.
        this.batchedFinishing++
        try {
          return ended(await together.finish(job) ? 'succeeded' : 'lost')
        } catch (e) {
          this.log('warn', 'batched finish failed; finishing the job alone', { job_id: job.id, kind: job.kind, error: String((e as Error)?.message ?? e) })
        } finally {
          this.batchedFinishing--
        }
      }
      if (kind.finishInOneStatement && kind.repeatEveryMs === undefined) {
        const done = sql`delete from jobs where id = ${job.id} and locked_by = ${this.workerId} returning id`
        const result = await kind.finishInOneStatement(sql, job, this.deps, done)
        if (result !== 'fallback') return ended(result === 'finished' ? 'succeeded' : 'lost')
      }
      let owned = false
      await sql.begin(async (tx) => {
        // Finish first, only if this worker still owns the job (a worker whose lease was taken over
        // finishes nothing); the row stays locked, and a throwing handler rolls the finish back.
        const [own] = kind.repeatEveryMs !== undefined
          ? await tx`
              update jobs set run_at = now() + make_interval(secs => ${kind.repeatEveryMs / 1000}), attempts = 0,
                locked_by = null, locked_until = null, last_error = null, updated_at = now()
              where id = ${job.id} and locked_by = ${this.workerId} returning id`
          : await tx`delete from jobs where id = ${job.id} and locked_by = ${this.workerId} returning id`
        if (!own) return
        owned = true
        await kind.handler(tx, job, this.deps)
      })
      ended(owned ? 'succeeded' : 'lost')
    } catch (e) {
      this.deps.metrics.jobRun(job.kind, job.attempts >= (kind?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS) ? 'dead' : 'retried', (performance.now() - started) / 1000)
      await this.fail(job, kind, e)
    }
  }

  /** Schedules a retry of a failed run, or marks the job dead and runs onGiveUp. */
  async fail(job: ClaimedJob, kind: JobKind | undefined, error: unknown): Promise<void> {
    const { sql } = this.deps
    const message = String((error as Error)?.message ?? error).slice(0, 2000)
    const max = kind?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS
    if (isDependencyOutage(error)) {
      // The database (or the blob store) was unavailable: the run says nothing about the job, so it
      // spends no attempt and runs again shortly, for up to OUTAGE_GRACE after it was enqueued (a
      // job that meets outages beyond that spends its attempts as any other failure). Without this,
      // a minute of terminated connections gave up evaluations (3 attempts) and documents.
      const delay = Math.round(OUTAGE_RETRY_MS * (1 + Math.random()))
      const [kept] = await sql`
        update jobs set run_at = now() + make_interval(secs => ${delay / 1000}), last_error = ${message},
          attempts = greatest(attempts - 1, 0), locked_by = null, locked_until = null, updated_at = now()
        where id = ${job.id} and locked_by = ${this.workerId} and created_at > now() - make_interval(secs => ${OUTAGE_GRACE_MS / 1000})
        returning id`
      if (kept) {
        this.log('warn', 'job met an unavailable dependency; will retry without spending an attempt', { job_id: job.id, kind: job.kind, attempts: job.attempts - 1, retry_in_ms: delay, error: message })
        return
      }
    }
    if (job.attempts >= max) {
      const publicReason = (error as { publicReason?: unknown })?.publicReason
      if (typeof publicReason === 'string') job.giveUpReason = publicReason
      await this.giveUp(job, kind, message)
      return
    }
    const delay = (kind?.backoffMs ?? jobBackoffMs)(job.attempts)
    this.log('warn', 'job failed; will retry', { job_id: job.id, kind: job.kind, attempts: job.attempts, retry_in_ms: delay, error: message })
    await sql`
      update jobs set run_at = now() + make_interval(secs => ${delay / 1000}), last_error = ${message},
        locked_by = null, locked_until = null, updated_at = now()
      where id = ${job.id} and locked_by = ${this.workerId}`
  }

  /** Marks an owned job dead with `message` and runs its kind's onGiveUp in the same transaction. */
  async giveUp(job: ClaimedJob, kind: JobKind | undefined, message: string): Promise<void> {
    const { sql } = this.deps
    this.log('error', 'job given up', { job_id: job.id, kind: job.kind, attempts: job.attempts, error: message })
    const markDead = (tx: Tx) => tx`
      update jobs set dead_at = now(), last_error = ${message}, attempts = ${job.attempts}, locked_by = null, locked_until = null, updated_at = now()
      where id = ${job.id} and locked_by = ${this.workerId} returning id`
    try {
      await sql.begin(async (tx) => {
        const [own] = await markDead(tx)
        if (own && kind?.onGiveUp) await kind.onGiveUp(tx, job, this.deps)
      })
    } catch (e) {
      this.log('error', 'job onGiveUp failed', { job_id: job.id, kind: job.kind, error: String((e as Error)?.message ?? e) })
      await sql.begin((tx) => markDead(tx))
    }
  }

  /**
   * Gives up this worker's claim on a job whose outcome could not be written, retrying while the
   * database is unreachable (at most until the lease would have lapsed anyway); the job runs again
   * after a second. The attempt stays counted unless `spent` is false: an outcome lost to an
   * unavailable database is not the job's failure, like a run that met the outage itself.
   */
  async handBack(job: ClaimedJob, spent = true): Promise<void> {
    const until = Date.now() + this.leaseMs
    for (let wait = 100; Date.now() < until; wait = Math.min(wait * 2, 2000)) {
      try {
        await this.deps.sql`
          update jobs set locked_by = null, locked_until = null, run_at = now() + interval '1 second', updated_at = now(),
            attempts = case when ${spent} then attempts else greatest(attempts - 1, 0) end
          where id = ${job.id} and locked_by = ${this.workerId}`
        return
      } catch {
        await Bun.sleep(wait)
      }
    }
  }

  /** Extends the lease of every in-flight job of this worker. */
  async heartbeat(): Promise<void> {
    const ids = [...this.inflight.keys(), ...this.queued.map((j) => j.id)]
    if (ids.length === 0) return
    await this.deps.sql`
      update jobs set locked_until = now() + make_interval(secs => ${this.leaseMs / 1000})
      where locked_by = ${this.workerId} and id = any(${ids}::uuid[])`
  }

  /**
   * Gives up the leases of this worker's jobs (all of them, or the listed ones): they were not run to
   * the end here, so the claim does not count as a run. A run still going finds it no longer owns its job.
   */
  async release(ids?: string[]): Promise<number> {
    if (ids && ids.length === 0) return 0
    const rows = await this.deps.sql`
      update jobs set locked_by = null, locked_until = null, attempts = greatest(attempts - 1, 0), updated_at = now()
      where locked_by = ${this.workerId} ${ids ? this.deps.sql`and id = any(${ids}::uuid[])` : this.deps.sql``} returning id`
    return rows.length
  }
}

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
  let unlisten: (() => Promise<void>) | undefined
  const stopLocal = onLocalEnqueue(() => wake())
  deps.listen(JOBS_CHANNEL, () => wake())
    .then((u) => { unlisten = u; if (stopping) void u().catch(() => {}) })
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
      stopLocal()
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
