/**
 * API throughput: GET /v1/scenarios/{id} and POST /v1/scenarios (a fresh Idempotency-Key each) with
 * an API key at 50 concurrent connections, each as a ratio to the database-bound limit of issue 30:
 * a bare Bun.serve running the same SQL through the same client settings and pool size
 * (bare-db-server.ts), measured in the same run with the same load generator. Needs DATABASE_URL
 * (PostgreSQL). BENCH_JSON_BASELINE=1 also measures the older baseline, a bare Bun.serve answering
 * a JSON object of the same size without touching the database. BENCH_BASE_TREE=<dir> (another
 * checkout of the service, e.g. `git archive` of the merge base with node_modules linked) adds that
 * tree's service, observability off, to every round: a before/after in one run.
 * Two service processes are measured in each round: observability off (SVC_ACCESS_LOG=0, no
 * metrics) and on (an access line per request, metrics recorded and scraped every 5 s); their
 * stdout goes to a file, as a log shipper would read it.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/api.bench.ts
 *   BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ROUNDS (defaults 5, 50 and 3)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '../helpers/database'
import { runCli } from '../helpers/service-process'
import { load, median, type LoadResult } from './load'
import { readFileSync } from 'node:fs'

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
const tenantId = (await runCli(['tenant', 'create', '--slug', 'bench'], env)).json.id as string
const key = (await runCli(['api-key', 'create', '--tenant', 'bench', '--name', 'bench', '--scopes', 'scenarios:read,scenarios:write'], env)).json.key as string
/** A service process whose stdout goes to a file; resolves with its URL once it listens. */
async function spawnToFile(extra: Record<string, string>, cwd?: string) {
  const logFile = join(dataDir, `service-${Object.keys(extra).length}-${Date.now()}.log`)
  const childEnv: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, PORT: '0', HOST: '127.0.0.1', ...env, ...extra })) if (v !== undefined) childEnv[k] = v
  const proc = Bun.spawn(['bun', 'server/main.ts'], { env: childEnv, stdout: Bun.file(logFile), stderr: 'inherit', stdin: 'ignore', ...(cwd ? { cwd } : {}) })
  for (let i = 0; i < 600; i++) {
    let text = ''
    try { text = readFileSync(logFile, 'utf8') } catch { /* not yet */ }
    const m = /"message":"listening","url":"http:\/\/[^:]+:(\d+)"/.exec(text)
    const metrics = /"message":"metrics listening","url":"([^"]+)"/.exec(text)
    if (m && (!extra.SVC_METRICS_PORT || metrics)) return { url: `http://127.0.0.1:${m[1]}`, metricsUrl: metrics?.[1], logFile, pid: proc.pid, stop: async () => { proc.kill('SIGTERM'); await proc.exited } }
    await Bun.sleep(100)
  }
  throw new Error('the service did not start')
}
const svc = await spawnToFile({ SVC_ACCESS_LOG: '0' })
const observed = await spawnToFile({ SVC_ACCESS_LOG: '1', SVC_METRICS_PORT: '0' })
const baseTree = process.env.BENCH_BASE_TREE ? await spawnToFile({ SVC_ACCESS_LOG: '0' }, process.env.BENCH_BASE_TREE) : null
/** The base tree's service over the bare server, by method. */
const baseRatios: Record<string, number[]> = {}
// Scraped like Prometheus would (every 5 s; a scrape also reads the queue depth from the database).
const scraper = setInterval(() => { void fetch(observed.metricsUrl!).then((r) => r.text()).catch(() => {}) }, 5000)

const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const createBody = JSON.stringify({ name: 'Bench case', external_ref: 'bench-ref-0001' })
const created = await (await fetch(`${svc.url}/v1/scenarios`, { method: 'POST', headers: auth, body: createBody })).text()
const id = JSON.parse(created).id as string

/** A baseline server in its own process; resolves with its URL and pid once it printed its port. */
async function spawnBare(script: string, extra: Record<string, string>) {
  const proc = Bun.spawn(['bun', script], { env: { ...process.env, ...env, ...extra }, stdout: 'pipe', stderr: 'inherit' })
  const firstLine = await proc.stdout.getReader().read()
  return { url: `http://127.0.0.1:${new TextDecoder().decode(firstLine.value).trim()}`, pid: proc.pid, kill: () => proc.kill() }
}
// The baseline: the same SQL in a bare Bun.serve (the database-bound limit), and optionally the
// JSON-only server the bench used before (it never touches the database).
const bareDb = await spawnBare('tests/bench/bare-db-server.ts', { BARE_TENANT_ID: tenantId })
const bareJson = process.env.BENCH_JSON_BASELINE === '1' ? await spawnBare('tests/bench/bare-server.ts', { BARE_BODY: created }) : null

const opts = { connections, seconds }
const measure = async (base: string, method: 'GET' | 'POST', path: string, status: number, secs = seconds) =>
  load(() => new Request(base + path, method === 'POST'
    ? { method, headers: { ...auth, 'idempotency-key': crypto.randomUUID() }, body: createBody }
    : { method, headers: auth }), { ...opts, seconds: secs, expectStatus: status })
/** CPU seconds (user + system) a process has used so far, from /proc (Linux; NaN elsewhere). */
const cpuSeconds = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
  } catch { return Number.NaN }
}
/** Service CPU per request (us) of each measurement of a service process, by method and observability. */
const cpuPerRequest: Record<string, number[]> = {}
const measureCpu = async (proc: { url: string; pid: number }, key: string, method: 'GET' | 'POST', path: string, status: number) => {
  const before = cpuSeconds(proc.pid)
  const r = await measure(proc.url, method, path, status)
  ;(cpuPerRequest[key] ??= []).push(((cpuSeconds(proc.pid) - before) * 1e6) / Math.max(1, r.requests))
  return r
}
const show = (label: string, r: LoadResult) =>
  console.log(`  ${label.padEnd(26)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  errors ${r.errors}`)

