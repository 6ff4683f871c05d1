/**
 * The two statements that bracket a job's life in a worker: the claim (due jobs leased to one
 * worker, their attempt counted) and the delete that finishes the jobs that worker still holds.
 * The engine (jobs/engine.ts) runs them; the delivery bench's database-bound baseline runs the very
 * same SQL without the engine around it.
 */
import type postgres from 'postgres'
import type { Sql } from '../server/db/connect'

/** A claimed job's row as the claim returns it. */
export interface ClaimedRow {
  id: string
  kind: string
  tenant_id: string | null
  payload: Record<string, any>
  attempts: number
  last_error: string | null
  request_id: string | null
  traceparent: string | null
  /** The job was held under a lease that lapsed (its previous worker neither finished nor released it). */
  lease_expired: boolean
}

/**
 * Claims up to `n` due jobs for `workerId` under a lease of `leaseMs`, counting the attempt now
 * (a crash during the run still spends it). `SKIP LOCKED`: workers never wait on each other's claims.
 */
export function claimDueJobs(sql: Sql, workerId: string, leaseMs: number, n: number): Promise<ClaimedRow[]> {
  return sql<ClaimedRow[]>`
    update jobs j
    set locked_by = ${workerId}, locked_until = now() + make_interval(secs => ${leaseMs / 1000}),
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
}

/**
 * The delete of the listed jobs that `workerId` still holds, returning their ids (column `id`): a
 * statement to run, or to embed as a CTE in a kind's finish so its writes join only the jobs it
 * removed (a job another worker took over is neither finished nor written for twice). It runs in
 * `svc_delete_held_jobs` (sql/033), planned so that it finds the jobs by their key: as a prepared
 * statement, its plan made while the table was nearly empty kept a sequential scan of it.
 */
export function deleteHeldJobs(sql: Sql, workerId: string, ids: string[]): postgres.PendingQuery<postgres.Row[]> {
  return sql`select held.id from svc_delete_held_jobs(${workerId}, ${ids}::uuid[]) as held(id)`
}
