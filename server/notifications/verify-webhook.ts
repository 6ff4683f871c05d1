/**
 * The receiver side of webhook authenticity, shipped for integrators (package export
 * "./webhook"): verifies `SVC-Signature: t=<unix seconds>,v1=<hex>` over the exact raw body with the
 * current secret, then the previous one (kept through the 24 h rotation overlap). Depends only on
 * node:crypto, so it runs in Node, Bun and Deno alike.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** Request headers as Fetch `Headers` or Node's `req.headers` object. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>

/** Options of verifyWebhook. */
export interface VerifyWebhookOptions {
  /** Largest accepted |now - t| in seconds (default 300, the spec's tolerance). */
  toleranceSeconds?: number
  /** The current time (default: the clock), as a Date or epoch milliseconds. */
  now?: Date | number
}

/** Why a delivery was rejected. */
export type VerifyFailure = 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch' | 'no_secret'

/** The verdict: accepted (with which secret and the delivery headers) or rejected with a reason. */
export type VerifyWebhookResult =
  | { ok: true; timestamp: number; secret: 'current' | 'previous'; deliveryId: string | null; eventType: string | null }
  | { ok: false; reason: VerifyFailure }

function header(headers: HeaderSource, name: string): string | null {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name)
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? (value[0] ?? null) : (value ?? null)
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === 'string') return new TextEncoder().encode(body)
  return body instanceof Uint8Array ? body : new Uint8Array(body)
}

/**
 * Verifies one webhook delivery. `rawBody` must be the body exactly as received (never a
 * re-serialised object). `secrets` is the current secret, or `[current, previous]`: the current one
 * is tried first. Rejects when |now - t| exceeds the tolerance; compares in constant time.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: HeaderSource,
  secrets: string | readonly (string | null | undefined)[],
  options: VerifyWebhookOptions = {},
): VerifyWebhookResult {
  const signature = header(headers, 'svc-signature')
  if (!signature) return { ok: false, reason: 'missing_signature' }
  let t: number | undefined
  const candidates: Buffer[] = []
  for (const part of signature.split(',')) {
    const eq = part.indexOf('=')
    const k = part.slice(0, eq).trim()
    const v = part.slice(eq + 1).trim()
    if (k === 't' && /^\d{1,15}$/.test(v)) t = Number(v)
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) candidates.push(Buffer.from(v, 'hex'))
  }
  if (t === undefined || candidates.length === 0) return { ok: false, reason: 'malformed_signature' }
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime()
  if (Math.abs(Math.floor(nowMs / 1000) - t) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: 'timestamp_out_of_tolerance' }
  const keys = (typeof secrets === 'string' ? [secrets] : secrets).slice(0, 2)
  if (!keys.some((k) => typeof k === 'string' && k.length > 0)) return { ok: false, reason: 'no_secret' }
  const body = bytesOf(rawBody)
  for (const [i, key] of keys.entries()) {
    if (typeof key !== 'string' || key.length === 0) continue
    const expected = createHmac('sha256', key).update(`${t}.`).update(body).digest()
    // Check every candidate (no early exit on a match position) so timing says nothing.
    let match = false
    for (const c of candidates) match = timingSafeEqual(c, expected) || match
    if (match) {
      return { ok: true, timestamp: t, secret: i === 0 ? 'current' : 'previous', deliveryId: header(headers, 'svc-delivery-id'), eventType: header(headers, 'svc-event-type') }
    }
  }
  return { ok: false, reason: 'signature_mismatch' }
}
