/**
 * A PostgreSQL restart under load: the test owns a cluster and stops it fast 20 times while HTTP
 * writes, document ingestion and email deliveries run against the service (a separate process).
 * The process never exits; every answer is 2xx, or 503 `unavailable` with Retry-After (never 500,
 * never a hang); /readyz says 503 while the database is away; afterwards every accepted case,
 * document and delivery is there.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, spawnService, type ServiceProcess } from '../helpers/service-process'
import { startOwnCluster, type OwnCluster } from '../helpers/own-cluster'
import { readOutbox } from '../helpers/outbox'
import { postgresClient } from '../../server/db/connect'

setDefaultTimeout(240_000)

const CYCLES = 20
// Each cycle: 0.5 s of load, a fast stop, 0.4 s down (every fifth cycle: a burst of 300 requests
// while down instead of the last 0.25 s), a restart.
const HANG_MS = 6_000
const BURST = 300

describe('PostgreSQL stopping and restarting under load', () => {
  let cluster: OwnCluster
  let svc: ServiceProcess
  let key: string
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-outage-'))

  beforeAll(async () => {
    cluster = await startOwnCluster()
    const env = { DATABASE_URL: cluster.url, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 9).toString('base64'), SVC_JOB_POLL_MS: '50', SVC_RATE_UNIT: '100000/1', SVC_RATE_RUN: '100000/1' }
    expect((await runCli(['migrate'], env)).code).toBe(0)
    expect((await runCli(['tenant', 'create', '--slug', 'outage'], env)).code).toBe(0)
    key = (await runCli(['api-key', 'create', '--tenant', 'outage', '--name', 'load', '--scopes', 'scenarios:read,scenarios:write,notifications:write'], env)).json.key
    svc = await spawnService(['bun', 'server/main.ts'], env)
  })
  afterAll(async () => {
    await svc?.stop('SIGKILL')
    await cluster?.destroy()
  })

  test('20 fast stops: the process lives, answers are 2xx or 503 with Retry-After, nothing accepted is lost', async () => {
    type Answer = { what: string; status: number; retryAfter: string | null; ms: number; type?: string }
    const answers: Answer[] = []
    const scenarios: string[] = []
    const documents: { scenario: string; id: string }[] = []
    const api = async (what: string, method: string, path: string, body?: unknown, raw?: BodyInit, headers: Record<string, string> = {}) => {
      const t0 = performance.now()
      try {
        const r = await fetch(`${svc.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
          body: raw ?? (body !== undefined ? JSON.stringify(body) : undefined),
          signal: AbortSignal.timeout(HANG_MS * 2),
        })
        const text = await r.text()
        let json: any
        try { json = JSON.parse(text) } catch { json = undefined }
        answers.push({ what, status: r.status, retryAfter: r.headers.get('retry-after'), ms: performance.now() - t0, type: json?.type })
        return { status: r.status, json }
      } catch (e) {
        answers.push({ what, status: 0, retryAfter: null, ms: performance.now() - t0, type: String(e) })
        return { status: 0, json: undefined }
      }
    }
    let running = true
    const worker = async (n: number) => {
      for (let i = 0; running; i++) {
        const sc = await api('create case', 'POST', '/v1/scenarios', { name: `case ${n}-${i}` })
        if (sc.status === 201) scenarios.push(sc.json.id)
        else { await Bun.sleep(50); continue }
        await api('list cases', 'GET', '/v1/scenarios?limit=5')
        if (i % 8 !== 0) continue
        const bytes = new TextEncoder().encode(`Letter ${n}-${i}.\n\nAnnual income is 85,000 EUR.\n`)
        const doc = await api('start upload', 'POST', `/v1/scenarios/${sc.json.id}/documents`, { filename: 'letter.txt', content_type: 'text/plain', size_bytes: bytes.length })
        if (doc.status !== 201) continue
        const u = new URL(doc.json.upload.url)
        const put = await api('PUT bytes', 'PUT', `${u.pathname}${u.search}`, undefined, bytes, doc.json.upload.headers)
        if (put.status !== 204) continue
        const done = await api('complete', 'POST', `/v1/scenarios/${sc.json.id}/documents/${doc.json.id}/complete`, { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
        if (done.status === 202) documents.push({ scenario: sc.json.id, id: doc.json.id })
      }
    }
    const load = [1, 2, 3, 4].map(worker)
    let readyWhileDown = 0
    const readyTimes: number[] = []
    const burstMs: number[] = []
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await Bun.sleep(500)
      await cluster.stopFast()
      await Bun.sleep(150)
      if (svc.proc.exitCode !== null) throw new Error(`the service exited (${svc.proc.exitCode}) at cycle ${cycle}:\n${svc.output().split('\n').filter((l) => !l.includes('"level":"info"')).slice(-30).join('\n')}`)
      const r0 = performance.now()
      const ready = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(HANG_MS * 3) }).catch(() => undefined)
      readyTimes.push(performance.now() - r0)
      if (ready?.status === 503 && ready.headers.get('retry-after')) readyWhileDown++
      if (cycle % 5 === 4) {
        // A burst while the database is away: every request answers 503 (unpatched, the pool failed
        // one waiting query per attempt and backoff: 300 requests on 5 connections took about 6 s).
        // Its time is reported below, not bounded (a bound fails under load); that the client fails
        // what waits with one attempt is counted in tests/unit/postgres-client-close.test.ts.
        const b0 = performance.now()
        const burst = await Promise.all(Array.from({ length: BURST }, () => api('burst while down', 'GET', '/v1/scenarios?limit=5')))
        burstMs.push(performance.now() - b0)
        expect(burst.filter((r) => r.status !== 503)).toEqual([])
      } else {
        await Bun.sleep(250)
      }
      expect(svc.proc.exitCode).toBeNull()
      await cluster.start()
    }
    await Bun.sleep(1500)
    running = false
    await Promise.all(load)
    const loadEnded = Date.now()

    // The process never exited.
    expect(svc.proc.exitCode).toBeNull()
    expect(svc.proc.signalCode).toBeNull()
    expect(readyWhileDown).toBe(CYCLES)
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200)

    // Every answer: 2xx, or 503 unavailable with Retry-After; none hung.
    const bad = answers.filter((a) => !((a.status >= 200 && a.status < 300) || (a.status === 503 && a.retryAfter !== null && a.type === 'urn:svc:error:unavailable')))
    expect(bad.slice(0, 5)).toEqual([])
    const slow = answers.filter((a) => a.ms > HANG_MS)
    expect(slow.slice(0, 5)).toEqual([])
    const unavailable = answers.filter((a) => a.status === 503).length
    expect(unavailable).toBeGreaterThan(0) // the outages were felt
    expect(scenarios.length).toBeGreaterThan(50)

    // Nothing accepted is lost: every case is there, every document is read (checked in the database).
    const db = postgresClient(cluster.url, { max: 1, onnotice: () => {} })
    try {
      const [row] = await db<{ n: number }[]>`select count(*)::int as n from scenarios where id = any(${scenarios}::uuid[])`
      expect(row!.n).toBe(scenarios.length)
      const until = Date.now() + 60_000
      for (;;) {
        const rows = await db<{ status: string; n: number }[]>`select status, count(*)::int as n from documents where id = any(${documents.map((d) => d.id)}::uuid[]) group by status`
        if (rows.length === 1 && rows[0]!.status === 'ready' && rows[0]!.n === documents.length) break
        if (Date.now() > until) throw new Error(`documents not all ready: ${JSON.stringify(rows)}`)
        await Bun.sleep(200)
      }
    } finally {
      await db.end()
    }
    const until = Date.now() + 60_000
    // Every accepted document's notification went out (at least once: a send whose bookkeeping
    // met the outage is sent again; a complete answered 503 may still have committed and notify too).
    const mailed = () => new Set(readOutbox(dataDir).flatMap((m) => [...m.raw.matchAll(/documents\/([0-9a-f-]{36})/g)].map((x) => x[1]!)))
    while (documents.some((d) => !mailed().has(d.id)) && Date.now() < until) await Bun.sleep(200)
    expect(documents.filter((d) => !mailed().has(d.id))).toEqual([])
    console.log(JSON.stringify({ answers: answers.length, unavailable, cases: scenarios.length, documents: documents.length, slowest_ms: Math.round(Math.max(...answers.map((a) => a.ms))), readyz_while_down_max_ms: Math.round(Math.max(...readyTimes)), burst_ms: burstMs.map(Math.round), settle_ms: Date.now() - loadEnded }))
  })
})
