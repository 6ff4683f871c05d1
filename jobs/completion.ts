/**
 * Batched completion of jobs. Jobs that end in the same tick of this process are finished together
 * with ONE statement (one at a time: jobs that end while it runs form the next batch), so one
 * statement and one commit flush serve the batch instead of a transaction per job; a crash before
 * the flush leaves the jobs claimed, to run again after the lease.
 *
 * - CompletionBatch: kinds whose handler writes nothing transactional (`finishBatched`):
 *   `delete ... where locked_by = <this worker> and id = any(...)`, so a job is finished only while
 *   this worker still holds it (a job whose lease another worker took over is reported lost, never
 *   finished twice).
 * - TickBatch: the same collection for any statement; a kind's `finishTogether` (the delivery kind
 *   records its attempts) writes its outcomes joined to the jobs that statement's delete removed.
 */
import type { Sql } from '../server/db/connect'
import { deleteHeldJobs } from './claim'

/**
 * Collects items ending in one tick and flushes them with one call (one at a time). `flush`
 * resolves with the ids it finished; each item's promise resolves with whether its id is among
 * them, or rejects when the flush failed.
 */
export class TickBatch<T extends { id: string }> {
  private pending = new Map<string, { item: T; waiters: { resolve: (owned: boolean) => void; reject: (e: unknown) => void }[] }>()
  private scheduled = false
  /** The flush under way, if any: the next batch waits for it (one statement at a time, bigger batches). */
  private running: Promise<void> = Promise.resolve()

  constructor(private readonly flushAll: (items: T[]) => Promise<ReadonlySet<string>>) {}

  /** Adds `item` to this tick's batch; resolves true when the flush finished it, false when not (lost). */
  finish(item: T): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const entry = this.pending.get(item.id)
      if (entry) entry.waiters.push({ resolve, reject })
      else this.pending.set(item.id, { item, waiters: [{ resolve, reject }] })
      if (!this.scheduled) {
        this.scheduled = true
        void this.running.then(() => new Promise<void>((r) => setImmediate(r))).then(() => { this.running = this.flush() })
      }
    })
  }

  /** Flushes the batch collected so far and settles each caller. */
  private async flush(): Promise<void> {
    this.scheduled = false
    const batch = this.pending
    this.pending = new Map()
    try {
      const done = await this.flushAll([...batch.values()].map((e) => e.item))
      for (const [id, { waiters }] of batch) for (const w of waiters) w.resolve(done.has(id))
    } catch (e) {
      for (const { waiters } of batch.values()) for (const w of waiters) w.reject(e)
    }
  }
}

/** Collects finished jobs of one worker and deletes them in one statement per tick. */
export class CompletionBatch {
  private readonly batch: TickBatch<{ id: string }>

  constructor(sql: Sql, workerId: string) {
    this.batch = new TickBatch(async (jobs) => {
      const rows = await deleteHeldJobs(sql, workerId, jobs.map((j) => j.id))
      return new Set(rows.map((r) => r.id as string))
    })
  }

  /**
   * Finishes a job with the others finished in this tick; resolves true when this worker still
   * held it (it is deleted), false when it had lost it. Rejects when the statement fails.
   */
  finish(jobId: string): Promise<boolean> {
    return this.batch.finish({ id: jobId })
  }
}
