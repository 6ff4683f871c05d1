/**
 * One webhook POST over node:https, to an address the SSRF guard checked: the socket goes to that
 * IP while SNI, certificate verification and the Host header use the URL's host. Redirects are
 * never followed (a 3xx is just a status). Connect timeout 5 s, total 10 s; the response body is
 * read up to 16 KiB and discarded; only the status is acted on.
 *
 * Connections are kept alive and reused per receiver, keyed by the address the SSRF guard checked
 * for this send (with port, TLS name and CA list): a reused socket always goes to an address the
 * guard passed, and a name that resolves elsewhere next time gets a pool of its own. One TLS
 * handshake per receiver connection instead of one per delivery.
 */
import https from 'node:https'
import tls from 'node:tls'
import { readFileSync } from 'node:fs'
import ipaddr from 'ipaddr.js'
import type { CheckedAddress } from './ssrf'
import { bareHost } from './ssrf'

/** Spec limits of one send. */
export const WEBHOOK_CONNECT_TIMEOUT_MS = 5_000
export const WEBHOOK_TOTAL_TIMEOUT_MS = 10_000
export const WEBHOOK_RESPONSE_READ_BYTES = 16 * 1024

/** Error classes of a send that got no HTTP status. */
export type SendError = 'connect_timeout' | 'timeout' | 'connection_error' | 'tls_error'

/** The result of one send: the receiver's status, or an error class; and how long it took. */
export interface SendResult { status?: number; error?: SendError; durationMs: number }

/** Options of the sender (timeouts are overridable for tests; CA from SVC_WEBHOOK_CA_FILE). */
export interface SenderOptions {
  connectTimeoutMs?: number
  totalTimeoutMs?: number
  /** Extra trusted CA certificates (PEM), added to the system roots. */
  extraCa?: string[]
  userAgent?: string
}

/** The CA list for webhook TLS: the system roots plus the PEM file of SVC_WEBHOOK_CA_FILE, if set. */
export function webhookCa(caFile: string | undefined): string[] | undefined {
  if (!caFile) return undefined
  return [...tls.rootCertificates, readFileSync(caFile, 'utf8')]
}

const contexts = new WeakMap<string[], tls.SecureContext>()

/** One TLS context per CA list: parsing the roots plus the extra CA on every connection is costly. */
function secureContextFor(ca: string[]): tls.SecureContext {
  let context = contexts.get(ca)
  if (!context) contexts.set(ca, (context = tls.createSecureContext({ ca })))
  return context
}

/** Keep-alive pools, one per pinned receiver (see the file comment); the oldest dropped past the bound. */
const agents = new Map<string, https.Agent>()
const MAX_AGENTS = 256

/** The keep-alive pool of one pinned receiver: checked address, port, TLS name and CA list. */
function agentFor(target: CheckedAddress, port: number, servername: string | undefined, ca: string[] | undefined): https.Agent {
  const key = `${target.address}|${port}|${servername ?? ''}|${ca ? caIdOf(ca) : 0}`
  let agent = agents.get(key)
  if (agent) {
    agents.delete(key) // re-inserted below: the map's order is least recently used first
  } else {
    agent = new https.Agent({ keepAlive: true, keepAliveMsecs: 15_000, maxFreeSockets: 16, scheduling: 'lifo' })
    if (agents.size >= MAX_AGENTS) {
      const [oldest, old] = agents.entries().next().value as [string, https.Agent]
      agents.delete(oldest)
      old.destroy()
    }
  }
  agents.set(key, agent)
  return agent
}
const caIds = new WeakMap<string[], number>()
let caCount = 0
/** A number per CA list (lists are made once per configuration, so identity is enough). */
function caIdOf(ca: string[]): number {
  let id = caIds.get(ca)
  if (id === undefined) caIds.set(ca, (id = ++caCount))
  return id
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/

function classify(err: unknown): SendError {
  const code = String((err as { code?: unknown })?.code ?? '')
  if (TLS_CODES.test(code)) return 'tls_error'
  return 'connection_error'
}

/**
 * POSTs `body` to `url` through `target`. Never throws: every failure becomes an error class.
 */
export function postWebhook(url: URL, target: CheckedAddress, body: string, headers: Record<string, string>, opts: SenderOptions = {}): Promise<SendResult> {
  const connectMs = opts.connectTimeoutMs ?? WEBHOOK_CONNECT_TIMEOUT_MS
  const totalMs = opts.totalTimeoutMs ?? WEBHOOK_TOTAL_TIMEOUT_MS
  const host = bareHost(url.hostname)
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  return new Promise<SendResult>((resolve) => {
    let settled = false
    let connectTimer: ReturnType<typeof setTimeout> | undefined
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (settled) return
      settled = true
      clearTimeout(connectTimer)
      clearTimeout(totalTimer)
      resolve({ ...r, durationMs: elapsed() })
    }
    const payload = Buffer.from(body, 'utf8')
    const port = url.port ? Number(url.port) : 443
    const servername = ipaddr.isValid(host) ? undefined : host
    const req = https.request({
      host: target.address,
      family: target.family,
      port,
      method: 'POST',
      path: `${url.pathname}${url.search}`,
      // SNI and certificate identity use the URL's host; an IP-literal host has no SNI.
      servername,
      ...(opts.extraCa ? { secureContext: secureContextFor(opts.extraCa) } : {}),
      agent: agentFor(target, port, servername, opts.extraCa),
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(payload.byteLength),
        'user-agent': opts.userAgent ?? 'underwriting-case-service-webhooks/1',
        ...headers,
      },
    })
    let status: number | undefined
    const totalTimer = setTimeout(() => {
      // A status already received stands (only the status is acted on); otherwise a timeout.
      finish(status !== undefined ? { status } : { error: 'timeout' })
      req.destroy()
    }, totalMs)
    connectTimer = setTimeout(() => {
      finish({ error: 'connect_timeout' })
      req.destroy()
    }, connectMs)
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already: only the total timeout applies.
      if (req.reusedSocket) clearTimeout(connectTimer)
      else socket.once('secureConnect', () => clearTimeout(connectTimer))
    })
    req.on('error', (err) => finish({ error: classify(err) }))
    req.on('response', (res) => {
      clearTimeout(connectTimer)
      status = res.statusCode ?? 0
      let read = 0
      res.on('data', (chunk: Buffer) => {
        read += chunk.byteLength
        if (read >= WEBHOOK_RESPONSE_READ_BYTES) {
          finish({ status })
          res.destroy()
        }
      })
      res.on('end', () => finish({ status }))
      res.on('error', () => finish({ status }))
      res.on('close', () => finish({ status }))
    })
    req.end(payload)
  })
}
