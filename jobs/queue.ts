/**
 * Enqueuing jobs. A job is written in the caller's transaction, so it exists exactly when the
 * caller's own writes commit (the transactional outbox of the architecture).
 */
import type { Tx } from '../server/db/connect'

/** A job to run: its kind (a key of JOB_KINDS), workspace, payload and earliest start. */
export interface JobInput { kind: string; tenantId: string | null; payload: Record<string, unknown>; runAt?: Date }

/** The channel a committed job that is due at once is announced on (see startRunner). */
export const JOBS_CHANNEL = 'svc_jobs'

/**
 * Runners of this process, woken shortly after a job is enqueued here: on the embedded database
 * (no NOTIFY) the enqueuing process is the one that runs jobs, and the caller's transaction has
 * usually committed within these few milliseconds; a wake that comes too early finds nothing and
 * the runner's poll remains the fallback.
 */
const localRunners = new Set<() => void>()

/** Registers a runner's wake for jobs enqueued in this process; returns its removal. */
export function onLocalEnqueue(wake: () => void): () => void {
  localRunners.add(wake)
  return () => localRunners.delete(wake)
}

const wakeLocal = () => { for (const wake of localRunners) wake() }

/** Enqueues a job in the caller's transaction (so the job exists iff the caller's writes commit). */
export async function enqueueJob(tx: Tx, job: JobInput): Promise<string> {
  const id = Bun.randomUUIDv7()
  // The notification is delivered at commit: runners listening wake at once instead of at their next poll.
  await tx`
    with job as (
      insert into jobs (id, kind, tenant_id, payload, run_at)
      values (${id}, ${job.kind}, ${job.tenantId}, ${tx.json(job.payload as never)}, coalesce(${job.runAt ?? null}::timestamptz, now()))
      returning run_at
    )
    select pg_notify(${JOBS_CHANNEL}, '') from job where run_at <= now()`
  if (localRunners.size > 0 && !job.runAt) for (const ms of [5, 30, 120]) setTimeout(wakeLocal, ms)
  return id
}
