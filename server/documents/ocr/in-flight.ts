/**
 * Pages of one document in recognition at once: an adapter hands each OCR page to `add`, which
 * waits while `limit` pages are in flight and then starts the page without waiting for its
 * reading, so a scan's pages fill every free OCR slot while the adapter moves on to the next page
 * (rendering it, or reading its text layer). `drain` waits for the last readings.
 */
export interface PagesInFlight {
  /** Starts `work` once fewer than the limit are running; resolves when it has started. `work` must not reject. */
  add(work: () => Promise<void>): Promise<void>
  /** Resolves when every page started has been read. */
  drain(): Promise<void>
}

/** A pipeline of at most `limit` pages at once (at least 1). */
export function pagesInFlight(limit: number): PagesInFlight {
  const running = new Set<Promise<void>>()
  const max = Math.max(1, Math.floor(limit))
  return {
    async add(work) {
      while (running.size >= max) await Promise.race(running)
      const p: Promise<void> = work().catch(() => {}).finally(() => { running.delete(p) })
      running.add(p)
    },
    async drain() {
      while (running.size > 0) await Promise.race(running)
    },
  }
}
