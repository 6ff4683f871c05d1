/**
 * A real HTTPS webhook receiver for tests: a certificate authority made with openssl, a server
 * certificate for localhost / 127.0.0.1 / 127.0.0.2 / ::1 signed by it (pass `caFile` as
 * SVC_WEBHOOK_CA_FILE), and a node:https server that records every TCP connection and request
 * (raw body bytes, headers, time), answers as a script says, and tracks requests of one delivery
 * that overlap in time.
 */
import https from 'node:https'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Files of the test PKI. */
export interface TestPki { dir: string; caFile: string; key: string; cert: string }

let pki: TestPki | undefined

/** Creates (once per process) a CA and a server certificate for the loopback names. */
export function testPki(): TestPki {
  if (pki) return pki
  const dir = mkdtempSync(join(tmpdir(), 'svc-pki-'))
  const run = (args: string[]) => {
    const r = Bun.spawnSync(['openssl', ...args], { cwd: dir, stderr: 'pipe', stdout: 'pipe' })
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`)
  }
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=svc test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'])
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,DNS:receiver.test,IP:127.0.0.1,IP:127.0.0.2,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n')
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf'])
  pki = { dir, caFile: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'server.key'), 'utf8'), cert: readFileSync(join(dir, 'server.pem'), 'utf8') }
  return pki
}

/** One request the receiver got. */
export interface ReceivedRequest {
  at: number
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  raw: Buffer
  deliveryId: string | undefined
  /** 1 for the first request of this delivery id, 2 for the second, ... */
  nth: number
  status: number
}

/** What to answer: a status (with optional delay before answering and extra headers), or hang forever. */
export type Reply = { status: number; delayMs?: number; headers?: Record<string, string>; body?: string } | 'hang'

/** A running receiver. */
export interface Receiver {
  host: string
  port: number
  /** A URL on this receiver (host defaults to the bound address). */
  url(path?: string, host?: string): string
  requests: ReceivedRequest[]
  /** TCP connections accepted so far. */
  connections: number
  /** Delivery ids that ever had two requests in flight at once. */
  overlaps: Set<string>
  /** Replaces the answering script. */
  respond(script: (r: ReceivedRequest) => Reply): void
  /** Resolves when `predicate` holds over the recorded requests (polls every 10 ms). */
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>
  byDelivery(id: string): ReceivedRequest[]
  stop(): Promise<void>
}

/** Starts a receiver on `host` (default 127.0.0.2) and a random port; answers 204 unless told otherwise. */
export async function startReceiver(opts: { host?: string; port?: number } = {}): Promise<Receiver> {
  const { key, cert } = testPki()
  const host = opts.host ?? '127.0.0.2'
  let script: (r: ReceivedRequest) => Reply = () => ({ status: 204 })
  const requests: ReceivedRequest[] = []
  const inFlight = new Map<string, number>()
  const counts = new Map<string, number>()
  const overlaps = new Set<string>()
  const hanging = new Set<ServerResponse>()
  const sockets = new Set<import('node:net').Socket>()
  let connections = 0

  const server = https.createServer({ key, cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      const deliveryId = req.headers['svc-delivery-id'] as string | undefined
      const nth = deliveryId ? (counts.get(deliveryId) ?? 0) + 1 : 0
      if (deliveryId) {
        counts.set(deliveryId, nth)
        const now = (inFlight.get(deliveryId) ?? 0) + 1
        inFlight.set(deliveryId, now)
        if (now > 1) overlaps.add(deliveryId)
      }
      const record: ReceivedRequest = { at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers }, raw, deliveryId, nth, status: 0 }
      requests.push(record)
      const done = () => { if (deliveryId) inFlight.set(deliveryId, (inFlight.get(deliveryId) ?? 1) - 1) }
      res.on('close', done)
      const reply = script(record)
      if (reply === 'hang') {
        hanging.add(res)
        return
      }
      record.status = reply.status
      const send = () => {
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers })
        res.end(reply.body ?? 'ok')
      }
      if (reply.delayMs) setTimeout(send, reply.delayMs)
      else send()
    })
  })
  server.on('connection', (socket) => {
    connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => resolve())
  })
  const port = (server.address() as { port: number }).port
  const shown = host.includes(':') ? `[${host}]` : host
  return {
    host,
    port,
    url: (path = '/hook', h = shown) => `https://${h}:${port}${path}`,
    requests,
    get connections() { return connections },
    overlaps,
    respond(next) { script = next },
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      while (!predicate(requests)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests)`)
        await Bun.sleep(10)
      }
    },
    byDelivery: (id) => requests.filter((r) => r.deliveryId === id),
    async stop() {
      for (const res of hanging) res.destroy()
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
