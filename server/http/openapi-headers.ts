/**
 * The headers of the API as the OpenAPI document states them: which operations take which request
 * headers and which responses carry which response headers. The rules follow what the routes do:
 * an operation that can answer idempotency_conflict takes Idempotency-Key; one that can answer
 * precondition_failed takes If-Match and returns an ETag; every response carries X-Request-Id.
 */
import { NOT_BLANK_PATTERN } from '../../schemas/patterns'

interface HeaderSpec { name: string; request: boolean; response: boolean; description: string; schema: Record<string, unknown> }

/** Every documented header, by component key. */
export const HEADERS = {
  IdempotencyKey: { name: 'Idempotency-Key', request: true, response: false, schema: { type: 'string', minLength: 1, maxLength: 255, pattern: NOT_BLANK_PATTERN }, description: 'At most 255 characters, not blank (white space only is 422). Makes the request safe to retry: scoped to the workspace and route, kept 24 hours; a replay with the same body returns the stored status and body, another body is 409 idempotency_conflict.' },
  IfMatch: { name: 'If-Match', request: true, response: false, schema: { type: 'string' }, description: 'The ETag of the version the change is based on; 412 precondition_failed when it is no longer current.' },
  LastEventId: { name: 'Last-Event-ID', request: true, response: false, schema: { type: 'string', pattern: '^\\s*(\\d{1,15})?\\s*$' }, description: 'Resume the stream after this event id (the case event sequence number: a whole number of at most 15 digits; blank is the same as no header, every event replayed; anything else is 400 malformed).' },
  RequestId: { name: 'X-Request-Id', request: true, response: true, schema: { type: 'string' }, description: 'The request id; equals request_id of a problem body. An inbound value is echoed only when it is a short safe token ([A-Za-z0-9._:-]{1,64}).' },
  Location: { name: 'Location', request: false, response: true, schema: { type: 'string' }, description: 'The path of the created or started resource.' },
  ETag: { name: 'ETag', request: false, response: true, schema: { type: 'string' }, description: 'Strong entity tag of the version; send it back as If-Match.' },
  RetryAfter: { name: 'Retry-After', request: false, response: true, schema: { type: 'integer', minimum: 0 }, description: 'Seconds to wait before retrying.' },
  IdempotentReplayed: { name: 'Idempotent-Replayed', request: false, response: true, schema: { type: 'string', enum: ['true'] }, description: 'Present on a replayed response of an Idempotency-Key.' },
  WwwAuthenticate: { name: 'WWW-Authenticate', request: false, response: true, schema: { type: 'string' }, description: 'Bearer' },
} as const satisfies Record<string, HeaderSpec>

/** A header's component key. */
export type HeaderKey = keyof typeof HEADERS

/** What one operation does with headers. */
export interface OperationHeaders { request: HeaderKey[]; idempotent: boolean; versioned: boolean }

/** The request headers of an operation, from its method, path and the problems it can answer. */
export function operationHeaders(op: { method: string; path: string; problemTypes: string[] }): OperationHeaders {
  const idempotent = op.problemTypes.includes('urn:svc:error:idempotency_conflict')
  const preconditioned = op.problemTypes.includes('urn:svc:error:precondition_failed')
  const versioned = preconditioned || /\/versions(\/\{versionId\})?$/.test(op.path)
  const request: HeaderKey[] = []
  if (idempotent) request.push('IdempotencyKey')
  if (preconditioned) request.push('IfMatch')
  if (op.method === 'get' && op.path.endsWith('/events')) request.push('LastEventId')
  request.push('RequestId')
  return { request, idempotent, versioned }
}

/** The response headers of one response of an operation. */
export function responseHeaders(r: { status: string; method: string; path: string; headers: OperationHeaders }): HeaderKey[] {
  const out: HeaderKey[] = ['RequestId']
  const success = r.status.startsWith('2')
  if (success && r.method === 'post' && (r.status === '201' || r.status === '202')) out.push('Location')
  if (success && r.headers.versioned && r.method !== 'delete') out.push('ETag')
  if (success && r.headers.idempotent) out.push('IdempotentReplayed')
  if (r.status === '429' || r.status === '503') out.push('RetryAfter')
  if (r.status === '401') out.push('WwwAuthenticate')
  return out
}
