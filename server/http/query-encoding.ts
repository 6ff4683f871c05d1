/**
 * A query string whose percent-encoded bytes are not valid UTF-8 (`%FF`, an encoded surrogate
 * `%ED%A0%80`, an overlong `%C0%AF`) is 400 `malformed`, as a body that is not valid UTF-8 is:
 * decoding it would silently turn the bytes into U+FFFD (or leave the escapes in place), and a
 * value that is not the text the client sent must not reach a filter or a stored field.
 */
import { ProblemError } from './problem'

const fatal = new TextDecoder('utf-8', { fatal: true })
const HIGH_BYTE = /%[89a-f]/i

/** The percent-decoded bytes of one name or value (`+` is a space; a `%` not followed by two hex digits stays itself). */
function bytesOf(part: string): Uint8Array {
  const out: number[] = []
  for (let i = 0; i < part.length; i++) {
    const c = part.charCodeAt(i)
    if (c === 0x25 && /^[0-9a-f]{2}$/i.test(part.slice(i + 1, i + 3))) {
      out.push(parseInt(part.slice(i + 1, i + 3), 16))
      i += 2
    } else if (c === 0x2b) out.push(0x20)
    else if (c < 0x80) out.push(c)
    else for (const b of new TextEncoder().encode(part[i]!)) out.push(b) // a raw character the URL kept
  }
  return Uint8Array.from(out)
}

/** Whether every name and value of a raw query string (without `?`) decodes as UTF-8. */
export function queryIsUtf8(query: string): boolean {
  if (!HIGH_BYTE.test(query)) return true // only escapes of bytes >= 0x80 can break UTF-8
  for (const pair of query.split('&')) {
    for (const part of pair.split('=')) {
      if (!HIGH_BYTE.test(part)) continue
      try { fatal.decode(bytesOf(part)) } catch { return false }
    }
  }
  return true
}

/** Throws 400 `malformed` when a request's query string is not valid UTF-8 (called before routing, from request-id's hook). */
export function refuseNonUtf8Query(request: Request): void {
  const url = request.url
  const at = url.indexOf('?')
  if (at < 0) return
  if (!queryIsUtf8(url.slice(at + 1))) throw new ProblemError('malformed', 'The query string is not valid UTF-8.')
}
