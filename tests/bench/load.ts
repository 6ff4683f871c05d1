/**
 * A small closed-loop HTTP load generator for the benchmarks: `connections` concurrent loops, each
 * sending the next request when the previous answered, for `seconds`; reports requests per second
 * and latency percentiles. Every benchmark measures its baseline with the same generator in the
 * same run, so only ratios are quoted.
 */

/** The figures of one load run. */
export interface LoadResult { requests: number; errors: number; rps: number; p50: number; p99: number }

/** Runs a closed loop of `connections` workers against `makeRequest` for `seconds`. */
export async function load(makeRequest: () => Request, opts: { connections: number; seconds: number; expectStatus: number }): Promise<LoadResult> {
  const latencies: number[] = []
  let errors = 0
  const end = performance.now() + opts.seconds * 1000
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      try {
        const res = await fetch(makeRequest())
        await res.arrayBuffer()
        if (res.status !== opts.expectStatus) errors++
      } catch {
        errors++
      }
      latencies.push(performance.now() - t0)
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: opts.connections }, worker))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0
  return { requests: latencies.length, errors, rps: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99) }
}

/** The median of a list of figures (the upper middle one for an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
}
