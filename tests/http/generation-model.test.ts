/**
 * The model-backed generator against the local OpenAI-compatible stub: a vendor outage stalls the
 * run after the configured checks (task.stalled on the webhook and email channels), resume continues
 * from the checkpoint without redoing a finished step (the stub counts calls) and the terminal event
 * arrives on the same subscriptions; cancel; failure; usage metered from the replies.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { verifyWebhook } from '../../server/notifications/verify-webhook'
import { call, problemOf, type TestApp } from '../helpers/app'
import { startModelStub, type ModelStub, type StubRequest } from '../helpers/model-stub'
import { startReceiver, type Receiver } from '../helpers/https-receiver'
import { readOutbox } from '../helpers/outbox'
import { startNotifyApp } from '../jobs/support'
import { createGroup, createSet, deliveriesOf, EMAIL, guidelineDocx, readyGuideline, runReaches } from '../helpers/authoring'

setDefaultTimeout(60_000)

let app: TestApp
let stub: ModelStub
let receiver: Receiver
let key: string
let secret: string
let guideline: any

beforeAll(async () => {
  stub = startModelStub()
  receiver = await startReceiver()
  app = await startNotifyApp({
    allow: [receiver.host],
    env: {
      SVC_MODEL_URL: stub.url, SVC_MODEL_MAX_RETRIES: '1', SVC_MODEL_TIMEOUT_MS: '3000',
      SVC_GENERATION_OUTAGE_CHECKS: '3', SVC_GENERATION_CHECK_INTERVAL_MS: '30', SVC_GENERATION_CHUNK_CHARS: '120',
      SVC_MODEL_PRICE_INPUT_MICRO: '2000', SVC_MODEL_PRICE_OUTPUT_MICRO: '6000',
      SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1',
    },
  })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['question_sets:write', 'notifications:write'])
  secret = (await call(app.url, 'POST', '/v1/webhook-signing-secret/rotate', { token: key })).body.secret
  const group = await createGroup(app, key)
  guideline = await readyGuideline(app, key, group.id, await guidelineDocx())
})
afterAll(async () => {
  await app.stop()
  stub.stop()
  await receiver.stop()
})

/** Drafts one question per passage that states an obligation, quoting its first line. */
function draftEach(req: StubRequest) {
  const questions = req.passages.flatMap((p) => p.text.split('\n').filter((l) => /must|shall|should|required/.test(l)).map((line, i) => ({
    key: `${p.blockId.slice(-6)}_${i}`, text: `Is this met: ${line}`, criticality: 'major', answer_type: 'text',
    citations: [{ block_id: p.blockId, quote: line }],
  })))
  return { json: { questions } }
}

const generate = (setId: string, body: Record<string, unknown> = {}) =>
  call(app.url, 'POST', `/v1/question-sets/${setId}/generate`, { token: key, body: { guideline_ids: [guideline.id], ...body } })

