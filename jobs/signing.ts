/**
 * Webhook signatures (spec Authentication 12): `SVC-Signature: t=<unix seconds>,v1=<hex>` where v1
 * is the lower-case hex HMAC-SHA256, keyed with the tenant's signing secret, of `<t>.` followed by
 * the exact body bytes. `t` is taken anew for every attempt.
 */
import { createHmac } from 'node:crypto'

/** The lower-case hex HMAC-SHA256 of `<t>.<body>` under `secret`. */
export function signatureHex(secret: string, t: number, body: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')
}

/** The SVC-Signature header value for one attempt at time `now` (default: the current time). */
export function signatureHeader(secret: string, body: string | Uint8Array, now: Date = new Date()): string {
  const t = Math.floor(now.getTime() / 1000)
  return `t=${t},v1=${signatureHex(secret, t, body)}`
}
