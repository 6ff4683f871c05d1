/**
 * A many-process deployment that loses nothing (PostgreSQL only): two API processes and two workers
 * through PgBouncer in transaction mode (SVC_DB_PREPARE=false; LISTEN through DATABASE_LISTEN_URL,
 * straight to the server), S3-compatible storage (s3rver), one shared SVC_SECRET_KEY. A mixed load
 * (uploads + completes, evaluations, webhook deliveries to a local HTTPS receiver that fails some
 * first attempts, SSE readers, reads) runs while one API process and one worker are killed with
 * SIGKILL and restarted. Afterwards every accepted document and evaluation is terminal, every
 * delivery delivered (repeats carry the same delivery id and bytes), every SSE reader resumed with
 * Last-Event-ID and missed nothing, no job is past its lease; then a worker drains on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
// @ts-expect-error s3rver ships no type declarations (a test-only peer)
import S3rver from 's3rver'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { startPgBouncer, pgbouncerBinary, type PgBouncer } from '../helpers/pgbouncer'
import { startReceiver, testPki, type Receiver } from '../helpers/https-receiver'
import { spawnService, type ServiceProcess } from '../helpers/service-process'
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process'
import { rememberCredential } from '../helpers/log-hygiene'
import { postgresClient, type Sql } from '../../server/db/connect'
import { migrate } from '../../server/db/migrate'
import { createTenant } from '../../server/workspaces/tenants-store'
import { createApiKey } from '../../server/workspaces/api-keys-store'
import { PACK_QUESTIONS } from '../helpers/underwriting-pack'
import { MAINTENANCE_JOB_KIND } from '../../server/notifications/maintenance'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(180_000)

const enabled = Boolean(process.env.DATABASE_URL) && pgbouncerBinary() !== undefined
if (!enabled) console.warn('deployment test skipped: it needs DATABASE_URL (PostgreSQL) and pgbouncer; CI has both')

let database: TestDatabase
let bouncer: PgBouncer
let s3: { run(): Promise<unknown>; close(): Promise<void> }
let s3Dir: string
let receiver: Receiver
let sql: Sql
let env: Record<string, string>
let key: string
const apis: (ServiceProcess | undefined)[] = []
const workers: (WorkerProcess | undefined)[] = []
const dataDirs: string[] = []

const dataDir = () => { const d = mkdtempSync(join(tmpdir(), 'svc-deploy-')); dataDirs.push(d); return d }
const startApi = () => spawnService(['bun', 'server/main.ts'], { ...env, SVC_DATA_DIR: dataDir() })
const startWorker = () => spawnWorker({ ...env, SVC_DATA_DIR: dataDir() })

beforeAll(async () => {
  if (!enabled) return
  database = await createTestDatabase()
  const direct = database.url!
  sql = postgresClient(direct, { max: 3, onnotice: () => {} })
  await migrate(sql)
  const tenant = await createTenant(sql, { slug: `deploy-${crypto.randomUUID().slice(0, 8)}` })
  key = (await createApiKey(sql, tenant.tenant.id, { name: 'deploy', scopes: ['scenarios:write', 'scenarios:read', 'notifications:write', 'question_sets:write', 'question_sets:read'], environment: 'live', expiresAt: null })).key
  rememberCredential(key)
  bouncer = await startPgBouncer(direct, { poolMode: 'transaction', poolSize: 12 })
  s3Dir = mkdtempSync(join(tmpdir(), 'svc-deploy-s3-'))
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'documents', configs: [] }] } as never)
  const addr = await s3.run() as unknown as { port: number }
  receiver = await startReceiver()
  // Every third delivery's first request fails: the retry must carry the same delivery id and bytes.
  receiver.respond((r) => (r.nth === 1 && parseInt((r.deliveryId ?? '0').slice(-2), 16) % 3 === 0 ? { status: 503 } : { status: 204 }))
  env = {
    DATABASE_URL: bouncer.url(direct),
    DATABASE_LISTEN_URL: direct,
    SVC_DB_PREPARE: 'false',
    SVC_DB_POOL_MAX: '4',
    SVC_SECRET_KEY: randomBytes(32).toString('base64'),
    SVC_S3_ENDPOINT: `http://127.0.0.1:${addr.port}`, SVC_S3_BUCKET: 'documents', SVC_S3_REGION: 'us-east-1', SVC_S3_ACCESS_KEY_ID: 'S3RVER', SVC_S3_SECRET_ACCESS_KEY: 'S3RVER',
    SVC_WEBHOOK_CA_FILE: testPki().caFile,
    SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: receiver.host,
    SVC_WEBHOOK_RETRY_INITIAL_MS: '200',
    SVC_JOB_LEASE_MS: '3000',
    SVC_JOB_POLL_MS: '100',
    SVC_PARSE_WORKERS: '1',
    SVC_ACCESS_LOG: '0',
    SVC_RATE_UNIT: '100000/1', SVC_RATE_RUN: '100000/1', // the pooling run evaluates as fast as it can
  }
  const started = await Promise.all([startApi(), startApi(), startWorker(), startWorker()])
  apis.push(started[0] as ServiceProcess, started[1] as ServiceProcess)
  workers.push(started[2] as WorkerProcess, started[3] as WorkerProcess)
}, 120_000)

afterAll(async () => {
  if (!enabled) return
  for (const p of [...apis, ...workers]) p?.proc.kill('SIGKILL')
  await Promise.all([...apis, ...workers].map((p) => p?.proc.exited))
  await sql?.end({ timeout: 5 })
  await bouncer?.stop()
  await receiver?.stop()
  await s3?.close()
  await database?.drop()
  for (const d of [...dataDirs, s3Dir]) rmSync(d, { recursive: true, force: true })
}, 60_000)

let rr = 0
/** Calls a live API process; a refused or reset connection or a 503 is tried again on another (bounded). */
async function api(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  for (let attempt = 0; ; attempt++) {
    const live = apis.filter((a): a is ServiceProcess => a !== undefined && a.proc.exitCode === null && a.proc.signalCode === null)
    const base = live[rr++ % Math.max(1, live.length)]?.url
    try {
      if (!base) throw new Error('no API process is up')
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      })
      const text = await res.text()
      if (res.status === 503 && attempt < 100) { await Bun.sleep(100); continue }
      return { status: res.status, body: text ? JSON.parse(text) : undefined }
    } catch (e) {
      if (attempt >= 100) throw e
      await Bun.sleep(100)
    }
  }
}

