/**
 * The local driver's own presigned upload URLs: `{base}/v1/uploads/{tenantId}/{documentId}
 * ?expires=<unix seconds>&signature=<base64url HMAC-SHA256>`. The signature covers the method,
 * the workspace, the document, the announced size, the content type and the expiry, under a
 * sub-key of the service key used for nothing else. A URL that was changed, that lapsed, or whose
 * PUT carries another content type fails the same way.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** The signed facts of one upload URL. */
export interface SignedUpload {
  method: string
  tenantId: string
  documentId: string
  size: number
  contentType: string
  /** Unix seconds. */
  expires: number
}

/** The path prefix of upload URLs (the JSON body parser leaves these bodies alone). */
export const UPLOAD_PATH_PREFIX = '/v1/uploads'

const canonical = (s: SignedUpload) =>
  ['svc-upload-v1', s.method.toUpperCase(), s.tenantId, s.documentId, String(s.size), s.contentType.toLowerCase(), String(s.expires)].join('\n')

/** The signature of an upload. */
export function signUpload(key: Uint8Array, s: SignedUpload): string {
  return createHmac('sha256', key).update(canonical(s)).digest('base64url')
}

/** The full upload URL for a grant. */
export function uploadUrl(baseUrl: string, key: Uint8Array, s: SignedUpload): string {
  const q = new URLSearchParams({ expires: String(s.expires), signature: signUpload(key, s) })
  return `${baseUrl}${UPLOAD_PATH_PREFIX}/${s.tenantId}/${s.documentId}?${q}`
}

/**
 * True when `signature` is the signature of these facts and they have not lapsed at `now`
 * (checked in constant time; a lapsed URL is refused even with a good signature).
 */
export function verifyUpload(key: Uint8Array, s: SignedUpload, signature: string, now = Date.now()): boolean {
  const expected = Buffer.from(signUpload(key, s), 'base64url')
  const given = Buffer.from(signature, 'base64url')
  const good = given.length === expected.length && timingSafeEqual(given, expected)
  return good && Number.isSafeInteger(s.expires) && s.expires * 1000 > now
}
