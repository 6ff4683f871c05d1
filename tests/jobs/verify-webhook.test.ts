/**
 * The integrators' receiver helper: header parsing, the 300 s tolerance both ways, constant-time
 * comparison against the current then the previous secret, Fetch and Node header objects, raw
 * bytes only.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { createHmac } from 'node:crypto'
import { verifyWebhook } from '../../server/notifications/verify-webhook'
import { signatureHeader } from '../../jobs/signing'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

const body = '{"schema_version":1,"delivery_id":"d","event_type":"task.completed"}'
const secret = 'whsec_current'
const previous = 'whsec_previous'
const at = new Date('2026-03-01T12:00:00Z')
const t = Math.floor(at.getTime() / 1000)
const sign = (key: string, when = t, bytes = body) => `t=${when},v1=${createHmac('sha256', key).update(`${when}.${bytes}`).digest('hex')}`

describe('verifyWebhook', () => {
  test('accepts the current secret, then the previous one; reports which', () => {
    const headers = new Headers({ 'SVC-Signature': sign(secret), 'SVC-Delivery-Id': 'd', 'SVC-Event-Type': 'task.completed' })
    expect(verifyWebhook(body, headers, [secret, previous], { now: at })).toEqual({ ok: true, timestamp: t, secret: 'current', deliveryId: 'd', eventType: 'task.completed' })
    const old = new Headers({ 'SVC-Signature': sign(previous) })
    expect(verifyWebhook(body, old, [secret, previous], { now: at })).toMatchObject({ ok: true, secret: 'previous' })
    expect(verifyWebhook(body, old, secret, { now: at })).toEqual({ ok: false, reason: 'signature_mismatch' })
  })

  test('the service signer and the helper agree', () => {
    expect(verifyWebhook(body, { 'svc-signature': signatureHeader(secret, body, at) }, secret, { now: at })).toMatchObject({ ok: true })
    expect(signatureHeader(secret, body, at)).toBe(sign(secret))
  })

  test('Node-style header objects (any case, arrays) and byte bodies work', () => {
    expect(verifyWebhook(Buffer.from(body), { 'Svc-Signature': [sign(secret)] }, secret, { now: at.getTime() })).toMatchObject({ ok: true })
    expect(verifyWebhook(new TextEncoder().encode(body).buffer, { 'svc-signature': sign(secret) }, secret, { now: at })).toMatchObject({ ok: true })
  })

  test('the tolerance is 300 s in both directions', () => {
    const h = (when: number) => ({ 'svc-signature': sign(secret, when) })
    expect(verifyWebhook(body, h(t - 300), secret, { now: at })).toMatchObject({ ok: true })
    expect(verifyWebhook(body, h(t + 300), secret, { now: at })).toMatchObject({ ok: true })
    expect(verifyWebhook(body, h(t - 301), secret, { now: at })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' })
    expect(verifyWebhook(body, h(t + 301), secret, { now: at })).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' })
    expect(verifyWebhook(body, h(t - 1000), secret, { now: at, toleranceSeconds: 2000 })).toMatchObject({ ok: true })
  })

  test('a re-serialised or altered body, a missing or malformed header, no secret: rejected', () => {
    const h = { 'svc-signature': sign(secret) }
    expect(verifyWebhook(JSON.stringify(JSON.parse(body), null, 2), h, secret, { now: at })).toEqual({ ok: false, reason: 'signature_mismatch' })
    expect(verifyWebhook(body.replace('completed', 'failed'), h, secret, { now: at })).toEqual({ ok: false, reason: 'signature_mismatch' })
    expect(verifyWebhook(body, {}, secret, { now: at })).toEqual({ ok: false, reason: 'missing_signature' })
    expect(verifyWebhook(body, { 'svc-signature': 'v1=abc' }, secret, { now: at })).toEqual({ ok: false, reason: 'malformed_signature' })
    expect(verifyWebhook(body, { 'svc-signature': `t=${t},v1=XYZ` }, secret, { now: at })).toEqual({ ok: false, reason: 'malformed_signature' })
    expect(verifyWebhook(body, h, [], { now: at })).toEqual({ ok: false, reason: 'no_secret' })
    // The signature of one timestamp does not verify under another.
    const moved = sign(secret).replace(`t=${t}`, `t=${t + 1}`)
    expect(verifyWebhook(body, { 'svc-signature': moved }, secret, { now: at })).toEqual({ ok: false, reason: 'signature_mismatch' })
  })

  test('several v1 values (a sender mid-rotation) are each checked', () => {
    const a = sign('whsec_other').split(',v1=')[1]
    const header = `${sign(secret)},v1=${a}`
    expect(verifyWebhook(body, { 'svc-signature': header }, secret, { now: at })).toMatchObject({ ok: true })
  })
})
