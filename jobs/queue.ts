/**
 * Enqueuing jobs. A job is written in the caller's transaction, so it exists exactly when the
 * caller's own writes commit (the transactional outbox of the architecture).
 */
import type { Sql, Tx } from '../server/db/connect'
import { currentContext, traceparentOf } from '../server/observability/context'

/** A job to run: its kind (a name in the runner's table of kinds; see defineJobKind and the typed enqueue), workspace, payload and earliest start. */
export interface JobInput { kind: string; tenantId: string | null; payload: Record<string, unknown>; runAt?: Date }

/** The channel a committed job that is due at once is announced on (see startRunner). */
export const JOBS_CHANNEL = 'svc_jobs'

/**
 * Runners of this process that no notification reaches (the embedded database), woken shortly after
 * a job is enqueued here: there the enqueuing process is the one that runs jobs, and the caller's
 * transaction has usually committed within these few milliseconds; a wake that comes too early
 * finds nothing and the runner's poll remains the fallback.
 */
const localRunners = new Set<() => void>()

/** Registers a runner's wake for jobs enqueued in this process; returns its removal. */
export function onLocalEnqueue(wake: () => void): () => void {
  localRunners.add(wake)
  return () => localRunners.delete(wake)
}

const wakeLocal = () => { for (const wake of localRunners) wake() }

/** After an enqueue, runners are woken at these delays (ms). */
const LOCAL_WAKES_MS = [5, 30, 120] as const
let lastEnqueueAt = 0
let wakeTimer: ReturnType<typeof setTimeout> | undefined
let wakeAt = Number.POSITIVE_INFINITY

/** Sets the one pending wake for `at` (performance.now() time). */
function armWake(at: number): void {
  clearTimeout(wakeTimer)
  wakeAt = at
  wakeTimer = setTimeout(fireWake, Math.max(0, at - performance.now()))
}

/**
 * Wakes the local runners, then arms the next of the last enqueue's delays still ahead, if any, and
 * never sooner than the first delay from now (a wake per 5 ms at most while enqueues keep coming).
 */
function fireWake(): void {
  wakeTimer = undefined
  wakeAt = Number.POSITIVE_INFINITY
  wakeLocal()
  const now = performance.now()
  const next = LOCAL_WAKES_MS.map((ms) => lastEnqueueAt + ms).find((at) => at > now + 1)
  if (next !== undefined) armWake(Math.max(next, now + LOCAL_WAKES_MS[0]))
}

/**
 * Wakes the local runners 5, 30 and 120 ms after an enqueue with one timer at a time: enqueues in
 * quick succession (a transaction enqueuing job after job) share it, so runners are woken at most
 * every 5 ms while enqueues keep coming, then about 30 and 120 ms after the last. Before, every
 * enqueue set three timers of its own: a transaction enqueuing 2,000 jobs woke the runners 6,000
 * times before it committed.
 */
function scheduleLocalWakes(): void {
  const now = performance.now()
  lastEnqueueAt = now
  if (wakeAt > now + LOCAL_WAKES_MS[0]) armWake(now + LOCAL_WAKES_MS[0])
}

/**
 * Enqueues a job in the caller's transaction (so the job exists iff the caller's writes commit).
 * The job keeps the request id and `traceparent` of the request (or job) that enqueues it, so its
 * log lines, the jobs it enqueues in turn and the deliveries it writes carry them too.
 */
export async function enqueueJob(tx: Tx, job: JobInput): Promise<string> {
  const [id] = await enqueueJobs(tx, [job])
  return id!
}

/**
 * Enqueues many jobs in the caller's transaction with ONE statement and at most one notification
 * (where work fans out: the deliveries of a finished task, a bulk load): the rows go in as arrays,
 * and runners are woken once for the batch. Returns the ids in input order.
 */
export async function enqueueJobs(tx: Tx, jobs: JobInput[]): Promise<string[]> {
  if (jobs.length === 0) return []
  const ids = jobs.map(() => Bun.randomUUIDv7())
  const ctx = currentContext()
  // The notification is delivered at commit: runners listening wake at once instead of at their next poll.
  await tx`
    with job as (
      insert into jobs (id, kind, tenant_id, payload, run_at, request_id, traceparent)
      select j.id, j.kind, j.tenant_id, j.payload::jsonb, coalesce(j.run_at, now()), ${ctx?.requestId ?? null}, ${ctx ? traceparentOf(ctx) : null}
      from unnest(${ids}::uuid[], ${jobs.map((j) => j.kind)}::text[], ${jobs.map((j) => j.tenantId ?? null)}::uuid[],
                  ${jobs.map((j) => JSON.stringify(j.payload))}::text[], ${jobs.map((j) => j.runAt?.toISOString() ?? null)}::timestamptz[])
        as j(id, kind, tenant_id, payload, run_at)
      returning run_at
    )
    select pg_notify(${JOBS_CHANNEL}, '') where exists (select 1 from job where run_at <= now())`
  if (localRunners.size > 0 && jobs.some((j) => !j.runAt)) scheduleLocalWakes()
  return ids
}

/**
 * Runnable jobs by kind (due, not dead, not leased) and the age of the oldest, for the metrics
 * scrape. Reads the due-jobs index only.
 */
export async function queueDepth(sql: Sql): Promise<{ kind: string; runnable: number; oldestAgeSeconds: number }[]> {
  const rows = await sql<{ kind: string; runnable: number; age: number }[]>`
    select kind, count(*)::int as runnable, coalesce(extract(epoch from now() - min(run_at)), 0)::float8 as age
    from jobs
    where dead_at is null and run_at <= now() and (locked_until is null or locked_until < now())
    group by kind`
  return rows.map((r) => ({ kind: r.kind, runnable: r.runnable, oldestAgeSeconds: Math.max(0, r.age) }))
}
