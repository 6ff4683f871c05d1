/**
 * Batched completion of jobs. Jobs of kinds whose handler writes nothing transactional
 * (`finishBatched`) that end in the same tick of this process are finished together with ONE
 * statement: `delete ... where locked_by = <this worker> and id = any(...)` (one at a time: jobs that
 * end while it runs form the next batch), so a job is finished
 * only while this worker still holds it (a job whose lease another worker took over is reported
 * lost, never finished twice). One statement and one commit flush for the batch instead of a
 * transaction per job; a crash before the flush leaves the jobs claimed, to run again after the lease.
 */
import type { Sql } from '../server/db/connect'

/** Collects finished jobs of one worker and deletes them in one statement per tick. */
export class CompletionBatch {
  private pending = new Map<string, { resolve: (owned: boolean) => void; reject: (e: unknown) => void }[]>()
  private scheduled = false
  /** The statement under way, if any: the next batch waits for it (one statement at a time, bigger batches). */
  private running: Promise<void> = Promise.resolve()

  constructor(private readonly sql: Sql, private readonly workerId: string) {}

  /**
   * Finishes a job with the others finished in this tick; resolves true when this worker still
   * held it (it is deleted), false when it had lost it. Rejects when the statement fails.
   */
  finish(jobId: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(jobId)
      if (waiting) waiting.push({ resolve, reject })
      else this.pending.set(jobId, [{ resolve, reject }])
      if (!this.scheduled) {
        this.scheduled = true
        void this.running.then(() => new Promise<void>((r) => setImmediate(r))).then(() => { this.running = this.flush() })
      }
    })
  }

  /** Deletes the batch collected so far, if this worker holds its jobs, and settles each caller. */
  private async flush(): Promise<void> {
    this.scheduled = false
    const batch = this.pending
    this.pending = new Map()
    const ids = [...batch.keys()]
    try {
      const rows = await this.sql<{ id: string }[]>`
        delete from jobs where locked_by = ${this.workerId} and id = any(${ids}::uuid[]) returning id`
      const done = new Set(rows.map((r) => r.id))
      for (const [id, waiters] of batch) for (const w of waiters) w.resolve(done.has(id))
    } catch (e) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(e)
    }
  }
}
