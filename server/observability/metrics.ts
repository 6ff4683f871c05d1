/**
 * Prometheus metrics (prom-client; it runs under Bun, event-loop delay included). One registry per
 * AppDeps, served on its own listener (SVC_METRICS_PORT, off by default, refused on the API port:
 * see serveMetrics). Every label value is bounded: route templates (never paths with ids), job kinds
 * and delivery channels from fixed tables, status codes, attempt numbers capped.
 */
import client from 'prom-client'
import { defaultLogger } from './log'

/** The database pool as the client reports it (see the client patch's `stats`). */
export interface PoolStats { size: number; inUse: number; idle: number; waiting: number }

/** The metric families, and the one-line helpers the code records them with. */
export interface Metrics {
  readonly registry: client.Registry
  /** Whether anything is recorded (false: every helper returns at once). */
  readonly enabled: boolean
  http(method: string, route: string, status: number, seconds: number): void
  jobRun(kind: string, outcome: 'succeeded' | 'retried' | 'dead' | 'lost', seconds: number): void
  jobLeaseExpired(kind: string): void
  /** One claim of a runner: whether it brought jobs or found none (a claim is a locking update either way). */
  jobClaim(result: 'jobs' | 'empty'): void
  delivery(channel: string, outcome: 'delivered' | 'failed' | 'refused' | 'dead_lettered', attempt: number): void
  ingestionPages(pages: { text_layer: number; ocr: number; blank: number; unreadable: number }, seconds: number): void
  evaluation(engine: string, outcome: string, seconds: number): void
  /**
   * Sources read at scrape time: the queue (a database query), the pool, the open SSE streams, and
   * the count of rejections nothing handled (last-resort.ts).
   */
  setCollectors(c: { queue?: () => Promise<QueueDepth[]>; pool?: () => PoolStats | undefined; sseStreams?: () => number; unhandledRejections?: () => number }): void
}

/** Runnable jobs of one kind and the age of the oldest. */
export interface QueueDepth { kind: string; runnable: number; oldestAgeSeconds: number }

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const WORK_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
const PAGE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Attempt labels stop here ("8+"): a delivery has 8 attempts a cycle. */
const MAX_ATTEMPT_LABEL = 8

