/**
 * JSON request bodies: only application/json (or +json) is parsed, capped at the configured size.
 * A body of another type is 415, one over the cap 413; one that is not valid UTF-8, not JSON or
 * nested deeper than MAX_JSON_DEPTH is 400; strings (keys included) with NUL or unpaired surrogates
 * are 422 with a pointer each (see json-text.ts). Every JSON body of the API is an object: any other
 * JSON value (an array, a string, a number, null) is 422 with pointer "" before any route sees it, so an
 * optional body is either absent or an object whose violations point at their fields. A /v1 request
 * with no credential at all is 401 before its body is read (the access check itself runs later).
 */
import { Elysia } from 'elysia'
import { ProblemError, problems } from './problem'
import { jsonDepth, MAX_JSON_DEPTH, textViolations } from './json-text'

/**
 * The body size the HTTP server itself enforces: none. Bun answers a body over its own limit with
 * an empty 413 before any route runs, so every reader caps itself instead (this parser at
 * SVC_MAX_JSON_BODY_BYTES, uploads at SVC_MAX_UPLOAD_BYTES) and every refusal is a problem object;
 * a body no route reads is drained, not held (measured: a 500 MB POST left the RSS unchanged).
 */
export const SERVER_BODY_LIMIT = Number.MAX_SAFE_INTEGER

/**
 * Paths whose bodies their own route reads: raw bytes (presigned uploads), and the embed session
 * exchange, where every failure, an unreadable body included, is the same 401.
 */
const RAW_BODY_PREFIXES = ['/v1/uploads/', '/v1/embed/sessions']

const isJson = (contentType: string) => /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType)

/** Reads a request body as text, refusing it with 413 once it passes `max` bytes. */
export async function readCappedText(request: Request, max: number): Promise<string> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > max) throw tooLarge(max)
  if (!request.body) return ''
  // A declared length within the cap: Bun's server never hands over more bytes than it declares,
  // so the body is read in one native call instead of a stream reader's chunk loop (a few
  // microseconds of every JSON POST: the stream machinery was most of the body parser's CPU).
  if (declared !== null) return decodeUtf8(new Uint8Array(await request.arrayBuffer()))
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > max) {
      await reader.cancel().catch(() => {})
      throw tooLarge(max)
    }
    chunks.push(value)
  }
  return decodeUtf8(Buffer.concat(chunks))
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Strict UTF-8 decoding of a body (a byte that is not UTF-8 is 400 malformed). */
function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch {
    throw new ProblemError('malformed', 'The request body is not valid UTF-8.')
  }
}

const tooLarge = (max: number) => new ProblemError('payload_too_large', `The request body is larger than ${max} bytes.`)

const hasBody = (request: Request) =>
  (request.headers.get('content-length') ?? '0') !== '0' || request.headers.has('transfer-encoding')

/** Plugin: the one JSON body parser of the service. */
export function jsonBody(maxBytes: number) {
  return new Elysia({ name: 'json-body', seed: maxBytes }).onParse({ as: 'global' }, async ({ request, path }) => {
    if (RAW_BODY_PREFIXES.some((p) => path.startsWith(p))) return
    // Every /v1 operation that reads a JSON body needs a credential (the public ones read their own
    // raw bodies, above): without one it is 401 whatever the body, before the body is judged.
    if (path.startsWith('/v1/') && !request.headers.get('authorization')) throw problems.unauthorized()
    const contentType = request.headers.get('content-type') ?? ''
    if (!hasBody(request)) {
      if (contentType && !isJson(contentType)) throw new ProblemError('unsupported_media_type', 'Request bodies must be application/json.')
      return undefined
    }
    if (!isJson(contentType)) throw new ProblemError('unsupported_media_type', 'Request bodies must be application/json.')
    const text = await readCappedText(request, maxBytes)
    if (text.trim() === '') return undefined
    if (jsonDepth(text) > MAX_JSON_DEPTH) throw new ProblemError('malformed', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw new ProblemError('malformed', 'The request body is not valid JSON.')
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw problems.schema([{ pointer: '', message: 'the request body must be a JSON object' }])
    }
    const violations = textViolations(value)
    if (violations.length > 0) throw problems.schema(violations)
    return value
  })
}
