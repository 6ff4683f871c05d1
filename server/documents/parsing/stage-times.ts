/**
 * Wall time per stage of one document's ingestion (issue 25: the fixed cost a document pays around
 * its adapter), logged at debug level as `document ingestion stages` when SVC_LOG_LEVEL=debug so a
 * benchmark or an operator can see where the time between `complete` and `ready` goes. Durations
 * only: no content, no names.
 */

/** Milliseconds by stage name, plus epoch milliseconds of the first and last mark. */
export interface StageTimes { [stage: string]: number }

/** Epoch milliseconds with sub-millisecond precision (comparable between processes on one machine). */
export const epochMs = (): number => performance.timeOrigin + performance.now()

/** A stopwatch whose `mark(stage)` adds the time since the previous mark to that stage. */
export class StageClock {
  readonly stages: StageTimes = {}
  readonly startedAt = epochMs()
  private last = this.startedAt

  /** Adds the time since the previous mark (or the start) to `stage`. */
  mark(stage: string): void {
    const t = epochMs()
    this.stages[stage] = (this.stages[stage] ?? 0) + (t - this.last)
    this.last = t
  }

  /** Adds stages measured elsewhere (the parser process's own) and moves the clock past them. */
  add(stages: StageTimes): void {
    for (const [k, v] of Object.entries(stages)) this.stages[k] = (this.stages[k] ?? 0) + v
  }

  /** The stages rounded to 0.1 ms, with the start and the last mark as epoch milliseconds. */
  fields(): Record<string, number> {
    const out: Record<string, number> = { started_at: Math.round(this.startedAt * 10) / 10, ended_at: Math.round(this.last * 10) / 10 }
    for (const [k, v] of Object.entries(this.stages)) out[`${k}_ms`] = Math.round(v * 10) / 10
    return out
  }
}
