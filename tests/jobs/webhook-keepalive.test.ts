/**
 * Webhook connections are reused per pinned receiver (issue 30): sends to one receiver address
 * share a kept-alive TLS connection; the same URL pinned to another checked address never reuses
 * the first address's connection; a receiver that hangs on a reused connection still ends as a
 * timeout of the send, not a connect timeout.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { postWebhook } from '../../jobs/webhook-sender'
import { startReceiver, testPki, type Receiver } from '../helpers/https-receiver'

setDefaultTimeout(30_000)

let a: Receiver
let b: Receiver
let ca: string[]
beforeAll(async () => {
  a = await startReceiver({ host: '127.0.0.2' })
  b = await startReceiver({ host: '127.0.0.3' })
  ca = [readFileSync(testPki().caFile, 'utf8')]
})
afterAll(async () => { await a.stop(); await b.stop() })

const send = (r: Receiver, address: string, opts: { totalTimeoutMs?: number; connectTimeoutMs?: number } = {}) =>
  postWebhook(new URL(`https://localhost:${r.port}/hook`), { address, family: 4 }, '{"x":1}', { 'svc-delivery-id': crypto.randomUUID() }, { extraCa: ca, ...opts })

describe('webhook keep-alive per pinned receiver', () => {
  test('ten sends in a row to one receiver use one connection', async () => {
    const before = a.connections
    for (let i = 0; i < 10; i++) expect((await send(a, '127.0.0.2')).status).toBe(204)
    expect(a.connections - before).toBe(1)
  })

  test('the same URL pinned to another checked address gets its own connection there', async () => {
    const beforeA = a.connections
    const beforeB = b.connections
    expect((await send(b, '127.0.0.3')).status).toBe(204)
    expect(b.connections - beforeB).toBe(1)
    expect(a.connections).toBe(beforeA)
  })

  test('a reused connection whose receiver hangs ends as a timeout, after the total limit', async () => {
    expect((await send(a, '127.0.0.2')).status).toBe(204)
    a.respond(() => 'hang')
    const r = await send(a, '127.0.0.2', { connectTimeoutMs: 100, totalTimeoutMs: 600 })
    a.respond(() => ({ status: 204 }))
    expect(r.error).toBe('timeout')
    expect(r.durationMs).toBeGreaterThanOrEqual(500)
  })
})
