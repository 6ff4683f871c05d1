/**
 * Where a request's CPU goes, in process (issue 30): the two routes of api.bench called without a
 * socket or a load generator, each side's CPU per request read from this process alone, so the
 * figures are not shared with wrk, PostgreSQL's scheduling or a second server on the same cores.
 * api.bench gives the throughput ratios; this splits the service's extra CPU between the framework
 * and the service's own hooks and checks.
 *
 * POST /v1/scenarios (a fresh Idempotency-Key each):
 * - bare: api.bench's database-bound baseline handler (bare-db-handler.ts), the same SQL, no framework;
 * - framework: the same handler body as one route of a bare Elysia app with the route's body schema
 *   (`normalize: 'typebox'`, as the service), and no plugin: what the framework alone adds;
 * - service: the service's app (`createApp(...).handle`): request id and trace context, the JSON
 *   body parser and its checks, authentication (cached) and the access rule, the route's checks.
 * GET /v1/scenarios/{id}:
 * - bare: the same handler;
 * - read front: the service's path for an API key (read-front.ts, the handler Bun's router calls);
 * - service (framework path): the same request through the app, as a request the front does not
 *   take (a user token, a query string) is served.
 *
 * Every side builds the same Request per call and answers the same JSON; rounds alternate the sides
 * and the median of each side's rounds is quoted.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/api-path.bench.ts
 *   BENCH_REQUESTS=6000 BENCH_ROUNDS=6 BENCH_CONCURRENCY=16 (the defaults)
 */
import { Elysia } from 'elysia'
import { startApp } from '../helpers/app'
import { createApp } from '../../server/app'
import { readFront } from '../../server/resources/read-front'
import { runIdempotentStatement } from '../../server/http/idempotency'
import { scenarioCreate } from '../../server/scenarios/store'
import { ScenarioCreate } from '../../schemas/scenario'
import { bareDbHandler } from './bare-db-handler'
import { median } from './load'

const requests = Number(process.env.BENCH_REQUESTS ?? 6000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 6)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16)
const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'

const app = await startApp({ runner: false, env: { SVC_ACCESS_LOG: '0' } })
const tenant = await app.tenant()
const key = await app.apiKey(tenant.id, ['scenarios:read', 'scenarios:write'])
const { sql } = app.deps
const origin = 'http://localhost:3000'
const body = JSON.stringify({ name: 'Bench case', external_ref: 'bench-ref-0001' })

const bare = bareDbHandler(sql, tenant.id)
const service = createApp(app.deps)
const front = readFront(app.deps)!.routes['/v1/scenarios/:scenarioId']!.GET
/** The route alone in a bare Elysia app: the bare handler's body behind the framework's parsing, validation and response mapping. */
const framework = new Elysia({ normalize: 'typebox' }).post('/v1/scenarios', async ({ body, request, path, set }) => {
  const result = await runIdempotentStatement(
    { sql, tenantId: tenant.id, method: 'POST', path, body, key: request.headers.get('idempotency-key') },
    scenarioCreate(sql, tenant.id, { name: body.name, externalRef: body.external_ref ?? null, vertical: body.vertical }),
  )
  set.status = result.status
  set.headers.location = result.location ?? ''
  return result.body
}, { body: ScenarioCreate })

const post = () => new Request(`${origin}/v1/scenarios`, {
  method: 'POST', body,
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(body.length), 'idempotency-key': crypto.randomUUID() },
})
const created = await (await service.handle(post())).json() as { id: string }
const get = () => new Request(`${origin}/v1/scenarios/${created.id}`, { headers: { authorization: `Bearer ${key}` } })
const routed = (request: Request) => Object.assign(request, { params: { scenarioId: created.id } })

/** Calls `handle` on a fresh request `requests` times, `concurrency` at a time; returns this process's CPU per request, us. */
async function cpuPerRequest(make: () => Request, handle: (r: Request) => Response | Promise<Response>, status: number): Promise<number> {
  let left = requests
  const cpu0 = process.cpuUsage()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (left-- > 0) {
      const res = await handle(make())
      await res.arrayBuffer()
      if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}`)
    }
  }))
  const cpu = process.cpuUsage(cpu0)
  return (cpu.user + cpu.system) / requests
}

const sides = {
  'POST bare': () => cpuPerRequest(post, bare, 201),
  'POST framework': () => cpuPerRequest(post, (r) => framework.handle(r), 201),
  'POST service': () => cpuPerRequest(post, (r) => service.handle(r), 201),
  'GET bare': () => cpuPerRequest(get, bare, 200),
  'GET read front': () => cpuPerRequest(() => routed(get()), (r) => front(r as Request & { params: Record<string, string> }), 200),
  'GET service (framework path)': () => cpuPerRequest(get, (r) => service.handle(r), 200),
}
type Side = keyof typeof sides

console.log(`api-path.bench: ${requests} requests per side and round, ${rounds} rounds, concurrency ${concurrency}, ${database}, CPU of this process per request`)
for (const run of Object.values(sides)) await run() // warm-up: JIT, prepared statements, the credential cache
const figures = {} as Record<Side, number[]>
for (let round = 1; round <= rounds; round++) {
  for (const [side, run] of Object.entries(sides) as [Side, () => Promise<number>][]) (figures[side] ??= []).push(await run())
}
const mid = (side: Side) => median(figures[side])
for (const side of Object.keys(sides) as Side[]) {
  console.log(`  ${side.padEnd(30)} ${mid(side).toFixed(1).padStart(6)} us  [${figures[side].map((x) => x.toFixed(1)).join(' ')}]`)
}
const postGap = mid('POST service') - mid('POST bare')
const frameworkShare = mid('POST framework') - mid('POST bare')
console.log(`POST: the service ${postGap.toFixed(1)} us over the bare handler (bare/service ${(mid('POST bare') / mid('POST service')).toFixed(2)}): the framework ${frameworkShare.toFixed(1)} us, the service's hooks and checks ${(postGap - frameworkShare).toFixed(1)} us`)
console.log(`GET: the read front ${(mid('GET read front') - mid('GET bare')).toFixed(1)} us over the bare handler (bare/front ${(mid('GET bare') / mid('GET read front')).toFixed(2)}); through the framework ${(mid('GET service (framework path)') - mid('GET bare')).toFixed(1)} us over`)
await app.stop()
