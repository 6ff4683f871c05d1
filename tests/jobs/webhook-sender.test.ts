/**
 * The HTTPS sender's limits against real local peers: the response body is read up to 16 KiB and
 * discarded (a peer streaming forever does not hold the send), a hung TLS handshake is a connect
 * timeout, a peer that never answers is a total timeout, a closed port is a connection error, and a
 * status that arrived stands even if the body then stalls.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import https from 'node:https'
import net from 'node:net'
import { readFileSync } from 'node:fs'
import { postWebhook } from '../../jobs/webhook-sender'
import { testPki } from '../helpers/https-receiver'

setDefaultTimeout(60_000)

const ca = [readFileSync(testPki().caFile, 'utf8')]
let streaming: https.Server
let silent: https.Server
let tarpit: net.Server
const sockets = new Set<net.Socket>()
const track = (s: net.Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)) }
const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port
const listen = (s: net.Server) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))

beforeAll(async () => {
  const { key, cert } = testPki()
  // Answers 200 and then streams 4 KiB every 10 ms, never ending.
  streaming = https.createServer({ key, cert }, (req, res) => {
    req.resume()
    res.writeHead(req.url === '/stall' ? 201 : 200, { 'content-type': 'text/plain' })
    if (req.url === '/stall') { res.write('partial'); return }
    const timer = setInterval(() => res.write(Buffer.alloc(4096, 120)), 10)
    res.on('close', () => clearInterval(timer))
  })
  // Completes TLS, reads the request, never answers.
  silent = https.createServer({ key, cert }, (req) => { req.resume() })
  // Accepts TCP and never speaks TLS.
  tarpit = net.createServer(track)
  for (const s of [streaming, silent]) s.on('connection', track)
  await Promise.all([listen(streaming), listen(silent), listen(tarpit)])
}, 120_000)
afterAll(() => {
  for (const s of sockets) s.destroy()
  for (const s of [streaming, silent, tarpit]) s.close()
})

const target = { address: '127.0.0.1', family: 4 as const }
const url = (server: { address(): unknown }, path = '/') => new URL(`https://localhost:${portOf(server)}${path}`)

describe('webhook sender limits', () => {
  test('a peer streaming an endless body: the status is taken after at most 16 KiB', async () => {
    // The total timeout is beyond this test's own: only the 16 KiB cap can end this send, so a
    // sender that read on would hang and fail by the test timeout instead of by a wall-clock bound.
    const r = await postWebhook(url(streaming), target, '{}', {}, { extraCa: ca, totalTimeoutMs: 120_000 })
    expect(r.status).toBe(200)
    expect(r.error).toBeUndefined()
  })

  test('a status that arrived stands when the body then stalls', async () => {
    const r = await postWebhook(url(streaming, '/stall'), target, '{}', {}, { extraCa: ca, totalTimeoutMs: 500 })
    expect(r).toMatchObject({ status: 201 })
    expect(r.durationMs).toBeGreaterThanOrEqual(450)
  })

  test('a hung TLS handshake is a connect timeout', async () => {
    const r = await postWebhook(url(tarpit), target, '{}', {}, { extraCa: ca, connectTimeoutMs: 300, totalTimeoutMs: 5_000 })
    // connect_timeout, not timeout: the 300 ms handshake limit ended it, not the 5 s total one.
    expect(r.error).toBe('connect_timeout')
    expect(r.durationMs).toBeGreaterThanOrEqual(280)
  })

  test('a peer that never answers is a total timeout', async () => {
    const r = await postWebhook(url(silent), target, '{}', {}, { extraCa: ca, connectTimeoutMs: 2_000, totalTimeoutMs: 600 })
    expect(r.error).toBe('timeout')
    expect(r.status).toBeUndefined()
    expect(r.durationMs).toBeGreaterThanOrEqual(580)
  })

  test('a closed port is a connection error', async () => {
    const closed = net.createServer()
    await listen(closed)
    const port = portOf(closed)
    await new Promise<void>((r) => closed.close(() => r()))
    const r = await postWebhook(new URL(`https://localhost:${port}/`), target, '{}', {}, { extraCa: ca })
    expect(r.error).toBe('connection_error')
  })
})