/** Builds the registry and its families; `enabled: false` makes every helper a no-op. */
export function createMetrics(enabled = true): Metrics {
  const registry = new client.Registry()
  const r = [registry]
  const httpTotal = new client.Counter({ name: 'svc_http_requests_total', help: 'HTTP requests by method, route template and status.', labelNames: ['method', 'route', 'status'] as const, registers: r })
  const httpSeconds = new client.Histogram({ name: 'svc_http_request_duration_seconds', help: 'HTTP request latency (to the response head) by method, route template and status.', labelNames: ['method', 'route', 'status'] as const, buckets: LATENCY_BUCKETS, registers: r })
  const jobRuns = new client.Counter({ name: 'svc_job_runs_total', help: 'Job runs by kind and outcome (succeeded, retried, dead, lost: another worker owned the job by then).', labelNames: ['kind', 'outcome'] as const, registers: r })
  const jobFailures = new client.Counter({ name: 'svc_job_failures_total', help: 'Failed job runs by kind (retried or dead).', labelNames: ['kind'] as const, registers: r })
  const jobSeconds = new client.Histogram({ name: 'svc_job_duration_seconds', help: 'Job run time by kind.', labelNames: ['kind'] as const, buckets: WORK_BUCKETS, registers: r })
  const leaseExpiries = new client.Counter({ name: 'svc_job_lease_expiries_total', help: 'Jobs claimed after their previous lease lapsed (their worker died or stalled), by kind.', labelNames: ['kind'] as const, registers: r })
  const claims = new client.Counter({ name: 'svc_job_claims_total', help: 'Claims of the job runners (each a locking update of the jobs table): jobs (it brought some) or empty (it found none).', labelNames: ['result'] as const, registers: r })
  let queue: (() => Promise<QueueDepth[]>) | undefined
  let pool: (() => PoolStats | undefined) | undefined
  let sseStreams: (() => number) | undefined
  let unhandledRejections: (() => number) | undefined
  let lastQueue: QueueDepth[] = []
  const runnable = new client.Gauge({ name: 'svc_jobs_runnable', help: 'Jobs due and not leased, by kind (read from the database at scrape: the same for every process).', labelNames: ['kind'] as const, registers: r,
    async collect() {
      if (!queue) return
      try { lastQueue = await queue() } catch { return } // database away: the scrape still answers
      this.reset()
      for (const q of lastQueue) this.set({ kind: q.kind }, q.runnable)
    } })
  new client.Gauge({ name: 'svc_jobs_oldest_runnable_age_seconds', help: 'Age of the oldest runnable job by kind (since its run_at).', labelNames: ['kind'] as const, registers: r,
    collect() {
      this.reset()
      for (const q of lastQueue) this.set({ kind: q.kind }, q.oldestAgeSeconds)
    } })
  void runnable
  const deliveries = new client.Counter({ name: 'svc_deliveries_total', help: 'Notification delivery attempts by channel, outcome and attempt number within the cycle.', labelNames: ['channel', 'outcome', 'attempt'] as const, registers: r })
  const pages = new client.Counter({ name: 'svc_ingestion_pages_total', help: 'Document pages read, by source (text_layer, ocr) or outcome (blank, unreadable).', labelNames: ['source'] as const, registers: r })
  const pageSeconds = new client.Histogram({ name: 'svc_ingestion_page_seconds', help: 'Parse seconds per page of one document, by its source (ocr when any page needed OCR).', labelNames: ['source'] as const, buckets: PAGE_BUCKETS, registers: r })
  const evaluations = new client.Counter({ name: 'svc_evaluations_total', help: 'Evaluation runs by engine and outcome.', labelNames: ['engine', 'outcome'] as const, registers: r })
  const evaluationSeconds = new client.Histogram({ name: 'svc_evaluation_duration_seconds', help: 'Evaluation run time by engine and outcome.', labelNames: ['engine', 'outcome'] as const, buckets: WORK_BUCKETS, registers: r })
  new client.Gauge({ name: 'svc_sse_streams_open', help: 'Open case event streams (SSE) of this process.', registers: r,
    collect() { if (sseStreams) this.set(sseStreams()) } })
  new client.Gauge({ name: 'svc_db_pool_connections', help: 'Database pool connections of this process by state (in_use, idle; size is the configured maximum).', labelNames: ['state'] as const, registers: r,
    collect() {
      const s = pool?.()
      if (!s) return
      this.set({ state: 'in_use' }, s.inUse)
      this.set({ state: 'idle' }, s.idle)
      this.set({ state: 'size' }, s.size)
    } })
  // A defect's count, not a load figure: a promise rejection nothing handled, logged and survived
  // (last-resort.ts). Alert on any increase; the error line names the error.
  new client.Counter({ name: 'svc_unhandled_rejections_total', help: 'Promise rejections nothing handled in this process (logged; the process keeps serving). Any increase is a defect to report.', registers: r,
    collect() { if (unhandledRejections) { this.reset(); this.inc(unhandledRejections()) } } })
  new client.Gauge({ name: 'svc_db_pool_waiting', help: 'Queries of this process waiting for a pool connection.', registers: r,
    collect() { const s = pool?.(); if (s) this.set(s.waiting) } })
  if (enabled) client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 })

  const status = (n: number) => String(n)
  return {
    registry,
    enabled,
    http(method, route, code, seconds) {
      if (!enabled) return
      const labels = { method, route, status: status(code) }
      httpTotal.inc(labels)
      httpSeconds.observe(labels, seconds)
    },
    jobRun(kind, outcome, seconds) {
      if (!enabled) return
      jobRuns.inc({ kind, outcome })
      if (outcome === 'retried' || outcome === 'dead') jobFailures.inc({ kind })
      jobSeconds.observe({ kind }, seconds)
    },
    jobLeaseExpired(kind) { if (enabled) leaseExpiries.inc({ kind }) },
    jobClaim(result) { if (enabled) claims.inc({ result }) },
    delivery(channel, outcome, attempt) {
      if (!enabled) return
      deliveries.inc({ channel, outcome, attempt: attempt >= MAX_ATTEMPT_LABEL ? `${MAX_ATTEMPT_LABEL}+` : String(Math.max(1, attempt)) })
    },
    ingestionPages(p, seconds) {
      if (!enabled) return
      for (const source of ['text_layer', 'ocr', 'blank', 'unreadable'] as const) if (p[source] > 0) pages.inc({ source }, p[source])
      const total = p.text_layer + p.ocr + p.blank + p.unreadable
      if (total > 0) pageSeconds.observe({ source: p.ocr > 0 ? 'ocr' : 'text_layer' }, seconds / total)
    },
    evaluation(engine, outcome, seconds) {
      if (!enabled) return
      evaluations.inc({ engine, outcome })
      evaluationSeconds.observe({ engine, outcome }, seconds)
    },
    setCollectors(c) {
      queue = c.queue ?? queue
      pool = c.pool ?? pool
      sseStreams = c.sseStreams ?? sseStreams
      unhandledRejections = c.unhandledRejections ?? unhandledRejections
    },
  }
}

/** The route label of a request: the matched template, or one fixed value for anything unmatched. */
export const UNMATCHED_ROUTE = '(unmatched)'

/**
 * Serves GET /metrics on its own listener; `port` 0 picks a free one. Returns the bound port and
 * the stop. The API listener never serves metrics.
 */
export function serveMetrics(metrics: Metrics, port: number, hostname: string): { port: number; stop: () => void } {
  const server = Bun.serve({
    port,
    hostname,
    // Never Bun's development mode, which answers an escaped error with its message and stack.
    development: false,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (req.method !== 'GET' || path !== '/metrics') return new Response('not found\n', { status: 404 })
      try {
        return new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } })
      } catch (e) {
        // A collector that failed (the queue depth's query with the database away): the scraper
        // sees a bare 500 and the cause goes to the log.
        defaultLogger().error('metrics scrape failed', { error: (e as Error)?.message ?? String(e) })
        return new Response('metrics unavailable\n', { status: 500 })
      }
    },
  })
  return { port: server.port!, stop: () => void server.stop(true) }
}
