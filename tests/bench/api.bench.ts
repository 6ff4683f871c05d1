/**
 * API throughput: GET /v1/scenarios/{id} and POST /v1/scenarios with an API key at 50 concurrent
 * connections, each as a ratio to a bare Bun.serve returning a JSON object of the same size,
 * measured in the same run with the same load generator. Needs DATABASE_URL (PostgreSQL).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/api.bench.ts
 *   BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS (defaults 5, 50 and 3)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '../helpers/database'
import { runCli, spawnService } from '../helpers/service-process'
import { load, median, type LoadResult } from './load'

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
if (!process.env.DATABASE_URL) {
  console.error('set DATABASE_URL to a PostgreSQL server (the target is measured on PostgreSQL)')
  process.exit(2)
}

const database = await createTestDatabase()
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
const env = { DATABASE_URL: database.url, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'), SVC_DB_POOL_MAX: process.env.SVC_DB_POOL_MAX }
await runCli(['migrate'], env)
await runCli(['tenant', 'create', '--slug', 'bench'], env)
const key = (await runCli(['api-key', 'create', '--tenant', 'bench', '--name', 'bench', '--scopes', 'scenarios:read,scenarios:write'], env)).json.key as string
const svc = await spawnService(['bun', 'server/main.ts'], env)

const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const createBody = JSON.stringify({ name: 'Bench case', external_ref: 'bench-ref-0001' })
const created = await (await fetch(`${svc.url}/v1/scenarios`, { method: 'POST', headers: auth, body: createBody })).text()
const id = JSON.parse(created).id as string

// The baseline: a bare Bun.serve in its own process answering a JSON object of the same size.
const bare = Bun.spawn(['bun', 'tests/bench/bare-server.ts'], { env: { ...process.env, BARE_BODY: created }, stdout: 'pipe' })
const firstLine = await bare.stdout.getReader().read()
const bareUrl = `http://127.0.0.1:${new TextDecoder().decode(firstLine.value).trim()}`

const opts = { connections, seconds }
const measure = async (base: string, method: 'GET' | 'POST', path: string, status: number, secs = seconds) =>
  load(() => new Request(base + path, { method, headers: auth, body: method === 'POST' ? createBody : undefined }), { ...opts, seconds: secs, expectStatus: status })
const show = (label: string, r: LoadResult) =>
  console.log(`  ${label.padEnd(26)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}`)

console.log(`api.bench: ${connections} connections, ${seconds} s per measurement, ${rounds} rounds, PostgreSQL${env.DATABASE_URL!.includes('host=/') ? ' (Unix socket)' : ' (TCP)'}, pool ${env.SVC_DB_POOL_MAX ?? 'default'}`)
// Paired rounds, baseline and service back to back, so a slow spell of this shared machine lands
// on both sides of a ratio; the median ratio is the figure. All GET rounds run before any POST:
// thousands of inserted cases wake PostgreSQL's background writers, which would tax the reads.
const ratios = { get: [] as number[], getP99: [] as number[], post: [] as number[], postP99: [] as number[] }
const pairs = async (method: 'GET' | 'POST', path: string, status: number, rps: number[], p99: number[]) => {
  // Warm both servers first (JIT, prepared statements, connections); nothing warm is counted.
  for (const base of [bareUrl, svc.url]) await measure(base, method, path, status, 2)
  for (let round = 1; round <= rounds; round++) {
    const baseline = await measure(bareUrl, method, path, status)
    const service = await measure(svc.url, method, path, status)
    show(`bare Bun.serve ${method} (${round})`, baseline)
    show(`${method} ${method === 'GET' ? '/v1/scenarios/{id}' : '/v1/scenarios'} (${round})`, service)
    rps.push(service.rps / baseline.rps)
    p99.push(service.p99 / baseline.p99)
  }
}
await pairs('GET', `/v1/scenarios/${id}`, 200, ratios.get, ratios.getP99)
await pairs('POST', '/v1/scenarios', 201, ratios.post, ratios.postP99)
const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ')
console.log(`ratio GET  rps ${median(ratios.get).toFixed(2)} median of [${list(ratios.get)}] (target >= 0.35), p99 ${median(ratios.getP99).toFixed(2)}x the bare server's`)
console.log(`ratio POST rps ${median(ratios.post).toFixed(2)} median of [${list(ratios.post)}], p99 ${median(ratios.postP99).toFixed(2)}x the bare server's`)

bare.kill()
await svc.stop()
await database.drop()
rmSync(dataDir, { recursive: true, force: true })