/** An SSE reader of one case that resumes with Last-Event-ID on whatever API process is up. */
function sseReader(scenarioId: string) {
  const state = { seqs: [] as number[], resumedWith: [] as string[], done: false, abort: () => {} }
  let last: string | undefined
  const running = (async () => {
    while (!state.done) {
      const live = apis.filter((a): a is ServiceProcess => a !== undefined && a.proc.exitCode === null && a.proc.signalCode === null)
      const base = live[rr++ % Math.max(1, live.length)]?.url
      const ac = new AbortController()
      state.abort = () => ac.abort()
      try {
        if (!base) throw new Error('no API process is up')
        const res = await fetch(`${base}/v1/scenarios/${scenarioId}/events`, {
          headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) }, signal: ac.signal,
        })
        if (res.status !== 200) { await res.body?.cancel(); throw new Error(`events ${res.status}`) }
        if (last) state.resumedWith.push(last)
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
        let buf = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buf += value
          for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
            const record = buf.slice(0, i)
            buf = buf.slice(i + 2)
            const m = /^id: (\d+)$/m.exec(record)
            if (m) { state.seqs.push(Number(m[1])); last = m[1] }
          }
        }
      } catch { /* the process went away: resume elsewhere */ }
      if (!state.done) await Bun.sleep(50)
    }
  })()
  return { state, stop: async () => { state.done = true; state.abort(); await running } }
}

const TERMINAL_DOCS = ['ready', 'ready_degraded', 'failed', 'unsupported_pending']
const TERMINAL_EVALS = ['succeeded', 'failed', 'canceled']

/** Uploads one text document into a case (start, PUT to S3, complete with an inline webhook). */
async function uploadOne(scenarioId: string, n: number): Promise<string> {
  const bytes = new TextEncoder().encode(`Document ${n} of the deployment test.\n\nRevenue: ${1000 + n}.00\n`)
  const start = await api('POST', `/v1/scenarios/${scenarioId}/documents`, {
    body: { filename: `doc-${n}.txt`, content_type: 'text/plain', size_bytes: bytes.byteLength }, headers: { 'idempotency-key': `start-${scenarioId}-${n}` },
  })
  expect(start.status).toBe(201)
  const put = await fetch(start.body.upload.url, { method: 'PUT', headers: start.body.upload.headers, body: bytes })
  expect(put.status).toBe(200)
  const complete = await api('POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`, {
    body: { notifications: [{ channel: 'webhook', webhook: { url: receiver.url(`/hooks/doc-${n}`) } }] }, headers: { 'idempotency-key': `complete-${start.body.id}` },
  })
  expect(complete.status).toBe(202)
  return start.body.id
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(200)
  }
}

