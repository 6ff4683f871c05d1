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
import { deploymentEnabled as enabled, startDeploymentWorld, waitFor, TERMINAL_DOCS, TERMINAL_EVALS, type DeploymentWorld } from '../helpers/deployment-world'
import type { ServiceProcess } from '../helpers/service-process'
import type { WorkerProcess } from '../helpers/worker-process'
import { PACK_QUESTIONS } from '../helpers/underwriting-pack'
import { MAINTENANCE_JOB_KIND } from '../../server/notifications/maintenance'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
import { pgbouncerBinary } from '../helpers/pgbouncer'

setDefaultTimeout(180_000)

if (!enabled) console.warn('deployment test skipped: it needs DATABASE_URL (PostgreSQL) and pgbouncer; CI has both')

let world: DeploymentWorld

beforeAll(async () => {
  if (!enabled) return
  world = await startDeploymentWorld()
  const started = await Promise.all([world.startApi(), world.startApi(), world.startWorker(), world.startWorker()])
  world.apis.push(started[0] as ServiceProcess, started[1] as ServiceProcess)
  world.workers.push(started[2] as WorkerProcess, started[3] as WorkerProcess)
}, 120_000)

afterAll(async () => {
  await world?.stop()
}, 60_000)

let rr = 0
/** An SSE reader of one case that resumes with Last-Event-ID on whatever API process is up. */
function sseReader(scenarioId: string) {
  const state = { seqs: [] as number[], resumedWith: [] as string[], done: false, abort: () => {} }
  let last: string | undefined
  const running = (async () => {
    while (!state.done) {
      const live = world.liveApis()
      const base = live[rr++ % Math.max(1, live.length)]?.url
      const ac = new AbortController()
      state.abort = () => ac.abort()
      try {
        if (!base) throw new Error('no API process is up')
        const res = await fetch(`${base}/v1/scenarios/${scenarioId}/events`, {
          headers: { authorization: `Bearer ${world.key}`, accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) }, signal: ac.signal,
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

/** Uploads one text document into a case (start, PUT to S3, complete with an inline webhook). */
async function uploadOne(scenarioId: string, n: number): Promise<string> {
  const bytes = new TextEncoder().encode(`Document ${n} of the deployment test.\n\nRevenue: ${1000 + n}.00\n`)
  const start = await world.api('POST', `/v1/scenarios/${scenarioId}/documents`, {
    body: { filename: `doc-${n}.txt`, content_type: 'text/plain', size_bytes: bytes.byteLength }, headers: { 'idempotency-key': `start-${scenarioId}-${n}` },
  })
  expect(start.status).toBe(201)
  const put = await fetch(start.body.upload.url, { method: 'PUT', headers: start.body.upload.headers, body: bytes })
  expect(put.status).toBe(200)
  const complete = await world.api('POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`, {
    body: { notifications: [{ channel: 'webhook', webhook: { url: world.receiver.url(`/hooks/doc-${n}`) } }] }, headers: { 'idempotency-key': `complete-${start.body.id}` },
  })
  expect(complete.status).toBe(202)
  return start.body.id
}

describe.if(enabled)(skipTitle('a deployment through PgBouncer in transaction mode', NEEDS_POSTGRES, pgbouncerBinary() === undefined && 'pgbouncer is not installed'), () => {
  test('SIGKILL of an API process and a worker under mixed load loses nothing', async () => {
    const started = Date.now()
    expect((await world.api('POST', '/v1/webhook-signing-secret/rotate')).status).toBe(200)
    const set = await world.api('POST', '/v1/question-sets', { body: { name: 'Deployment' }, headers: { 'idempotency-key': 'qs' } })
    expect(set.status).toBe(201)
    const version = await world.api('POST', `/v1/question-sets/${set.body.id}/versions`, { body: { questions: PACK_QUESTIONS } })
    expect(version.status).toBe(201)
    expect((await world.api('POST', `/v1/question-sets/${set.body.id}/versions/${version.body.id}/publish`)).status).toBe(202)
    await waitFor('the question set to publish', async () => (await world.api('GET', `/v1/question-sets/${set.body.id}/versions/${version.body.id}`)).body.status === 'published')

    const cases: string[] = []
    for (let i = 0; i < 4; i++) {
      const c = await world.api('POST', '/v1/scenarios', { body: { name: `Deployment case ${i}` }, headers: { 'idempotency-key': `case-${i}` } })
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
        const r = await world.api('GET', `/v1/scenarios/${cases[n++ % cases.length]}`)
        expect(r.status).toBe(200)
        await Bun.sleep(20)
      }
    })()
    const lanes = cases.map(async (scenarioId, lane) => {
      for (let k = 0; k < 8; k++) {
        documents.push(await uploadOne(scenarioId, lane * 100 + k))
        if (k % 4 === 3) {
          const e = await world.api('POST', `/v1/scenarios/${scenarioId}/evaluate`, {
            body: { question_set_id: set.body.id, notifications: [{ channel: 'webhook', webhook: { url: world.receiver.url(`/hooks/eval-${lane}-${k}`) } }] },
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
      const [api0, worker0] = [world.apis[0]!, world.workers[0]!]
      // Every reader holds an event before the kill, so the ones the killed process served resume
      // with Last-Event-ID (bounded: the lanes keep writing events).
      for (let i = 0; i < 250 && readers.some((r) => r.state.seqs.length === 0); i++) await Bun.sleep(20)
      // Up to 10 s for the worker to hold a job (the lanes keep enqueuing; jobs spread over four runners).
      // The worker is frozen (SIGSTOP) while its leases are read, so a job it holds cannot finish
      // between the read and the kill: every job read here is one the kill orphans.
      for (let i = 0; i < 500 && orphaned.length === 0; i++) {
        worker0.proc.kill('SIGSTOP')
        orphaned = (await world.sql<{ id: string }[]>`select id from jobs where locked_by = ${worker0.workerId}`).map((r) => r.id)
        if (orphaned.length === 0) { worker0.proc.kill('SIGCONT'); await Bun.sleep(20) }
      }
      api0.proc.kill('SIGKILL')
      worker0.proc.kill('SIGKILL')
      await Promise.all([api0.proc.exited, worker0.proc.exited])
      world.apis[0] = undefined
      world.workers[0] = undefined
      await Bun.sleep(1500)
      const [a, w] = await Promise.all([world.startApi(), world.startWorker()])
      world.apis[0] = a
      world.workers[0] = w
    })()
    await Promise.all([...lanes, chaos])
    loading = false
    await reads
    expect(documents).toHaveLength(32)
    expect(evaluations).toHaveLength(8)

    // Everything accepted ends.
    await waitFor('documents to end', async () => {
      const rows = await world.sql<{ status: string }[]>`select status from documents where id = any(${documents}::uuid[])`
      return rows.length === documents.length && rows.every((r) => TERMINAL_DOCS.includes(r.status))
    })
    const docRows = await world.sql<{ status: string }[]>`select status from documents where id = any(${documents}::uuid[])`
    expect(docRows.map((r) => r.status)).toEqual(documents.map(() => 'ready'))
    await waitFor('evaluations to end', async () => {
      const rows = await world.sql<{ status: string }[]>`select status from evaluations where id = any(${evaluations}::uuid[])`
      return rows.length === evaluations.length && rows.every((r) => TERMINAL_EVALS.includes(r.status))
    })
    const evalRows = await world.sql<{ status: string }[]>`select status from evaluations where id = any(${evaluations}::uuid[])`
    expect(evalRows.map((r) => r.status)).toEqual(evaluations.map(() => 'succeeded'))

    // Every delivery delivered; repeats carry the same delivery id and the same bytes.
    await waitFor('deliveries to be delivered', async () => {
      const [row] = await world.sql<{ pending: number; total: number }[]>`select count(*) filter (where status <> 'delivered')::int as pending, count(*)::int as total from notification_deliveries`
      return row!.total === documents.length + evaluations.length && row!.pending === 0
    })
    const deliveries = await world.sql<{ id: string; body: string; request_id: string | null }[]>`select id, body, request_id from notification_deliveries`
    let repeats = 0
    for (const d of deliveries) {
      const got = world.receiver.byDelivery(d.id)
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
      const stored = await world.sql<{ seq: string }[]>`select seq from case_events where scenario_id = ${cases[i]!} order by seq`
      await waitFor('the readers to catch up', async () => reader.state.seqs.length >= stored.length, 15_000)
      await reader.stop()
      expect(reader.state.seqs).toEqual(stored.map((r) => Number(r.seq)))
    }
    expect(readers.flatMap((r) => r.state.resumedWith).length, 'SSE readers that resumed with Last-Event-ID').toBeGreaterThan(0)

    // No job is stuck past its lease; none died; only the recurring maintenance job is left.
    await waitFor('the queue to empty', async () => {
      const [row] = await world.sql<{ n: number }[]>`select count(*)::int as n from jobs where kind <> ${MAINTENANCE_JOB_KIND}`
      return row!.n === 0
    }, 20_000)
    const [stuck] = await world.sql<{ n: number }[]>`select count(*)::int as n from jobs where locked_until < now() or dead_at is not null`
    expect(stuck!.n, 'jobs past their lease or dead').toBe(0)
    // The killed worker held leased jobs: other processes claimed them once the lease lapsed, and ran them.
    expect(orphaned.length, 'jobs the killed worker held').toBeGreaterThan(0)
    const [left] = await world.sql<{ n: number }[]>`select count(*)::int as n from jobs where id = any(${orphaned}::uuid[])`
    expect(left!.n, 'orphaned jobs still in the table').toBe(0)
    const outputs = [...world.apis, ...world.workers].map((p) => p?.output() ?? '').join('\n')
    const lapsed = outputs.split('\n').filter((l) => l.includes('"message":"job lease lapsed; claimed again"')).length
    expect(lapsed, 'lapsed leases claimed again (logged): at least every orphaned job').toBeGreaterThanOrEqual(orphaned.length)
    console.log(JSON.stringify({ deployment_test_ms: Date.now() - started, documents: documents.length, evaluations: evaluations.length, deliveries: deliveries.length, repeated_deliveries: repeats, orphaned_jobs: orphaned.length, leases_lapsed: lapsed, sse_resumes: readers.flatMap((r) => r.state.resumedWith).length }))
  })

  test('SIGTERM drains a worker: its jobs finish or are handed back, and all of them end', async () => {
    const c = await world.api('POST', '/v1/scenarios', { body: { name: 'Drain case' }, headers: { 'idempotency-key': 'drain-case' } })
    const worker = world.workers[1]!
    const docs: string[] = []
    // Upload until the worker holds a leased job, then ask it to stop.
    let holding = 0
    for (let i = 0; i < 40 && holding === 0; i++) {
      docs.push(...await Promise.all(Array.from({ length: 2 }, (_, k) => uploadOne(c.body.id, 900 + 2 * i + k))))
      for (let j = 0; j < 10 && holding === 0; j++) {
        holding = (await world.sql<{ n: number }[]>`select count(*)::int as n from jobs where locked_by = ${worker.workerId}`)[0]!.n
        if (holding === 0) await Bun.sleep(10)
      }
    }
    expect(holding).toBeGreaterThan(0)
    const code = await worker.kill('SIGTERM')
    expect(code).toBe(0)
    expect(worker.output()).toContain('"message":"job runner drained"')
    world.workers[1] = undefined
    const [held] = await world.sql<{ n: number }[]>`select count(*)::int as n from jobs where locked_by = ${worker.workerId}`
    expect(held!.n).toBe(0)
    await waitFor('the drained worker\'s documents to end', async () => {
      const rows = await world.sql<{ status: string }[]>`select status from documents where id = any(${docs}::uuid[])`
      return rows.every((r) => r.status === 'ready')
    }, 30_000)
  })
})

test('the deployment test is enabled where CI runs it', () => {
  if (process.env.CI) expect(enabled).toBe(true)
  else expect(typeof enabled).toBe('boolean')
})
