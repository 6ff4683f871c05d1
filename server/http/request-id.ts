/**
 * X-Request-Id on every response, and the request's trace context (server/observability/context.ts):
 * the caller's X-Request-Id when it is a short safe token, else the trace id (the inbound W3C
 * `traceparent`'s when valid, a fresh one otherwise) in UUID spelling.
 */
import { Elysia } from 'elysia'
import { contextFromHeaders, enterContext, type RequestContext } from '../observability/context'
import { refuseNonUtf8Query } from './query-encoding'

const contexts = new WeakMap<Request, RequestContext>()

/** The trace context of a request (made on first use). */
export function contextOfRequest(request: Request): RequestContext {
  let ctx = contexts.get(request)
  if (!ctx) {
    ctx = contextFromHeaders(request.headers.get('x-request-id'), request.headers.get('traceparent'))
    contexts.set(request, ctx)
  }
  return ctx
}

/** The request id assigned to a request (assigning one if the plugin has not run yet). */
export function requestIdOf(request: Request): string {
  return contextOfRequest(request).requestId
}

/**
 * Plugin: assigns the request's context before routing (entering it for the rest of the request's
 * asynchronous flow, so jobs it enqueues and lines it logs carry it) and sets the response header.
 * Then the first check every request meets, with its id already set: a query string that is not
 * valid UTF-8 is 400 (server/http/query-encoding.ts; one hook, as one more plugin deepens the app's type past tsc's limit).
 */
export const requestId = new Elysia({ name: 'request-id' }).onRequest(({ request, set }) => {
  const ctx = contextOfRequest(request)
  enterContext(ctx)
  set.headers['x-request-id'] = ctx.requestId
  refuseNonUtf8Query(request)
})
