/**
 * The request context: request id, W3C trace context and workspace of the HTTP request (or job)
 * that the current code runs for. It lives in an AsyncLocalStorage entered when a request arrives
 * (server/observability/http.ts) and when the job runner starts a job, so `enqueueJob`, the delivery
 * outbox and every log line find it without passing it through each call.
 *
 * The request id is the caller's `X-Request-Id` when that is a short safe token, else the trace id
 * written as a UUID: with no inbound id the two are the same 128 bits, so one id finds the access
 * line, the jobs, the deliveries and the webhook's `traceparent` (`00-<trace id>-<span>-<flags>`).
 */
import { AsyncLocalStorage } from 'node:async_hooks'

/** What a request (or a job it started) carries through the process. */
export interface TraceContext {
  requestId: string
  /** 32 lowercase hex digits, never all zero. */
  traceId: string
  /** This hop's span id (16 hex): the parent id of what it calls or enqueues. */
  spanId: string
  /** Trace flags (2 hex), `01` = sampled. */
  flags: string
  tenantId?: string
}

/** An HTTP request's context, with what the access line needs. */
export interface RequestContext extends TraceContext {
  /** The route template once routing matched (`/v1/scenarios/:id`), never the raw path. */
  route?: string
  /** The error path's response (Elysia's after-response hook does not see it). */
  response?: Response
  startedAt: number
}

const storage = new AsyncLocalStorage<TraceContext>()

/** The context the current code runs for (undefined outside a request or job). */
export function currentContext(): TraceContext | undefined {
  return storage.getStore()
}

/** Runs `fn` inside `ctx`. */
export function runWithContext<T>(ctx: TraceContext, fn: () => T): T {
  return storage.run(ctx, fn)
}

/** Enters `ctx` for the rest of the current asynchronous flow (used where a hook cannot wrap the handler). */
export function enterContext(ctx: TraceContext): void {
  storage.enterWith(ctx)
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const SAFE_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** Parses a W3C `traceparent`; undefined when absent or invalid (version ff, zero ids, bad shape). */
export function parseTraceparent(header: string | null | undefined): { traceId: string; parentId: string; flags: string } | undefined {
  if (!header || header.length > 512) return undefined
  const m = TRACEPARENT.exec(header.trim())
  if (!m) return undefined
  const [, version, traceId, parentId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined]
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined
  return { traceId, parentId, flags }
}

/** A fresh span id (16 hex, not all zero): the random tail of a v4 UUID (Bun batches their entropy; cheaper than randomBytes). */
export function newSpanId(): string {
  const u = crypto.randomUUID()
  return u.slice(19, 23) + u.slice(24)
}

/** A fresh trace id (32 hex, not all zero). */
export function newTraceId(): string {
  return crypto.randomUUID().replaceAll('-', '')
}

/** A trace id in UUID spelling (the default request id). */
export const traceIdAsUuid = (t: string) => `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`

/** The context of an inbound request from its `X-Request-Id` and `traceparent` headers. */
export function contextFromHeaders(requestIdHeader: string | null, traceparentHeader: string | null): RequestContext {
  const parent = traceparentHeader === null ? undefined : parseTraceparent(traceparentHeader)
  // No inbound trace: one fresh UUID is both the request id and (without its dashes) the trace id.
  const uuid = parent ? undefined : crypto.randomUUID()
  const traceId = parent?.traceId ?? uuid!.replaceAll('-', '')
  const requestId = requestIdHeader && SAFE_ID.test(requestIdHeader) ? requestIdHeader : uuid ?? traceIdAsUuid(traceId)
  return { requestId, traceId, spanId: newSpanId(), flags: parent?.flags ?? '01', startedAt: performance.now() }
}

/** The `traceparent` naming `ctx`'s span as the parent (what a job or delivery stores). */
export function traceparentOf(ctx: Pick<TraceContext, 'traceId' | 'spanId' | 'flags'>): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags}`
}

/**
 * The context a job runs in, from what its row stored: the same request id and trace, a span of
 * its own (its parent is the stored one). Undefined when the job was enqueued outside any request.
 */
export function contextFromStored(requestId: string | null, traceparent: string | null, tenantId: string | null): TraceContext | undefined {
  const parent = parseTraceparent(traceparent)
  if (!requestId && !parent) return undefined
  const traceId = parent?.traceId ?? newTraceId()
  return { requestId: requestId ?? traceIdAsUuid(traceId), traceId, spanId: newSpanId(), flags: parent?.flags ?? '01', ...(tenantId ? { tenantId } : {}) }
}

/** A `traceparent` for one outgoing call: the stored trace, a fresh span id. */
export function outgoingTraceparent(stored: string | null | undefined): string {
  const parent = parseTraceparent(stored)
  return `00-${parent?.traceId ?? newTraceId()}-${newSpanId()}-${parent?.flags ?? '01'}`
}
