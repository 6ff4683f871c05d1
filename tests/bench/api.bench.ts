/**
 * API throughput: GET /v1/scenarios/{id} and POST /v1/scenarios with an API key at 50 concurrent
 * connections, each as a ratio to a bare Bun.serve returning a JSON object of the same size,
 * measured in the same run with the same load generator. Needs DATABASE_URL (PostgreSQL).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/api.bench.ts
 *   BENCH_SECONDS=10 BENCH_CONNECTIONS=50 (defaults 8 and 50)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '../helpers/database'
import { runCli, spawnService } from '../helpers/service-process'
import { load } from './load'

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
if (!process.env.DATABASE_URL) {
  console.error('set DATABASE_URL to a PostgreSQL server (the target is measured on PostgreSQL)')
  process.exit(2)
}

const database = await createTestDatabase()
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
const env = { DATABASE_URL: database.url, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'), SVC_DB_POOL_MAX: process.env.SVC_DB_POOL_MAX ?? '10' }
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
const run = async (label: string, base: string, method: 'GET' | 'POST', path: string, status: number) => {
  await load(() => new Request(base + path, { method, headers: auth, body: method === 'POST' ? createBody : undefined }), { ...opts, seconds: 2, expectStatus: status })
  const r = await load(() => new Request(base + path, { method, headers: auth, body: method === 'POST' ? createBody : undefined }), { ...opts, expectStatus: status })
  console.log(`${label.padEnd(28)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}`)
  return r
}

console.log(`api.bench: ${connections} connections, ${seconds} s per measurement, PostgreSQL, pool ${env.SVC_DB_POOL_MAX}`)
const bareGet = await run('bare Bun.serve GET', bareUrl, 'GET', `/v1/scenarios/${id}`, 200)
const get = await run('GET /v1/scenarios/{id}', svc.url, 'GET', `/v1/scenarios/${id}`, 200)
const barePost = await run('bare Bun.serve POST', bareUrl, 'POST', '/v1/scenarios', 201)
const post = await run('POST /v1/scenarios', svc.url, 'POST', '/v1/scenarios', 201)
console.log(`ratio GET  rps ${(get.rps / bareGet.rps).toFixed(2)} (target >= 0.35), p99 ${(get.p99 / bareGet.p99).toFixed(2)}x the bare server's`)
console.log(`ratio POST rps ${(post.rps / barePost.rps).toFixed(2)}, p99 ${(post.p99 / barePost.p99).toFixed(2)}x the bare server's`)

bare.kill()
await svc.stop()
await database.drop()
rmSync(dataDir, { recursive: true, force: true })
