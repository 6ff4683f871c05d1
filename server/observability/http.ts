/**
 * Plugin: after each response, one access line (method, route template, status, duration, bytes,
 * with request_id, trace_id and tenant_id from the request's context) and the HTTP metrics. The
 * route is Elysia's matched template, so no id, query string or presigned signature reaches a line
 * or a label; a request that matched no route is `(unmatched)`.
 */
import { Elysia, StatusMap } from 'elysia'
import type { Logger } from './log'
import type { Metrics } from './metrics'
import { UNMATCHED_ROUTE } from './metrics'
import { contextOfRequest } from '../http/request-id'
import type { RequestContext } from './context'

const statusOf = (response: unknown, set: { status?: number | string }): number => {
  if (response instanceof Response) return response.status
  const s = set.status
  if (typeof s === 'number') return s
  if (typeof s === 'string') return (StatusMap as Record<string, number>)[s] ?? 200
  return 200
}

/** Response bytes when known without reading the body: the Content-Length, or the serialised size of a string or JSON value. */
const bytesOf = (response: unknown): number | undefined => {
  if (response instanceof Response) {
    const length = response.headers.get('content-length')
    return length !== null ? Number(length) : undefined
  }
  if (response === undefined || response === null) return 0
  if (typeof response === 'string') return Buffer.byteLength(response)
  if (typeof response === 'object' && !(response instanceof ReadableStream) && !(response instanceof Blob) && !(Symbol.asyncIterator in response)) {
    try { return Buffer.byteLength(JSON.stringify(response)) } catch { return undefined }
  }
  return undefined
}

/** Records one finished request: its metrics and, when on, its access line (`bytes` is read only for the line). */
export type RequestRecorder = (method: string, route: string, status: number, bytes: number | (() => number | undefined), ctx: RequestContext) => void

/**
 * The recorder of finished requests, shared by the after-response hook below and the read front
 * (server/resources/read-front.ts); undefined when nothing is observed (SVC_ACCESS_LOG=0 and no
 * metrics listener), so neither path does any per-request work for it.
 */
export function requestRecorder(opts: { log: Logger; metrics: Metrics; accessLog: boolean }): RequestRecorder | undefined {
  const { log, metrics, accessLog } = opts
  if (!accessLog && !metrics.enabled) return undefined
  return (method, route, status, bytes, ctx) => {
    const seconds = (performance.now() - ctx.startedAt) / 1000
    metrics.http(method, route, status, seconds)
    if (accessLog) {
      log.info('request', {
        method, route, status, duration_ms: Math.round(seconds * 100_000) / 100,
        bytes: typeof bytes === 'function' ? bytes() : bytes, request_id: ctx.requestId, trace_id: ctx.traceId, tenant_id: ctx.tenantId,
      })
    }
  }
}

/** Options: the logger, the metrics, and whether access lines are written (SVC_ACCESS_LOG). */
export function observeHttp(opts: { log: Logger; metrics: Metrics; accessLog: boolean }) {
  const record = requestRecorder(opts)
  // Nothing to observe (SVC_ACCESS_LOG=0, no metrics listener): no hook at all. A registered
  // after-response hook costs every request a scheduled callback even when it returns at once.
  if (!record) return new Elysia({ name: 'observe-http' })
  return new Elysia({ name: 'observe-http' }).onAfterResponse({ as: 'global' }, ({ request, route, set, response }) => {
    const ctx = contextOfRequest(request)
    const final = ctx.response ?? response
    record(request.method, route || UNMATCHED_ROUTE, statusOf(final, set), () => bytesOf(final), ctx)
  })
}
