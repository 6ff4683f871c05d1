/**
 * Enqueuing jobs. A job is written in the caller's transaction, so it exists exactly when the
 * caller's own writes commit (the transactional outbox of the architecture).
 */
import type { Tx } from '../server/db/connect'

/** A job to run: its kind (a key of JOB_KINDS), workspace, payload and earliest start. */
export interface JobInput { kind: string; tenantId: string | null; payload: Record<string, unknown>; runAt?: Date }

/** The channel a committed job that is due at once is announced on (see startRunner). */
export const JOBS_CHANNEL = 'svc_jobs'

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
  return id
}