console.log(`api.bench: ${connections} connections, ${seconds} s per measurement, ${rounds} rounds, PostgreSQL${env.DATABASE_URL!.includes('host=/') ? ' (Unix socket)' : ' (TCP)'}, pool ${env.SVC_DB_POOL_MAX ?? 'default'}`)
// Paired rounds, baseline and service back to back, so a slow spell of this shared machine lands
// on both sides of a ratio; the median ratio is the figure. All GET rounds run before any POST:
// thousands of inserted cases wake PostgreSQL's background writers, which would tax the reads.
const ratios = { get: [] as number[], getP99: [] as number[], post: [] as number[], postP99: [] as number[], getOn: [] as number[], getOnP99: [] as number[], postOn: [] as number[], postOnP99: [] as number[] }
/** Each service's rps over the JSON-only server's, by method (with BENCH_JSON_BASELINE=1). */
const jsonRatios: Record<string, number[]> = {}
const pairs = async (method: 'GET' | 'POST', path: string, status: number, rps: number[], p99: number[], rpsOn: number[], p99On: number[]) => {
  // Warm the servers first (JIT, prepared statements, connections); nothing warm is counted.
  for (const base of [bareDb.url, bareJson?.url, svc.url, observed.url, baseTree?.url]) if (base) await measure(base, method, path, status, 2)
  for (let round = 1; round <= rounds; round++) {
    const baseline = await measureCpu(bareDb, `${method} bare (same SQL)`, method, path, status)
    const json = bareJson ? await measure(bareJson.url, method, path, status) : null
    // Alternate which service goes first, so neither always follows the baseline.
    const [first, second] = round % 2 ? [svc, observed] : [observed, svc]
    const a = await measureCpu(first, `${method} ${first === svc ? 'off' : 'on'}`, method, path, status)
    const b = await measureCpu(second, `${method} ${second === svc ? 'off' : 'on'}`, method, path, status)
    const [off, on] = first === svc ? [a, b] : [b, a]
    if (baseTree) {
      const before = await measureCpu(baseTree, `${method} base tree off`, method, path, status)
      show(`base tree ${method} off (${round})`, before)
      ;(baseRatios[method] ??= []).push(before.rps / baseline.rps)
    }
    show(`bare, same SQL ${method} (${round})`, baseline)
    if (json) {
      show(`bare JSON only ${method} (${round})`, json)
      ;(jsonRatios[`${method} off`] ??= []).push(off.rps / json.rps)
      ;(jsonRatios[`${method} on`] ??= []).push(on.rps / json.rps)
    }
    show(`${method} ${method === 'GET' ? '/v1/scenarios/{id}' : '/v1/scenarios'} off (${round})`, off)
    show(`${method} ${method === 'GET' ? '/v1/scenarios/{id}' : '/v1/scenarios'} on (${round})`, on)
    rps.push(off.rps / baseline.rps)
    p99.push(off.p99 / baseline.p99)
    rpsOn.push(on.rps / baseline.rps)
    p99On.push(on.p99 / baseline.p99)
  }
}
await pairs('GET', `/v1/scenarios/${id}`, 200, ratios.get, ratios.getP99, ratios.getOn, ratios.getOnP99)
await pairs('POST', '/v1/scenarios', 201, ratios.post, ratios.postP99, ratios.postOn, ratios.postOnP99)
const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ')
console.log(`ratio GET  rps ${median(ratios.get).toFixed(2)} median of [${list(ratios.get)}] (target >= 0.95), p99 ${median(ratios.getP99).toFixed(2)}x the bare server's  (access log and metrics off)`)
console.log(`ratio GET  rps ${median(ratios.getOn).toFixed(2)} median of [${list(ratios.getOn)}], p99 ${median(ratios.getOnP99).toFixed(2)}x the bare server's  (access log and metrics on)`)
console.log(`ratio POST rps ${median(ratios.post).toFixed(2)} median of [${list(ratios.post)}] (target >= 0.85), p99 ${median(ratios.postP99).toFixed(2)}x the bare server's  (off)`)
console.log(`ratio POST rps ${median(ratios.postOn).toFixed(2)} median of [${list(ratios.postOn)}], p99 ${median(ratios.postOnP99).toFixed(2)}x the bare server's  (on)`)
for (const [k, xs] of Object.entries(baseRatios)) console.log(`ratio ${k} of the base tree (off): ${median(xs).toFixed(2)} median of [${list(xs)}]`)
for (const [k, xs] of Object.entries(jsonRatios)) console.log(`ratio to the JSON-only server ${k}: ${median(xs).toFixed(2)} median of [${list(xs)}]`)
for (const [k, xs] of Object.entries(cpuPerRequest)) console.log(`CPU per request ${k}: ${median(xs).toFixed(0)} us median of [${xs.map((x) => x.toFixed(0)).join(' ')}]`)
const accessLines = readFileSync(observed.logFile, 'utf8').split('\n').filter((l) => l.includes('"message":"request"')).length
console.log(`on/off: GET ${(median(ratios.getOn) / median(ratios.get)).toFixed(2)}, POST ${(median(ratios.postOn) / median(ratios.post)).toFixed(2)}; ${accessLines} access lines written`)

clearInterval(scraper)
bareDb.kill()
bareJson?.kill()
await svc.stop()
await observed.stop()
await baseTree?.stop()
await database.drop()
rmSync(dataDir, { recursive: true, force: true })
