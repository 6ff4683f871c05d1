/**
 * The request handler of api.bench's database-bound baseline (bare-db-server.ts), apart from its
 * listener so that api-path.bench.ts can call the very same code in process: the service's own SQL
 * for the two benchmarked routes and nothing else (no routing framework, authentication,
 * validation, access rules, access log or problem handling).
 *
 * - GET /v1/scenarios/{id}: the case read from its partition (findScenario), rendered as the service
 *   renders it. The service's API-key lookup is cached for 5 s (credential-cache.ts), so under load
 *   it costs one statement per 5 s, not one per request: "the same SQL" is the one case read.
 * - POST /v1/scenarios: the one-statement create (runIdempotentStatement + scenarioCreate), with the
 *   request's Idempotency-Key when it sends one: the same claim-and-insert CTE the service runs.
 */
import type { Sql } from '../../server/db/connect'
import { findScenario, renderScenario, scenarioCreate } from '../../server/scenarios/store'
import { runIdempotentStatement } from '../../server/http/idempotency'

const json = { 'content-type': 'application/json' }
const PREFIX = '/v1/scenarios'

/** The bare handler over `sql`, serving workspace `tenantId`. */
export function bareDbHandler(sql: Sql, tenantId: string): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = req.url
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2))
    if (req.method === 'GET' && path.startsWith(`${PREFIX}/`)) {
      const row = await findScenario(sql, tenantId, path.slice(PREFIX.length + 1))
      return row ? new Response(JSON.stringify(renderScenario(row)), { headers: json }) : new Response('{}', { status: 404, headers: json })
    }
    if (req.method === 'POST' && path === PREFIX) {
      const body = (await req.json()) as { name: string; external_ref?: string; vertical?: string | null }
      const result = await runIdempotentStatement(
        { sql, tenantId, method: 'POST', path, body, key: req.headers.get('idempotency-key') },
        scenarioCreate(sql, tenantId, { name: body.name, externalRef: body.external_ref ?? null, vertical: body.vertical }),
      )
      return new Response(JSON.stringify(result.body), { status: result.status, headers: { ...json, location: result.location ?? '' } })
    }
    return new Response('{}', { status: 404, headers: json })
  }
}
