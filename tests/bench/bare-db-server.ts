/**
 * The database-bound baseline of api.bench (issue 30): a bare Bun.serve that runs the service's own
 * SQL for the two benchmarked routes through a client opened exactly as the service opens its own
 * (openDatabase with loadConfig's pool size, prepare, timeouts), and nothing else: no routing
 * framework, no authentication, validation, access rules, access log or problem handling.
 *
 * - GET /v1/scenarios/{id}: the case read from its partition (findScenario), rendered as the service
 *   renders it. The service's API-key lookup is cached for 5 s (credential-cache.ts), so under load
 *   it costs one statement per 5 s, not one per request: "the same SQL" is the one case read.
 * - POST /v1/scenarios: the one-statement create (runIdempotentStatement + scenarioCreate), with the
 *   request's Idempotency-Key when it sends one: the same claim-and-insert CTE the service runs.
 *
 * The workspace is BARE_TENANT_ID. Prints its port on the first line.
 */
import { loadConfig } from '../../server/config'
import { openDatabase } from '../../server/db/connect'
import { findScenario, renderScenario, scenarioCreate } from '../../server/scenarios/store'
import { runIdempotentStatement } from '../../server/http/idempotency'

const config = loadConfig(process.env)
const tenantId = process.env.BARE_TENANT_ID!
const db = await openDatabase({
  databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: config.dbPoolMax, prepare: config.dbPrepare,
  statementTimeoutMs: config.dbStatementTimeoutMs, poolWaitMs: config.dbPoolWaitMs, connectTimeoutMs: config.dbConnectTimeoutMs,
})
const { sql } = db
const json = { 'content-type': 'application/json' }
const PREFIX = '/v1/scenarios'

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false, // as the service's listener
  async fetch(req) {
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
  },
})
console.log(server.port)
process.on('SIGTERM', () => { void server.stop(true); void db.close().then(() => process.exit(0)) })
