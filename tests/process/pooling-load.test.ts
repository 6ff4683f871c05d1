/**
 * Transaction-mode pooling under interleaved load (PostgreSQL and pgbouncer): one API process of its
 * own behind PgBouncer in transaction mode (tests/helpers/deployment-world.ts), requests and its job
 * runner contending for two connections.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { deploymentEnabled as enabled, startDeploymentWorld, waitFor, TERMINAL_DOCS, TERMINAL_EVALS, type DeploymentWorld } from '../helpers/deployment-world'
import { PACK_QUESTIONS } from '../helpers/underwriting-pack'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
import { pgbouncerBinary } from '../helpers/pgbouncer'

setDefaultTimeout(180_000)

let world: DeploymentWorld

beforeAll(async () => {
  if (enabled) world = await startDeploymentWorld()
}, 120_000)

afterAll(async () => {
  await world?.stop()
}, 60_000)

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
    const svc = await world.startApi({ SVC_DB_POOL_MAX: '2' })
    world.apis.push(svc)
    const answers: { what: string; status: number; ms: number }[] = []
    /** One request with a deadline; a timeout is recorded as status 0. */
    const call = async (what: string, method: string, path: string, body?: unknown) => {
      const base = svc.url
      const t0 = performance.now()
      try {
        const res = await fetch(base + path, {
          method, signal: AbortSignal.timeout(REQUEST_DEADLINE_MS),
          headers: { authorization: `Bearer ${world.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
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
    expect(world.bouncer.output()).not.toContain('when not linked')
    expect(world.bouncer.output()).not.toContain('got dirty')
    // Everything accepted ends.
    await waitFor('documents and evaluations to end', async () => {
      const docs = await world.sql<{ status: string }[]>`select status from documents where id = any(${documents}::uuid[])`
      const evals = await world.sql<{ status: string }[]>`select status from evaluations where id = any(${evaluations}::uuid[])`
      return docs.every((r) => TERMINAL_DOCS.includes(r.status)) && evals.every((r) => TERMINAL_EVALS.includes(r.status))
    }, 90_000)
    // SIGTERM drains an API process within its bound.
    const t0 = Date.now()
    expect(await Promise.race([svc.stop('SIGTERM'), Bun.sleep(40_000).then(() => 'still running 40 s after SIGTERM')])).toBe(0)
    const drainMs = Date.now() - t0 // reported, not bounded: the race above is the hang detector
    console.log(JSON.stringify({ pooling: { answers: answers.length, cases: cases.length, documents: documents.length, evaluations: evaluations.length, slowest_ms: Math.round(Math.max(...answers.map((a) => a.ms))), drain_ms: drainMs } }))
  })
})

test('the pooling test is enabled where CI runs it', () => {
  if (process.env.CI) expect(enabled).toBe(true)
  else expect(typeof enabled).toBe('boolean')
})
