/**
 * The read front (issue 30): the hottest authenticated read, `GET /v1/scenarios/{id}` with an API
 * key, answered from Bun's own router without Elysia's per-request work (its context object, the
 * request-id, transform and resolve hooks and their promise hops, the response mapping). It does the
 * same checks with the same functions, in the same order: the request's trace context (passed, not
 * entered into the AsyncLocalStorage, except on the error path), the API key
 * (the authenticator and its cache), the route's access rule (`authorize`), the case read and its
 * rendering, every error through the one problem path (`errorResponse`), and the access line and
 * metrics through the same recorder as the hook (`requestRecorder`).
 *
 * It serves only what it handles completely; every other request of the route falls through,
 * untouched, to the Elysia app: another method (HEAD), a query string, a credential that is not an
 * API key (user tokens, embed sessions, operators, none at all), an `SVC-Tenant-Id` header
 * (break-glass) and an id that is not a canonical UUID (the framework's 400). So the decision to
 * fall through is taken before anything is read or assigned, and a request is never half served.
 * `SVC_READ_FRONT=0` turns it off; tests/http/read-front.test.ts sends the same requests through
 * both paths and compares status, headers and bodies.
 */
import type { AppDeps } from '../deps'
import { authorize, tenantOf, TENANT_HEADER } from '../auth/access'
import { SCENARIO_READ_RULE } from './scenarios'
import { errorResponse } from '../http/errors'
import { problems } from '../http/problem'
import { contextFromHeaders, runWithContext } from '../observability/context'
import { requestRecorder } from '../observability/http'
import { findScenario, renderScenario } from '../scenarios/store'

/** The route the front serves, as Elysia names it (its access line and metric label too). */
export const SCENARIO_ROUTE = '/v1/scenarios/:scenarioId'

/** A canonical UUID, the subset of the route's `format: uuid` the front accepts (anything else falls through). */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** `Bearer` and a credential the authenticator reads as an API key (the `svc_live_` / `svc_test_` prefix); a subset of what it accepts. */
const BEARER_API_KEY = /^\s*Bearer svc_(?:live|test)_/

type Fetch = (request: Request) => Response | Promise<Response>
type RouteRequest = Request & { params: Record<string, string> }

let served = 0

/** How many requests the read fronts of this process have answered themselves (tests prove the path was taken). */
export function readFrontServed(): number {
  return served
}

/** What createApp mounts: Bun routes for `serve.routes`, and where a request the front does not take goes. */
export interface ReadFront {
  routes: Record<string, { GET: (request: RouteRequest) => Response | Promise<Response> }>
  /** Sets the app's own fetch, which answers every request the front leaves (call once the app is built). */
  fallBackTo(fetch: Fetch): void
}

/** Builds the read front over the app's dependencies; undefined when SVC_READ_FRONT=0. */
export function readFront(deps: AppDeps): ReadFront | undefined {
  if (!deps.config.readFront) return undefined
  const { sql, authenticate } = deps
  const record = requestRecorder({ log: deps.log, metrics: deps.metrics, accessLog: deps.config.accessLog })
  let fallback: Fetch = () => { throw new Error('the read front has no app to fall back to') }
  const json = (text: string, requestId: string) => new Response(text, { headers: { 'content-type': 'application/json;charset=utf-8', 'x-request-id': requestId } })

  const readScenario = async (request: RouteRequest): Promise<Response> => {
    const headers = request.headers
    const authorization = headers.get('authorization')
    const id = request.params.scenarioId!
    const url = request.url
    if (request.method !== 'GET' || authorization === null || !BEARER_API_KEY.test(authorization) || headers.has(TENANT_HEADER)
      || url.includes('?') || !CANONICAL_UUID.test(id)) return fallback(request)
    served++
    // The context is passed, not entered: nothing on the way to a 200 logs, and an active
    // AsyncLocalStorage store is carried through every promise of the read (about 1 us a request).
    // The error path runs inside it, so its log lines carry the request and trace ids.
    const ctx = contextFromHeaders(headers.get('x-request-id'), headers.get('traceparent'))
    let response: Response
    try {
      const principal = await authenticate(authorization)
      if ('tenantId' in principal && principal.tenantId) ctx.tenantId = principal.tenantId
      authorize(SCENARIO_READ_RULE, principal, { method: 'GET', scenarioId: id })
      const row = await findScenario(sql, tenantOf(principal), id)
      if (!row) throw problems.notFound('scenario')
      const text = JSON.stringify(renderScenario(row))
      response = json(text, ctx.requestId)
      record?.('GET', SCENARIO_ROUTE, 200, () => Buffer.byteLength(text), ctx)
    } catch (error) {
      response = runWithContext(ctx, () => errorResponse(undefined, error, url.slice(url.indexOf('/', url.indexOf('//') + 2)), ctx.requestId))
      record?.('GET', SCENARIO_ROUTE, response.status, Number(response.headers.get('content-length')), ctx)
    }
    return response
  }

  return {
    routes: { [SCENARIO_ROUTE]: { GET: readScenario } },
    fallBackTo(fetch) { fallback = fetch },
  }
}
