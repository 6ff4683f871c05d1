import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startModelStub, type ModelStub, type StubRequest } from '../helpers/model-stub'
import { allBlocks, type SampleFile } from '../helpers/samples'
import { caseWith, EMAIL_ME, envelopesOf, evaluationEnded, evaluationReaches, publishedSet, publishVersion } from '../helpers/underwriting-pack'
import { chatJson, ModelOutageError, ModelResponseError } from '../../server/evaluation/model-client'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(60_000)

let app: TestApp
let stub: ModelStub
let key: string

beforeAll(async () => {
  stub = startModelStub()
  app = await startApp({ env: { SVC_MODEL_URL: stub.url, SVC_MODEL_NAME: 'stub-model', SVC_MODEL_API_KEY: 'sk-test-secret', SVC_MODEL_MAX_RETRIES: '2', SVC_MODEL_TIMEOUT_MS: '2000' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'notifications:write'])
})
afterAll(async () => { await app.stop(); stub.stop() })

const text = (filename: string, body: string): SampleFile => ({ filename, contentType: 'text/plain', bytes: new TextEncoder().encode(body) as SampleFile['bytes'] })
const FORM = text('form.txt', 'Applicant: Acme Holdings LLC\n\nAnnual revenue: 1,250,000.00\n\nThere is no outstanding litigation against the applicant.\n\nWeather notes: sunny with light winds.')

const Q = (key: string, extra: Record<string, unknown> = {}) => ({ key, text: 'What is the annual revenue of the applicant?', criticality: 'minor', answer_type: 'text', ...extra })

const passageWith = (req: StubRequest, needle: string) => req.passages.find((p) => p.text.includes(needle))

/** Replies per question key; the default answers with the first passage. */
function answerByKey(req: StubRequest) {
  const revenue = passageWith(req, 'Annual revenue')
  switch (req.questionKey) {
    case 'valid':
      return { json: { status: 'answered', value: '1,250,000.00', confidence: 0.9, citations: [{ block_id: revenue!.blockId, quote: 'Annual  revenue: 1,250,000.00' }] } }
    case 'ghost':
      return { json: { status: 'answered', value: 'about a million', confidence: 0.8, citations: [{ block_id: crypto.randomUUID(), quote: 'Annual revenue' }] } }
    case 'misquote':
      return { json: { status: 'answered', value: 'ten million', confidence: 0.8, citations: [{ block_id: revenue!.blockId, quote: 'Annual revenue: 10,000,000.00' }] } }
    case 'mixed':
      return { json: { status: 'answered', value: 'one and a quarter million', confidence: 0.8, citations: [
        { block_id: revenue!.blockId, quote: 'revenue: 1,250,000.00' },
        { block_id: revenue!.blockId, quote: 'profit: 9' },
      ] } }
    case 'unread':
      return { json: { status: 'answered', value: 'sunny', confidence: 0.7, citations: [{ block_id: (globalThis as any).weatherBlockId, quote: 'sunny' }] } }
    case 'notjson':
      return { content: 'I think the revenue is large.' }
    default:
      return { json: { status: 'answered', value: req.passages[0]!.text, confidence: 0.5, citations: [{ block_id: req.passages[0]!.blockId, quote: req.passages[0]!.text }] } }
  }
}

describe('model-backed engine against the stub', () => {
  test('valid citations are accepted; a ghost block, a quote not in its block, an unread block are downgraded and say why', async () => {
    stub.respond(answerByKey)
    stub.healthy()
    const { version } = await publishedSet(app, key, [
      Q('valid', { criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000' }),
      Q('ghost'), Q('misquote'), Q('mixed'), Q('unread'), Q('notjson'),
    ], { name: 'model set' })
    const { scenario, docs } = await caseWith(app, key, [FORM])
    const blocks = await allBlocks(app, key, scenario.id, docs['form.txt'].id)
    const revenueBlock = blocks.find((b) => b.text.startsWith('Annual revenue'))!
    ;(globalThis as any).weatherBlockId = blocks.find((b) => b.text.startsWith('Weather'))!.id
    stub.reset()
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
    expect(e.body).toMatchObject({ engine: 'model', question_set_version_id: version.id })
    const done = await evaluationEnded(app, key, scenario.id, e.body.id)
    expect(done.status).toBe('succeeded')
    expect(stub.calls).toBe(6)

    // What was sent: one call per question, JSON response format, the key only in the header.
    for (const r of stub.requests) {
      expect(r.body.model).toBe('stub-model')
      expect(r.body.response_format).toEqual({ type: 'json_object' })
      expect(r.headers.get('authorization')).toBe('Bearer sk-test-secret')
      expect(JSON.stringify(r.body)).not.toContain('sk-test-secret')
    }
    expect(stub.requests[0]!.passages[0]!.blockId).toBe(revenueBlock.id) // the fact's block goes first
    expect(stub.requests.find((r) => r.questionKey === 'unread')!.passages.map((p) => p.blockId)).not.toContain((globalThis as any).weatherBlockId)

    const answers = (await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })).body.items
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evidence`, { token: key })).body.items
    const a = (k: string) => answers.find((x: any) => x.question_key === k)
    const ev = (k: string) => evidence.filter((x: any) => x.question_key === k).map((x: any) => ({ block_id: x.block_id, page: x.page, quote: x.quote }))
    expect(a('valid')).toMatchObject({ status: 'answered', value: '1250000.00', confidence: 0.9, accepted: true, source: 'model', downgraded: false })
    expect('note' in a('valid')).toBe(false)
    expect(ev('valid')).toEqual([{ block_id: revenueBlock.id, page: 1, quote: 'Annual revenue: 1,250,000.00' }])
    expect(a('ghost')).toMatchObject({ status: 'not_found', value: null, confidence: 0, downgraded: true, evidence_ids: [], note: expect.stringMatching(/^downgraded to not_found: citation 1 names block [0-9a-f-]+, which does not exist$/) })
    expect(a('misquote')).toMatchObject({ status: 'not_found', value: null, downgraded: true, note: `downgraded to not_found: citation 1: the quote is not in block ${revenueBlock.id}` })
    expect(a('mixed')).toMatchObject({ status: 'answered', value: 'one and a quarter million', confidence: 0.4, downgraded: true, note: `downgraded: citation 2: the quote is not in block ${revenueBlock.id}` })
    expect(ev('mixed')).toEqual([{ block_id: revenueBlock.id, page: 1, quote: 'revenue: 1,250,000.00' }])
    expect(a('unread')).toMatchObject({ status: 'not_found', downgraded: true, note: expect.stringContaining('which the model was not given') })
    expect(a('notjson')).toMatchObject({ status: 'not_found', downgraded: true, note: 'downgraded to not_found: the model reply is not a JSON object' })
    expect(ev('ghost')).toEqual([])
    // No answer cites what it did not read: every evidence block was among the passages sent for its question.
    for (const x of evidence) {
      const sent = stub.requests.find((r) => r.questionKey === x.question_key)!
      expect(sent.passages.map((p) => p.blockId)).toContain(x.block_id)
    }
    const d = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/decision`, { token: key })
    expect(d.body.outcome).toBe('approve')
  })

  test('vendor errors are retried with back-off; a transient failure still succeeds', async () => {
    stub.respond(answerByKey)
    const { scenario } = await caseWith(app, key, [FORM])
    stub.reset()
    stub.failNext(2, { status: 429, retryAfter: 0 })
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
    const done = await evaluationEnded(app, key, scenario.id, e.body.id)
    expect(done.status).toBe('succeeded')
    expect(stub.calls).toBe(6 + 2)
  })

  test('a stub outage is retried, then the evaluation fails with evaluation_failed on the notification path', async () => {
    const { scenario } = await caseWith(app, key, [FORM])
    stub.reset()
    stub.failAll({ status: 503 })
    try {
      const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { notifications: EMAIL_ME } })
      const done = await evaluationEnded(app, key, scenario.id, e.body.id)
      expect(done).toMatchObject({ status: 'failed', error_code: 'evaluation_failed', progress: { answered: 0 } })
      expect(done.error).toBe('the model endpoint is unavailable after 3 attempts (last: HTTP 503)')
      expect(stub.calls).toBe(3) // the first question: 1 call + SVC_MODEL_MAX_RETRIES=2 retries, then the run stops
      const [env] = await envelopesOf(app, key, 'evaluation_run', e.body.id)
      expect(env).toMatchObject({ event_type: 'task.failed', task_kind: 'evaluation_run', task_id: e.body.id, outcome: { status: 'failed', summary: 'evaluation failed', error_code: 'evaluation_failed' } })
      expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}`, { token: key })).body.status).toBe('evaluation_failed')
      expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers?evaluation_id=${e.body.id}`, { token: key })).status).toBe(409)
    } finally {
      stub.healthy()
    }
  })

  test('version pinning: publishing a newer version during a running evaluation does not change it', async () => {
    stub.respond(answerByKey)
    const { set, version: v1 } = await publishedSet(app, key, [Q('valid', { answer_type: 'number', fact_path: 'annual_revenue' }), Q('mixed')], { name: 'pinning' })
    const { scenario } = await caseWith(app, key, [FORM])
    stub.reset()
    const release = stub.hold()
    let e: any
    try {
      e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
      expect(e.body.question_set_version_id).toBe(v1.id)
      await stub.waitForCalls(1)
      await evaluationReaches(app, key, scenario.id, e.body.id, 'running')
      expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}`, { token: key })).body.status).toBe('evaluating')
      const v2 = await publishVersion(app, key, set.id, [Q('ghost'), Q('valid', { answer_type: 'number', fact_path: 'annual_revenue' }), Q('misquote')])
      expect(v2.status).toBe('published')
    } finally {
      release()
    }
    const done = await evaluationEnded(app, key, scenario.id, e.body.id)
    expect(done).toMatchObject({ status: 'succeeded', question_set_version_id: v1.id, progress: { answered: 2, total: 2 } })
    const answers = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })
    expect(answers.body.items.map((a: any) => a.question_key)).toEqual(['valid', 'mixed'])
    const next = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
    expect(next.body.question_set_version_id).not.toBe(v1.id)
    expect((await evaluationEnded(app, key, scenario.id, next.body.id)).progress.total).toBe(3)
  })

  test('cancel ends a running evaluation canceled, delivered as task.failed with evaluation_canceled', async () => {
    stub.respond(answerByKey)
    await publishedSet(app, key, [Q('valid', { answer_type: 'number', fact_path: 'annual_revenue' }), Q('mixed'), Q('ghost')], { name: 'cancel me' })
    const { scenario } = await caseWith(app, key, [FORM])
    stub.reset()
    const release = stub.hold()
    let e: any
    try {
      e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { notifications: EMAIL_ME } })
      await stub.waitForCalls(1)
      const c = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}/cancel`, { token: key })
      expect(c.status).toBe(200)
      expect(c.body).toMatchObject({ id: e.body.id, status: 'canceled', error_code: 'evaluation_canceled', finished_at: expect.any(String) })
      const again = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}/cancel`, { token: key })
      expect(again.status).toBe(200)
      expect(again.body.status).toBe('canceled')
    } finally {
      release()
    }
    // The run notices at its next step and stores nothing; the state stays canceled.
    await Bun.sleep(300)
    const after = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}`, { token: key })
    expect(after.body.status).toBe('canceled')
    expect(stub.calls).toBe(1)
    const [{ n }] = await app.sql`select count(*)::int as n from evaluation_answers where evaluation_id = ${e.body.id}` as any
    expect(n).toBe(0)
    const envs = await envelopesOf(app, key, 'evaluation_run', e.body.id)
    expect(envs).toHaveLength(1)
    expect(envs[0]).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', summary: 'evaluation was canceled', error_code: 'evaluation_canceled' } })
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}`, { token: key })).body.status).toBe('created')
    const events = await app.sql<{ data: any }[]>`select data from case_events where scenario_id = ${scenario.id} and type = 'evaluation.status' order by seq`
    expect(events.map((x) => x.data.status)).toEqual(['queued', 'running', 'canceled'])
  })

  test('cancel of a finished evaluation is 409; of an unknown one 404', async () => {
    const { scenario } = await caseWith(app, key, [FORM])
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
    await evaluationEnded(app, key, scenario.id, e.body.id)
    expect(problemOf(await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}/cancel`, { token: key })).type).toBe('urn:svc:error:conflict')
    expect((await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluations/${crypto.randomUUID()}/cancel`, { token: key })).status).toBe(404)
  })
})

describe('model client', () => {
  const messages = [{ role: 'user' as const, content: 'hi' }]
  const fast = { backoffMs: () => 10 }

  test('returns the JSON object, with the attempts it took', async () => {
    stub.healthy()
    stub.respond(() => ({ json: { ok: true } }))
    stub.failNext(1, { status: 500 })
    const r = await chatJson({ modelUrl: stub.url }, messages, { ...fast, retries: 2 })
    expect(r.json).toEqual({ ok: true })
    expect(r.attempts).toBe(2)
    expect(r.usage?.total_tokens).toBeGreaterThan(0)
  })

  test('timeouts and connection errors are retried, then a typed outage error', async () => {
    stub.failAll('hang')
    try {
      const before = stub.calls
      const e = await chatJson({ modelUrl: stub.url }, messages, { ...fast, retries: 1, timeoutMs: 200 }).catch((x) => x)
      expect(e).toBeInstanceOf(ModelOutageError)
      expect(e).toMatchObject({ attempts: 2, lastFailure: 'timeout' })
      expect(stub.calls - before).toBe(2)
    } finally {
      stub.healthy()
    }
    const closed = await chatJson({ modelUrl: 'http://127.0.0.1:9' }, messages, { ...fast, retries: 2 }).catch((x) => x)
    expect(closed).toBeInstanceOf(ModelOutageError)
    expect(closed).toMatchObject({ attempts: 3, lastFailure: 'connection_error' })
  })

  test('a 4xx refusal is not retried; an abort stops at once', async () => {
    stub.respond(() => ({ status: 401, body: '{"error":"bad key"}' }))
    const before = stub.calls
    const e = await chatJson({ modelUrl: stub.url }, messages, { ...fast, retries: 3 }).catch((x) => x)
    expect(e).toBeInstanceOf(ModelResponseError)
    expect(e.status).toBe(401)
    expect(stub.calls - before).toBe(1)
    const ac = new AbortController()
    ac.abort(new Error('stop'))
    expect(await chatJson({ modelUrl: stub.url }, messages, { signal: ac.signal }).catch((x) => x.message)).toBe('stop')
  })
})
