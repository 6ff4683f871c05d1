/**
 * The shapes of the job runner that every handler author codes against (see the jobs contract):
 * a claimed job, a handler, and a job kind.
 */
import type postgres from 'postgres'
import type { Sql, Tx } from '../server/db/connect'
import type { AppDeps } from '../server/deps'

/** A job as its handler sees it once claimed. `attempts` counts this run (1 on the first). */
export interface ClaimedJob {
  id: string
  kind: string
  tenantId: string | null
  payload: Record<string, any>
  attempts: number
  /** The request id and W3C traceparent of the request (or job) that enqueued this job, when it had one. */
  requestId?: string
  traceparent?: string
  /** What the kind's `prepare` step returned (only for kinds that have one). */
  prepared?: unknown
  /** What the kind's batch `load` attached at claim time (only for kinds that have one). */
  loaded?: unknown
  /**
   * Set when the job is given up, for onGiveUp: a content-free reason the job's resource may show
   * (`worker crashed: ...` when its runs kept ending the worker or the process); absent when the
   * last error carried no public reason.
   */
  giveUpReason?: string
}

/**
 * A handler runs inside a transaction that also finishes the job; throwing rolls its writes back
 * and schedules a retry (with back-off) until the kind's max attempts, then the job is dead and the
 * kind's onGiveUp (if any) runs in its own transaction. deps = the app's AppDeps.
 */
export type JobHandler = (tx: Tx, job: ClaimedJob, deps: AppDeps) => Promise<void>

/** One kind of job: its handler and retry policy. */
export interface JobKind {
  handler: JobHandler
  /** Runs of the job before it is dead (default 5). A crash counts as a run. */
  maxAttempts?: number
  /** Runs once, in its own transaction, when the job is given up. */
  onGiveUp?: JobHandler
  /**
   * Optional work done OUTSIDE any transaction before the handler (a network send, for example), so
   * no database connection is held while waiting on a peer. Its result reaches the handler as
   * `job.prepared`; throwing counts as a failed run like a throwing handler.
   */
  prepare?: (job: ClaimedJob, deps: AppDeps) => Promise<unknown>
  /**
   * Optional batch read for a claim's jobs of this kind, outside any transaction, before they
   * start: it may set `job.loaded` so `prepare` needs no read of its own (one query per claim
   * batch instead of one per job). A failure here is ignored; `prepare` must cope without it.
   */
  load?: (sql: Sql, jobs: ClaimedJob[], deps: AppDeps) => Promise<void>
  /** Delay before the next run after `attempts` failed runs (default: 1 s doubling, capped at 5 min). */
  backoffMs?: (attempts: number) => number
  /**
   * Optional fast finish, tried before the transaction with `handler` (for kinds with `prepare`
   * whose usual outcome is one write): `done` deletes the job if this worker still owns it
   * (`delete from jobs ... returning id`). The kind runs ONE statement shaped
   * `with done as (${done}), ... select (select count(*) from done)::int as owned`, every write of
   * which depends on a row in `done`, and returns 'finished', 'lost' (no row in done: nothing
   * written) or 'fallback' (nothing run; the runner then opens the usual transaction).
   */
  finishInOneStatement?: (sql: Sql, job: ClaimedJob, deps: AppDeps, done: postgres.PendingQuery<postgres.Row[]>) => Promise<'finished' | 'lost' | 'fallback'>
  /**
   * Optional batched fast finish, preferred over finishInOneStatement for a job it `accepts` (its
   * outcome is known after `prepare`): the jobs of the kind accepted in the same tick finish
   * together in ONE statement, `run(sql, jobs, deps, done)`, where `done` deletes those of them that
   * this worker still holds (`delete from jobs where locked_by = <worker> and id = any(...) returning
   * id`). The kind runs `with done as (${done}), ... select id from done`, every write of it joined to
   * its job's row in `done`, and returns the ids in done. A failed statement sends each of its jobs
   * on to finishInOneStatement or the transaction with `handler`. Not for recurring kinds.
   */
  finishTogether?: {
    accepts: (job: ClaimedJob) => boolean
    run: (sql: Sql, jobs: ClaimedJob[], deps: AppDeps, done: postgres.PendingQuery<postgres.Row[]>) => Promise<ReadonlySet<string>>
  }
  /**
   * The handler writes nothing that must commit with the job's finish (it writes nothing, or only
   * idempotent writes of its own): it runs outside any transaction (given the pool as `tx`), and
   * jobs that end in the same tick are finished together by one statement (jobs/completion.ts).
   * Not for recurring kinds.
   */
  finishBatched?: boolean
  /** A recurring kind: after a successful run the job is re-armed this far ahead instead of deleted. */
  repeatEveryMs?: number
  /**
   * Checks a claimed job before anything of it runs (see defineJobKind): returns why its stored
   * payload (or its workspace) no longer fits the kind, or undefined when it fits. A job that does
   * not fit is dead at once with that reason; neither prepare, handler nor onGiveUp sees it.
   */
  check?: (job: ClaimedJob) => string | undefined
  /**
   * For a job that did not fit (see check): ends its task the way onGiveUp does, with an internal
   * reason, when the part of the payload onGiveUp reads still fits (defineJobKind's
   * `giveUpPayload`); runs in the transaction that marks the job dead. Returns whether it ran.
   */
  onMisfit?: (tx: Tx, job: ClaimedJob, deps: AppDeps) => Promise<boolean>
  /** Runs when a runner starts (outside any transaction): a kind that arms its own job (maintenance) does it here. */
  arm?: (deps: AppDeps) => Promise<void>
}