describe('vendor outage: stall, resume from the checkpoint, terminal event on the same subscriptions', () => {
  test('stalls after the configured checks with task.stalled on webhook and email; resume redoes no finished step', async () => {
    const set = await createSet(app, key)
    const served: string[][] = []
    stub.healthy()
    stub.reset()
    stub.respond((req) => {
      served.push(req.passages.map((p) => p.blockId))
      if (served.length === 2) stub.failAll({ status: 503 })
      return draftEach(req)
    })
    const hook = receiver.url('/hooks/generation')
    const r = await generate(set.id, { notifications: [{ channel: 'webhook', webhook: { url: hook } }, ...EMAIL] })
    expect(r.status).toBe(202)
    expect(r.body.generator).toBe('model')
    const stalled = await runReaches(app, key, set.id, r.body.id, ['stalled'])
    // 2 steps served, then 3 checks of 2 attempts each (SVC_MODEL_MAX_RETRIES=1).
    expect(stub.calls).toBe(2 + 3 * 2)
    expect(stalled).toMatchObject({ status: 'stalled', paused_reason: 'vendor_outage', outage_checks: 3, error_code: 'generation_vendor_outage' })
    expect(stalled.progress.steps_done).toBe(2)
    expect(stalled.progress.steps_total).toBeGreaterThan(3)
    const keptDrafts = stalled.drafted_questions.map((d: any) => d.key)
    expect(keptDrafts.length).toBeGreaterThan(0)
    expect(stalled.usage.input_tokens).toBeGreaterThan(0)

    const stalledDeliveries = await deliveriesOf(app, key, 'generation_run', r.body.id, 2)
    for (const d of stalledDeliveries) {
      expect(d.payload).toMatchObject({
        event_type: 'task.stalled', task_kind: 'generation_run', task_id: r.body.id,
        outcome: { status: 'failed', error_code: 'generation_vendor_outage', summary: 'on hold after 3 automatic checks; choose Resume' },
      })
    }
    expect(stalledDeliveries.map((d) => d.channel).sort()).toEqual(['email', 'webhook'])
    await receiver.waitFor((rs) => rs.some((x) => x.path === '/hooks/generation'))
    const first = receiver.requests.find((x) => x.path === '/hooks/generation')!
    expect(first.headers['svc-event-type']).toBe('task.stalled')
    expect(verifyWebhook(first.raw, first.headers, secret)).toMatchObject({ ok: true, eventType: 'task.stalled' })
    const mail = () => readOutbox(app.config.dataDir).filter((m) => m.text.includes(r.body.id))
    for (let i = 0; i < 200 && mail().length === 0; i++) await Bun.sleep(25)
    const text = mail()[0]!.text.replace(/=\r?\n/g, '')
    expect(text).toContain('Summary: on hold after 3 automatic checks; choose Resume')
    expect(text).toContain('Error code: generation_vendor_outage')
    // The subscriptions are not consumed.
    const subs = (await call(app.url, 'GET', `/v1/task-notification-subscriptions?task_kind=generation_run&task_id=${r.body.id}`, { token: key })).body.items
    expect(subs.map((s: any) => s.status)).toEqual(['active', 'active'])
    // Drafts of a stalled run can already be reviewed; resume continues from the checkpoint.
    stub.healthy()
    const before = stub.calls
    const resumed = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/resume`, { token: key })
    expect(resumed.status).toBe(202)
    expect(resumed.body).toMatchObject({ status: 'queued', outage_checks: 0 })
    expect(resumed.body.paused_reason).toBeUndefined()
    const done = await runReaches(app, key, set.id, r.body.id)
    expect(done.status).toBe('succeeded')
    expect(stub.calls - before).toBe(done.progress.steps_total - 2)
    // Every step was served exactly once: the two before the outage were not asked again.
    expect(served.length).toBe(done.progress.steps_total)
    expect(new Set(served.map((b) => b.join(','))).size).toBe(served.length)
    expect(done.drafted_questions.map((d: any) => d.key).slice(0, keptDrafts.length)).toEqual(keptDrafts)
    for (const d of done.drafted_questions) expect(d.citations[0]).toMatchObject({ guideline_id: guideline.id })
    // Usage: one metered row per served step, priced per 1k tokens and rounded up per call.
    const rows = await app.sql`select input_tokens, output_tokens, cost_micro from model_usage where run_id = ${r.body.id}`
    expect(rows.length).toBe(done.progress.steps_total)
    for (const u of rows) expect(Number(u.cost_micro)).toBe(Math.ceil((Number(u.input_tokens) * 2000 + Number(u.output_tokens) * 6000) / 1000))
    const total = rows.reduce((n, u) => n + Number(u.cost_micro), 0)
    expect(done.usage).toMatchObject({ input_tokens: rows.reduce((n, u) => n + Number(u.input_tokens), 0), cost_micro: total })
    expect(done.usage.cost).toBe((total / 1e6).toFixed(6).replace(/(\.\d\d\d*?)0+$/, '$1'))

    // The terminal event arrives on the same subscriptions.
    const all = await deliveriesOf(app, key, 'generation_run', r.body.id, 4)
    for (const channel of ['email', 'webhook']) {
      expect(all.filter((d) => d.channel === channel).map((d) => d.payload.event_type)).toEqual(['task.stalled', 'task.completed'])
    }
    await receiver.waitFor((rs) => rs.filter((x) => x.path === '/hooks/generation').length >= 2)
    expect(receiver.requests.filter((x) => x.path === '/hooks/generation').map((x) => x.headers['svc-event-type'])).toEqual(['task.stalled', 'task.completed'])
    // Resume of a finished run is 409.
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/resume`, { token: key })).type).toBe('urn:svc:error:conflict')
  })
})

describe('cancel and failure', () => {
  test('cancel mid-step: ends canceled (generation_canceled), the step in flight is not checkpointed, no further call', async () => {
    const set = await createSet(app, key)
    stub.healthy()
    stub.respond(draftEach)
    const release = stub.hold()
    const before = stub.calls
    const r = await generate(set.id, { notifications: EMAIL })
    await stub.waitForCalls(before + 1)
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/accept`, { token: key, body: {} })).type).toBe('urn:svc:error:conflict')
    const c = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/cancel`, { token: key })
    expect(c.status).toBe(200)
    expect(c.body).toMatchObject({ status: 'canceled', error_code: 'generation_canceled' })
    release()
    await Bun.sleep(300)
    const after = (await call(app.url, 'GET', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}`, { token: key })).body
    expect(after).toMatchObject({ status: 'canceled', progress: { steps_done: 0, drafted: 0 } })
    expect(stub.calls).toBe(before + 1)
    const [d] = await deliveriesOf(app, key, 'generation_run', r.body.id)
    expect(d.payload).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'generation_canceled', summary: 'generation was canceled' } })
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/cancel`, { token: key })).type).toBe('urn:svc:error:conflict')
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/resume`, { token: key })).type).toBe('urn:svc:error:conflict')
  })

  test('a refused model request fails the run with generation_failed and its reason', async () => {
    const set = await createSet(app, key)
    stub.healthy()
    stub.respond(() => ({ status: 400, body: '{"error":"bad request"}' }))
    const r = await generate(set.id, { notifications: EMAIL })
    const run = await runReaches(app, key, set.id, r.body.id)
    expect(run).toMatchObject({ status: 'failed', error_code: 'generation_failed', error_detail: 'the model endpoint refused the request with HTTP 400' })
    const [d] = await deliveriesOf(app, key, 'generation_run', r.body.id)
    expect(d.payload).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'generation_failed', summary: 'generation failed: the model endpoint refused the request with HTTP 400' } })
  })

  test('a reply that cites passages it was not given drafts nothing from them', async () => {
    const set = await createSet(app, key)
    stub.healthy()
    stub.respond((req) => ({ json: { questions: [
      { key: 'ghost', text: 'Ghost?', criticality: 'major', answer_type: 'text', citations: [{ block_id: crypto.randomUUID(), quote: 'x' }] },
      { key: 'misquote', text: 'Misquote?', criticality: 'major', answer_type: 'text', citations: [{ block_id: req.passages[0]!.blockId, quote: 'words that are not there' }] },
    ] } }))
    const run = await runReaches(app, key, set.id, (await generate(set.id)).body.id)
    expect(run).toMatchObject({ status: 'succeeded', drafted_questions: [] })
  })
})