describe.if(enabled)(skipTitle('a deployment through PgBouncer in transaction mode', NEEDS_POSTGRES, pgbouncerBinary() === undefined && 'pgbouncer is not installed'), () => {
  test('SIGKILL of an API process and a worker under mixed load loses nothing', async () => {
    const started = Date.now()
    expect((await api('POST', '/v1/webhook-signing-secret/rotate')).status).toBe(200)
    const set = await api('POST', '/v1/question-sets', { body: { name: 'Deployment' }, headers: { 'idempotency-key': 'qs' } })
    expect(set.status).toBe(201)
    const version = await api('POST', `/v1/question-sets/${set.body.id}/versions`, { body: { questions: PACK_QUESTIONS } })
    expect(version.status).toBe(201)
    expect((await api('POST', `/v1/question-sets/${set.body.id}/versions/${version.body.id}/publish`)).status).toBe(202)
    await waitFor('the question set to publish', async () => (await api('GET', `/v1/question-sets/${set.body.id}/versions/${version.body.id}`)).body.status === 'published')

    const cases: string[] = []
    for (let i = 0; i < 4; i++) {
      const c = await api('POST', '/v1/scenarios', { body: { name: `Deployment case ${i}` }, headers: { 'idempotency-key': `case-${i}` } })
      expect(c.status).toBe(201)
      cases.push(c.body.id)
    }
    const readers = cases.map((c) => sseReader(c))

    // The load: documents and evaluations in four lanes, reads beside them.
    const documents: string[] = []
    const evaluations: string[] = []
    let loading = true
    const reads = (async () => {
      let n = 0
      while (loading) {
        const r = await api('GET', `/v1/scenarios/${cases[n++ % cases.length]}`)
        expect(r.status).toBe(200)
        await Bun.sleep(20)
      }
    })()
    const lanes = cases.map(async (scenarioId, lane) => {
      for (let k = 0; k < 8; k++) {
        documents.push(await uploadOne(scenarioId, lane * 100 + k))
        if (k % 4 === 3) {
          const e = await api('POST', `/v1/scenarios/${scenarioId}/evaluate`, {
            body: { question_set_id: set.body.id, notifications: [{ channel: 'webhook', webhook: { url: receiver.url(`/hooks/eval-${lane}-${k}`) } }] },
            headers: { 'idempotency-key': `evaluate-${scenarioId}-${k}` },
          })
          expect(e.status).toBe(202)
          evaluations.push(e.body.id)
        }
        await Bun.sleep(200)
      }
    })
    // Mid-load: SIGKILL one API process and one worker (while it holds leased jobs), restart both a moment later.
    let orphaned: string[] = []
    const chaos = (async () => {
      await Bun.sleep(1500)
      const [api0, worker0] = [apis[0]!, workers[0]!]
      // Every reader holds an event before the kill, so the ones the killed process served resume
      // with Last-Event-ID (bounded: the lanes keep writing events).
      for (let i = 0; i < 250 && readers.some((r) => r.state.seqs.length === 0); i++) await Bun.sleep(20)
      // Up to 10 s for the worker to hold a job (the lanes keep enqueuing; jobs spread over four runners).
      // The worker is frozen (SIGSTOP) while its leases are read, so a job it holds cannot finish
      // between the read and the kill: every job read here is one the kill orphans.
      for (let i = 0; i < 500 && orphaned.length === 0; i++) {
        worker0.proc.kill('SIGSTOP')
        orphaned = (await sql<{ id: string }[]>`select id from jobs where locked_by = ${worker0.workerId}`).map((r) => r.id)
        if (orphaned.length === 0) { worker0.proc.kill('SIGCONT'); await Bun.sleep(20) }
      }
      api0.proc.kill('SIGKILL')
      worker0.proc.kill('SIGKILL')
      await Promise.all([api0.proc.exited, worker0.proc.exited])
      apis[0] = undefined
      workers[0] = undefined
      await Bun.sleep(1500)
      const [a, w] = await Promise.all([startApi(), startWorker()])
      apis[0] = a
      workers[0] = w
    })()
    await Promise.all([...lanes, chaos])
    loading = false
    await reads
    expect(documents).toHaveLength(32)
    expect(evaluations).toHaveLength(8)

    // Everything accepted ends.
    await waitFor('documents to end', async () => {
      const rows = await sql<{ status: string }[]>`select status from documents where id = any(${documents}::uuid[])`
      return rows.length === documents.length && rows.every((r) => TERMINAL_DOCS.includes(r.status))
    })
    const docRows = await sql<{ status: string }[]>`select status from documents where id = any(${documents}::uuid[])`
    expect(docRows.map((r) => r.status)).toEqual(documents.map(() => 'ready'))
    await waitFor('evaluations to end', async () => {
      const rows = await sql<{ status: string }[]>`select status from evaluations where id = any(${evaluations}::uuid[])`
      return rows.length === evaluations.length && rows.every((r) => TERMINAL_EVALS.includes(r.status))
    })
    const evalRows = await sql<{ status: string }[]>`select status from evaluations where id = any(${evaluations}::uuid[])`
    expect(evalRows.map((r) => r.status)).toEqual(evaluations.map(() => 'succeeded'))

    // Every delivery delivered; repeats carry the same delivery id and the same bytes.
    await waitFor('deliveries to be delivered', async () => {
      const [row] = await sql<{ pending: number; total: number }[]>`select count(*) filter (where status <> 'delivered')::int as pending, count(*)::int as total from notification_deliveries`
      return row!.total === documents.length + evaluations.length && row!.pending === 0
    })
    const deliveries = await sql<{ id: string; body: string; request_id: string | null }[]>`select id, body, request_id from notification_deliveries`
    let repeats = 0
    for (const d of deliveries) {
      const got = receiver.byDelivery(d.id)
      expect(got.length, d.id).toBeGreaterThanOrEqual(1)
      if (got.length > 1) repeats++
      for (const r of got) {
        expect(r.headers['svc-delivery-id']).toBe(d.id)
        expect(r.raw.toString('utf8')).toBe(d.body)
        expect(JSON.parse(r.raw.toString("utf8")).delivery_id).toBe(d.id)
      }
      expect(d.request_id).toBeString() // the request that started the work
    }
    expect(repeats, 'deliveries repeated after a 503').toBeGreaterThan(0)

    // SSE readers: each resumed (at least the ones the killed process served), none missed an event.
    await Bun.sleep(500)
    for (const [i, reader] of readers.entries()) {
      const stored = await sql<{ seq: string }[]>`select seq from case_events where scenario_id = ${cases[i]!} order by seq`
      await waitFor('the readers to catch up', async () => reader.state.seqs.length >= stored.length, 15_000)
      await reader.stop()
      expect(reader.state.seqs).toEqual(stored.map((r) => Number(r.seq)))
    }
    expect(readers.flatMap((r) => r.state.resumedWith).length, 'SSE readers that resumed with Last-Event-ID').toBeGreaterThan(0)

    // No job is stuck past its lease; none died; only the recurring maintenance job is left.
    await waitFor('the queue to empty', async () => {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from jobs where kind <> ${MAINTENANCE_JOB_KIND}`
      return row!.n === 0
    }, 20_000)
    const [stuck] = await sql<{ n: number }[]>`select count(*)::int as n from jobs where locked_until < now() or dead_at is not null`
    expect(stuck!.n, 'jobs past their lease or dead').toBe(0)
    // The killed worker held leased jobs: other processes claimed them once the lease lapsed, and ran them.
    expect(orphaned.length, 'jobs the killed worker held').toBeGreaterThan(0)
    const [left] = await sql<{ n: number }[]>`select count(*)::int as n from jobs where id = any(${orphaned}::uuid[])`
    expect(left!.n, 'orphaned jobs still in the table').toBe(0)
    const outputs = [...apis, ...workers].map((p) => p?.output() ?? '').join('\n')
    const lapsed = outputs.split('\n').filter((l) => l.includes('"message":"job lease lapsed; claimed again"')).length
    expect(lapsed, 'lapsed leases claimed again (logged): at least every orphaned job').toBeGreaterThanOrEqual(orphaned.length)
    console.log(JSON.stringify({ deployment_test_ms: Date.now() - started, documents: documents.length, evaluations: evaluations.length, deliveries: deliveries.length, repeated_deliveries: repeats, orphaned_jobs: orphaned.length, leases_lapsed: lapsed, sse_resumes: readers.flatMap((r) => r.state.resumedWith).length }))
  })

  test('SIGTERM drains a worker: its jobs finish or are handed back, and all of them end', async () => {
    const c = await api('POST', '/v1/scenarios', { body: { name: 'Drain case' }, headers: { 'idempotency-key': 'drain-case' } })
    const worker = workers[1]!
    const docs: string[] = []
    // Upload until the worker holds a leased job, then ask it to stop.
    let holding = 0
    for (let i = 0; i < 40 && holding === 0; i++) {
      docs.push(...await Promise.all(Array.from({ length: 2 }, (_, k) => uploadOne(c.body.id, 900 + 2 * i + k))))
      for (let j = 0; j < 10 && holding === 0; j++) {
        holding = (await sql<{ n: number }[]>`select count(*)::int as n from jobs where locked_by = ${worker.workerId}`)[0]!.n
        if (holding === 0) await Bun.sleep(10)
      }
    }
    expect(holding).toBeGreaterThan(0)
    const code = await worker.kill('SIGTERM')
    expect(code).toBe(0)
    expect(worker.output()).toContain('"message":"job runner drained"')
    workers[1] = undefined
    const [held] = await sql<{ n: number }[]>`select count(*)::int as n from jobs where locked_by = ${worker.workerId}`
    expect(held!.n).toBe(0)
    await waitFor('the drained worker\'s documents to end', async () => {
      const rows = await sql<{ status: string }[]>`select status from documents where id = any(${docs}::uuid[])`
      return rows.every((r) => r.status === 'ready')
    }, 30_000)
  })
})

/**
 * The pooler run of issue 31: the interleaved statements that locked a transaction-mode pool up for
 * good (`/readyz` silent after 14 s, a case GET never answered, SIGTERM ignored; PgBouncer logged
 * `got packet ... from server when not linked`). Four clients loop create case -> start upload ->
 * PUT -> complete -> evaluate, two list cases, a probe polls /readyz, for POOL_LOAD_MS (25 s here, to keep CI's suite under
 * its 10 minutes; the reproduction locked up within 14 s), every request with a deadline.
 * Every answer must be 2xx (nothing is faulted here: a 503 would be a lost answer turned into a
 * timeout); then /readyz and a case GET answer on every API process, and one drains on SIGTERM.
 */
const POOL_LOAD_MS = 25_000
const REQUEST_DEADLINE_MS = 15_000

describe.if(enabled)(skipTitle('transaction-mode pooling under interleaved load', NEEDS_POSTGRES, pgbouncerBinary() === undefined && 'pgbouncer is not installed'), () => {
  test(`four create->upload->complete->evaluate clients and two listing clients for ${POOL_LOAD_MS / 1000} s: no lock-up, then /readyz, a case GET and a clean SIGTERM`, async () => {
    // One API process of its own with two connections (its job runner shares them): requests and
    // jobs contend for connections, so statements queue and (before the fix) were pipelined.
    const svc = await spawnService(['bun', 'server/main.ts'], { ...env, SVC_DATA_DIR: dataDir(), SVC_DB_POOL_MAX: '2' })
    apis.push(svc)
    const answers: { what: string; status: number; ms: number }[] = []
    /** One request with a deadline; a timeout is recorded as status 0. */
    const call = async (what: string, method: string, path: string, body?: unknown) => {
      const base = svc.url
      const t0 = performance.now()
      try {
        const res = await fetch(base + path, {
          method, signal: AbortSignal.timeout(REQUEST_DEADLINE_MS),
          headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
          body: body !== undefined ? JSON.stringify(body) : undefined,
        })
        const text = await res.text()
        answers.push({ what, status: res.status, ms: performance.now() - t0 })
        return { status: res.status, body: text ? JSON.parse(text) : undefined }
      } catch (e) {
        answers.push({ what: `${what}: ${String(e)}`, status: 0, ms: performance.now() - t0 })
        return { status: 0, body: undefined as any }
      }
    }
    const set = await call('question set', 'POST', '/v1/question-sets', { name: 'Pooling' })
    expect(set.status).toBe(201)
    const version = await call('version', 'POST', `/v1/question-sets/${set.body.id}/versions`, { questions: PACK_QUESTIONS })
    expect((await call('publish', 'POST', `/v1/question-sets/${set.body.id}/versions/${version.body.id}/publish`)).status).toBe(202)
    await waitFor('the question set to publish', async () => (await call('version', 'GET', `/v1/question-sets/${set.body.id}/versions/${version.body.id}`)).body?.status === 'published')

    const until = Date.now() + POOL_LOAD_MS
    const evaluations: string[] = []
    const documents: string[] = []
    const cases: string[] = []
    const loop = async (n: number) => {
      for (let i = 0; Date.now() < until; i++) {
        const c = await call('create case', 'POST', '/v1/scenarios', { name: `Pooling ${n}-${i}` })
        if (c.status !== 201) continue
        cases.push(c.body.id)
        const bytes = new TextEncoder().encode(`Pooling ${n}-${i}.\n\nRevenue: ${1000 + i}.00\n`)
        const start = await call('start upload', 'POST', `/v1/scenarios/${c.body.id}/documents`, { filename: `p-${n}-${i}.txt`, content_type: 'text/plain', size_bytes: bytes.byteLength })
        if (start.status !== 201) continue
        const put = await fetch(start.body.upload.url, { method: 'PUT', headers: start.body.upload.headers, body: bytes, signal: AbortSignal.timeout(REQUEST_DEADLINE_MS) })
        expect(put.status).toBe(200)
        const done = await call('complete', 'POST', `/v1/scenarios/${c.body.id}/documents/${start.body.id}/complete`, {})
        if (done.status === 202) documents.push(start.body.id)
        const e = await call('evaluate', 'POST', `/v1/scenarios/${c.body.id}/evaluate`, { question_set_id: set.body.id })
        if (e.status === 202) evaluations.push(e.body.id)
      }
    }
    const lister = async () => {
      while (Date.now() < until) await call('list cases', 'GET', '/v1/scenarios?limit=20')
    }
    // A readiness probe as an orchestrator runs it: its statement has no parameters, the kind the
    // client pipelined, and the next statement (parse, describe, flush) went behind it.
    const probe = async () => {
      while (Date.now() < until) { await call('readyz', 'GET', '/readyz'); await Bun.sleep(100) }
    }
    await Promise.all([loop(1), loop(2), loop(3), loop(4), lister(), lister(), probe()])

    // No lock-up: every answer came, 2xx, within the deadline.
    expect(answers.filter((a) => a.status < 200 || a.status >= 300).slice(0, 5)).toEqual([])
    expect(evaluations.length).toBeGreaterThan(0) // every step of the loop was answered at least once
    // The process is ready, and reads a case.
    const ready = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(5_000) })
    expect(ready.status).toBe(200)
    expect((await call('read case', 'GET', `/v1/scenarios/${cases[cases.length - 1]}`)).status).toBe(200)
    // PgBouncer saw no answer it could not hand to a client.
    expect(bouncer.output()).not.toContain('when not linked')
    expect(bouncer.output()).not.toContain('got dirty')
    // Everything accepted ends.
    await waitFor('documents and evaluations to end', async () => {
      const docs = await sql<{ status: string }[]>`select status from documents where id = any(${documents}::uuid[])`
      const evals = await sql<{ status: string }[]>`select status from evaluations where id = any(${evaluations}::uuid[])`
      return docs.every((r) => TERMINAL_DOCS.includes(r.status)) && evals.every((r) => TERMINAL_EVALS.includes(r.status))
    }, 90_000)
    // SIGTERM drains an API process within its bound.
    const t0 = Date.now()
    expect(await Promise.race([svc.stop('SIGTERM'), Bun.sleep(40_000).then(() => 'still running 40 s after SIGTERM')])).toBe(0)
    const drainMs = Date.now() - t0 // reported, not bounded: the race above is the hang detector
    console.log(JSON.stringify({ pooling: { answers: answers.length, cases: cases.length, documents: documents.length, evaluations: evaluations.length, slowest_ms: Math.round(Math.max(...answers.map((a) => a.ms))), drain_ms: drainMs } }))
  })
})

test('the deployment test is enabled where CI runs it', () => {
  if (process.env.CI) expect(enabled).toBe(true)
  else expect(typeof enabled).toBe('boolean')
})
