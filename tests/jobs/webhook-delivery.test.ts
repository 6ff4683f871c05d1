/**
 * Webhook delivery end to end against a real HTTPS receiver (self-signed CA): signature, headers,
 * the envelope, retries with growing gaps on 500 / 302 / timeout, dead letter after 8, redeliver
 * with cumulative attempts and a fresh cycle, the pinned secret, rotation before redeliver.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { createHmac } from 'node:crypto'
import { call, problemOf, type TestApp } from '../helpers/app'
import { startReceiver, type Receiver, type ReceivedRequest } from '../helpers/https-receiver'
import { verifyWebhook } from '../../server/notifications/verify-webhook'
import { finish, parseSignature, startNotifyApp, subscribe, waitDelivery } from './support'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

let app: TestApp
let receiver: Receiver
let tenant: { id: string }
let key: string
let readKey: string
let viewer: string
const scripts = new Map<string, (r: ReceivedRequest) => ReturnType<Parameters<Receiver['respond']>[0]>>()

const rotate = async () => {
  const r = await call(app.url, 'POST', '/v1/webhook-signing-secret/rotate', { token: key })
  expect(r.status).toBe(200)
  return r.body.secret as string
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

beforeAll(async () => {
  receiver = await startReceiver()
  // Each test scripts its own path; unknown paths get 204.
  receiver.respond((r) => scripts.get(r.path.split('?')[0]!)?.(r) ?? { status: 204 })
  app = await startNotifyApp({ allow: [receiver.host], retryInitialMs: 30, totalTimeoutMs: 600 })
  tenant = await app.tenant()
  key = await app.apiKey(tenant.id, ['notifications:write'])
  readKey = await app.apiKey(tenant.id, ['scenarios:read'])
  viewer = await app.apiKey(tenant.id, ['question_sets:read'])
}, 120_000)
afterAll(async () => {
  await app.stop()
  await receiver.stop()
}, 120_000)

describe('webhook delivery', () => {
  test('a delivery carries every header, the exact stored bytes, and verifies with the helper and an independent HMAC', async () => {
    const secret = await rotate()
    const sub = await subscribe(app, key, { url: receiver.url('/hooks/first?source=svc') })
    const occurredAt = new Date('2026-01-02T03:04:05.678Z')
    const resourcePath = `/v1/scenarios/${crypto.randomUUID()}/documents/${sub.task_id}`
    const [deliveryId] = await finish(app, { tenantId: tenant.id, taskKind: 'document_ingestion', taskId: sub.task_id, result: 'failed', reason: 'the parser\ngave up', occurredAt, resourcePath })
    const d = await waitDelivery(app, readKey, sub.id, deliveryId!)
    expect(d.status).toBe('delivered')
    expect(d.attempts).toBe(1)
    expect(d.history).toHaveLength(1)
    expect(d.history[0]).toMatchObject({ cycle: 1, counted: true, response_status: 204 })
    expect(typeof d.history[0].duration_ms).toBe('number')

    const [req] = receiver.byDelivery(deliveryId!)
    expect(req!.method).toBe('POST')
    expect(req!.path).toBe('/hooks/first?source=svc')
    expect(req!.headers.host).toBe(`${receiver.host}:${receiver.port}`)
    expect(req!.headers['content-type']).toBe('application/json')
    expect(req!.headers['user-agent']).toMatch(/^underwriting-case-service\/\d+\.\d+\.\d+ \(webhooks\)$/)
    expect(req!.headers['svc-delivery-id']).toBe(deliveryId)
    expect(req!.headers['svc-event-type']).toBe('task.failed')

    // The helper, with the current secret, the previous one, and a wrong one.
    expect(verifyWebhook(req!.raw, req!.headers, secret)).toMatchObject({ ok: true, secret: 'current', deliveryId, eventType: 'task.failed' })
    expect(verifyWebhook(req!.raw, req!.headers, ['whsec_wrong', secret])).toMatchObject({ ok: true, secret: 'previous' })
    expect(verifyWebhook(req!.raw, req!.headers, 'whsec_wrong')).toEqual({ ok: false, reason: 'signature_mismatch' })
    expect(verifyWebhook(Buffer.concat([req!.raw, Buffer.from(' ')]), req!.headers, secret)).toEqual({ ok: false, reason: 'signature_mismatch' })
    // An independent HMAC over "<t>." + the raw bytes.
    const sig = parseSignature(req!.headers['svc-signature'] as string)
    expect(Math.abs(sig.t - Date.now() / 1000)).toBeLessThan(30)
    expect(sig.v1).toBe(createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${sig.t}.`), req!.raw])).digest('hex'))

    // The body is the stored envelope byte for byte, with every field of the spec and nothing else.
    const [stored] = await app.sql`select body from notification_deliveries where id = ${deliveryId!}`
    expect(req!.raw.toString('utf8')).toBe(stored!.body)
    const body = JSON.parse(req!.raw.toString('utf8'))
    expect(Object.keys(body)).toEqual(['schema_version', 'delivery_id', 'event_type', 'task_kind', 'task_id', 'tenant_id', 'occurred_at', 'sent_at', 'outcome', 'links'])
    expect(body).toEqual({
      schema_version: 1,
      delivery_id: deliveryId,
      event_type: 'task.failed',
      task_kind: 'document_ingestion',
      task_id: sub.task_id,
      tenant_id: tenant.id,
      occurred_at: '2026-01-02T03:04:05.678Z',
      sent_at: '2026-01-02T03:04:05.678Z',
      outcome: { status: 'failed', summary: 'ingestion failed: the parser gave up', error_code: 'document_ingestion_failed' },
      links: { resource: `${app.deps.config.baseUrl}${resourcePath}`, ui: '' },
    })
    expect(Number.isInteger(body.schema_version)).toBe(true)
    expect(body.delivery_id).toMatch(UUID)
    expect(d.payload).toEqual(body)
  })

  test('500, 302 and a timeout are retried with growing gaps, same delivery id, identical bytes, recomputed t; 8 failures dead-letter; the pinned secret signs the whole cycle', async () => {
    const first = await rotate()
    const sub = await subscribe(app, key, { url: receiver.url('/hooks/failing') }, { kind: 'evaluation_run' })
    const plan: Record<number, ReturnType<Parameters<Receiver['respond']>[0]>> = {
      1: { status: 500 }, 2: { status: 302, headers: { location: receiver.url('/hooks/elsewhere') } }, 3: { status: 500 },
      4: { status: 503 }, 5: { status: 302, headers: { location: receiver.url('/hooks/elsewhere') } }, 6: 'hang', 7: { status: 500 }, 8: { status: 404 },
    }
    scripts.set('/hooks/failing', (r) => plan[r.nth] ?? { status: 500 })
    const [deliveryId] = await finish(app, { tenantId: tenant.id, taskKind: 'evaluation_run', taskId: sub.task_id, result: 'succeeded' })
    // Rotate once the first attempt pinned the first secret: the rest of the cycle keeps it.
    await waitDelivery(app, readKey, sub.id, deliveryId!, (d) => d.attempts >= 1)
    const second = await rotate()
    const d = await waitDelivery(app, readKey, sub.id, deliveryId!)

    expect(d.status).toBe('dead_lettered')
    expect(d.dead_letter_reason).toBe('attempts_exhausted')
    expect(d.attempts).toBe(8)
    expect(d.next_attempt_at).toBeUndefined()
    expect(d.history.map((h: any) => h.response_status ?? h.error)).toEqual([500, 302, 500, 503, 302, 'timeout', 500, 404])
    expect(d.history.every((h: any) => h.counted && h.cycle === 1)).toBe(true)

    const reqs = receiver.byDelivery(deliveryId!)
    expect(reqs).toHaveLength(8)
    expect(receiver.requests.some((r) => r.path === '/hooks/elsewhere')).toBe(false) // 3xx never followed
    expect(new Set(reqs.map((r) => r.raw.toString('hex'))).size).toBe(1)
    expect(reqs.every((r) => r.headers['svc-delivery-id'] === deliveryId)).toBe(true)
    for (const r of reqs) {
      expect(verifyWebhook(r.raw, r.headers, first)).toMatchObject({ ok: true })
      expect(verifyWebhook(r.raw, r.headers, second)).toEqual({ ok: false, reason: 'signature_mismatch' })
    }
    const ts = reqs.map((r) => parseSignature(r.headers['svc-signature'] as string).t)
    expect(ts[7]! - ts[0]!).toBeGreaterThanOrEqual(8) // the last gaps alone are seconds long: t moved
    for (let i = 1; i < ts.length; i++) expect(ts[i]!).toBeGreaterThanOrEqual(ts[i - 1]!)
    const gaps = reqs.slice(1).map((r, i) => r.at - reqs[i]!.at)
    // Each gap is the back-off (initial 30 ms x 2.4^n, +-10 % jitter) plus the send and scheduling
    // overhead (and the 600 ms timeout after the hung attempt): at least the back-off, never far above.
    gaps.forEach((g, i) => {
      const backoff = 30 * 2.4 ** i
      expect(g).toBeGreaterThanOrEqual(Math.floor(backoff * 0.9) - 5)
      expect(g).toBeLessThan(backoff * 1.1 + (i === 5 ? 600 : 0) + 1_500)
    })
    // Once the back-off outgrows any scheduling overhead the measured gaps themselves grow. (Earlier
    // gaps grow by 170-400 ms of back-off, which one slow moment of a busy CI machine can outweigh;
    // the bounds above already tie each of them to its own back-off.)
    for (let i = 5; i < gaps.length; i++) expect(gaps[i]!).toBeGreaterThan(gaps[i - 1]!)

    // Rotation between dead letter and redeliver: the new cycle signs with the current secret.
    const third = await rotate()
    scripts.set('/hooks/failing', (r) => (r.nth === 9 ? { status: 500 } : { status: 200 }))
    const started = Date.now()
    const re = await call(app.url, 'POST', `/v1/task-notification-subscriptions/${sub.id}/deliveries/${deliveryId}/redeliver`, { token: key })
    expect(re.status).toBe(202)
    expect(re.body).toMatchObject({ delivery_id: deliveryId, status: 'pending', attempts: 8, cycle: 2 })
    expect(re.body.dead_letter_reason).toBeUndefined()
    const after = await waitDelivery(app, readKey, sub.id, deliveryId!)
    expect(after.status).toBe('delivered')
    expect(after.attempts).toBe(10)
    expect(after.history.slice(8).map((h: any) => [h.cycle, h.response_status])).toEqual([[2, 500], [2, 200]])
    const again = receiver.byDelivery(deliveryId!).slice(8)
    expect(again).toHaveLength(2)
    // A fresh cycle: the first attempt at once, the next after the FIRST back-off again (not hours).
    expect(again[0]!.at - started).toBeLessThan(2_000)
    expect(again[1]!.at - again[0]!.at).toBeLessThan(1_000)
    for (const r of again) {
      expect(r.raw.toString('hex')).toBe(reqs[0]!.raw.toString('hex'))
      expect(r.headers['svc-delivery-id']).toBe(deliveryId)
      expect(verifyWebhook(r.raw, r.headers, third)).toMatchObject({ ok: true })
      expect(verifyWebhook(r.raw, r.headers, first)).toEqual({ ok: false, reason: 'signature_mismatch' })
    }
  }, 60_000)

  test('redeliver is 409 unless dead_lettered, 404 for an unknown or foreign delivery, 403 without write permission', async () => {
    await rotate()
    const sub = await subscribe(app, key, { url: receiver.url('/hooks/ok') }, { kind: 'report_generated' })
    const [deliveryId] = await finish(app, { tenantId: tenant.id, taskKind: 'report_generated', taskId: sub.task_id, result: 'failed' })
    await waitDelivery(app, readKey, sub.id, deliveryId!)
    const path = `/v1/task-notification-subscriptions/${sub.id}/deliveries/${deliveryId}/redeliver`
    const delivered = await call(app.url, 'POST', path, { token: key })
    expect(problemOf(delivered)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    const forbidden = await call(app.url, 'POST', path, { token: viewer })
    expect(problemOf(forbidden)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    const unknown = await call(app.url, 'POST', `/v1/task-notification-subscriptions/${sub.id}/deliveries/${crypto.randomUUID()}/redeliver`, { token: key })
    expect(problemOf(unknown).status).toBe(404)
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['notifications:write'])
    const foreign = await call(app.url, 'POST', path, { token: otherKey })
    expect(problemOf(foreign).status).toBe(404)
    const d = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${sub.id}/deliveries/${deliveryId}`, { token: readKey })
    expect(d.body).toMatchObject({ status: 'delivered', attempts: 1 })

    // A pending delivery is not redeliverable either.
    scripts.set('/hooks/slow', () => ({ status: 500 }))
    const slow = await subscribe(app, key, { url: receiver.url('/hooks/slow') }, { kind: 'report_generated' })
    const [pendingId] = await finish(app, { tenantId: tenant.id, taskKind: 'report_generated', taskId: slow.task_id, result: 'succeeded' })
    const pending = await call(app.url, 'POST', `/v1/task-notification-subscriptions/${slow.id}/deliveries/${pendingId}/redeliver`, { token: key })
    expect(problemOf(pending)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
  })

  test('the deliveries list pages with the same items as the single read', async () => {
    await rotate()
    const sub = await subscribe(app, key, { url: receiver.url('/hooks/list') }, { kind: 'generation_run' })
    const ids: string[] = []
    ids.push(...await finish(app, { tenantId: tenant.id, taskKind: 'generation_run', taskId: sub.task_id, result: 'stalled', attempts: 3 }))
    ids.push(...await finish(app, { tenantId: tenant.id, taskKind: 'generation_run', taskId: sub.task_id, result: 'succeeded' }))
    for (const id of ids) await waitDelivery(app, readKey, sub.id, id)
    const page1 = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${sub.id}/deliveries?limit=1`, { token: readKey })
    expect(page1.status).toBe(200)
    expect(page1.body.items).toHaveLength(1)
    expect(page1.body.items[0].delivery_id).toBe(ids[1])
    const page2 = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${sub.id}/deliveries?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`, { token: readKey })
    expect(page2.body.items.map((d: any) => d.delivery_id)).toEqual([ids[0]])
    expect(page2.body.next_cursor).toBeNull()
    const one = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${sub.id}/deliveries/${ids[0]}`, { token: readKey })
    expect(page2.body.items[0]).toEqual(one.body)
    // The stalled event did not consume the subscription: the terminal event arrived on it too.
    expect(page2.body.items[0].event_type).toBe('task.stalled')
    expect(page2.body.items[0].payload.outcome).toEqual({ status: 'failed', summary: 'on hold after 3 automatic checks; choose Resume', error_code: 'generation_vendor_outage' })
    expect(page1.body.items[0].event_type).toBe('task.completed')
    const missing = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${crypto.randomUUID()}/deliveries`, { token: readKey })
    expect(problemOf(missing).status).toBe(404)
  })
})
