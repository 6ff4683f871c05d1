/**
 * JSON request bodies: only application/json (or +json) is parsed, capped at the configured size.
 * A body of another type is 415, one over the cap 413, one that is not JSON 400.
 */
import { Elysia } from 'elysia'
import { ProblemError } from './problem'

/** Paths whose bodies are raw bytes handled by their own route (presigned uploads). */
const RAW_BODY_PREFIXES = ['/v1/uploads/']

const isJson = (contentType: string) => /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType)

/** Reads a request body as text, refusing it with 413 once it passes `max` bytes. */
export async function readCappedText(request: Request, max: number): Promise<string> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > max) throw tooLarge(max)
  if (!request.body) return ''
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
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks))
}

const tooLarge = (max: number) => new ProblemError('payload_too_large', `The request body is larger than ${max} bytes.`)

const hasBody = (request: Request) =>
  (request.headers.get('content-length') ?? '0') !== '0' || request.headers.has('transfer-encoding')

/** Plugin: the one JSON body parser of the service. */
export function jsonBody(maxBytes: number) {
  return new Elysia({ name: 'json-body', seed: maxBytes }).onParse({ as: 'global' }, async ({ request, path }) => {
    if (RAW_BODY_PREFIXES.some((p) => path.startsWith(p))) return
    const contentType = request.headers.get('content-type') ?? ''
    if (!hasBody(request)) {
      if (contentType && !isJson(contentType)) throw new ProblemError('unsupported_media_type', 'Request bodies must be application/json.')
      return null
    }
    if (!isJson(contentType)) throw new ProblemError('unsupported_media_type', 'Request bodies must be application/json.')
    const text = await readCappedText(request, maxBytes)
    if (text.trim() === '') return null
    try {
      return JSON.parse(text)
    } catch {
      throw new ProblemError('malformed', 'The request body is not valid JSON.')
    }
  })
}
