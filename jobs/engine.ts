/**
 * One job's life in a runner: claimed under a lease (attempts counted at claim), run in its
 * observability context, finished in the same transaction as its handler's writes (or in one
 * statement, or together with others of its tick: jobs/completion.ts), retried with back-off or
 * without spending an attempt while a dependency is away, dead after its kind's max attempts,
 * heartbeated while held, handed back at stop. The loop that feeds it is jobs/runner.ts.
 */
import { hostname } from 'node:os'
import type { AppDeps } from '../server/deps'
import type { Tx } from '../server/db/connect'
import type { ClaimedJob, JobKind } from './types'
import { jobBackoffMs } from './backoff'
import { isDependencyOutage } from '../server/http/dependency-errors'
import { CompletionBatch, TickBatch } from './completion'
import { claimDueJobs, deleteHeldJobs } from './claim'
import { contextFromStored, runWithContext } from '../server/observability/context'

/** A structured log line. */
export type JobLog = (level: 'info' | 'warn' | 'error', message: string, extra?: Record<string, unknown>) => void

/** What the engine takes from a runner's options. */
export interface EngineOptions {
  /** Lease of a claimed job (default SVC_JOB_LEASE_MS, 60 s). */
  leaseMs?: number
  /** A structured log line (default the service's log). */
  log?: JobLog
}

const DEFAULT_MAX_ATTEMPTS = 5
/** A run that failed because a dependency was unavailable is retried after 1-2 x this, without spending an attempt... */
const OUTAGE_RETRY_MS = 1_000
/** ...while the job is younger than this. */
const OUTAGE_GRACE_MS = 6 * 3600_000

/** The claim-run-finish engine shared by the long-running runner and runJobsUntilIdle. */
export class Engine {
  readonly workerId = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`
  readonly inflight = new Map<string, Promise<void>>()
  /** Claimed jobs waiting for a free slot (prefetched so a freed slot starts work without a claim round trip). */
  readonly queued: ClaimedJob[] = []
  readonly kinds: Record<string, JobKind>
  readonly leaseMs: number
  readonly log: JobLog
  /** Finishes jobs of `finishBatched` kinds together, one statement per tick. */
  readonly completions: CompletionBatch
  /** Per kind with `finishTogether`: its jobs ending in one tick, finished by one statement of the kind's. */
  readonly together = new Map<string, TickBatch<ClaimedJob>>()

  constructor(readonly deps: AppDeps, kinds: Record<string, JobKind>, opts: EngineOptions) {
    this.kinds = kinds
    this.completions = new CompletionBatch(deps.sql, this.workerId)
    for (const [name, kind] of Object.entries(kinds)) {
      const together = kind.finishTogether
      if (!together || kind.repeatEveryMs !== undefined) continue
      this.together.set(name, new TickBatch<ClaimedJob>((jobs) => together.run(deps.sql, jobs, deps,
        deleteHeldJobs(deps.sql, this.workerId, jobs.map((j) => j.id)))))
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
    const rows = await claimDueJobs(sql, this.workerId, this.leaseMs, n)
    this.deps.metrics.jobClaim(rows.length > 0 ? 'jobs' : 'empty')
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
