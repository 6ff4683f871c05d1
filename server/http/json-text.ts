/**
 * The text rules every JSON request body and query value meets before any route sees it, so no
 * input can reach PostgreSQL (which refuses U+0000 in text) or a renderer in a shape that fails
 * there: valid UTF-8, nesting no deeper than MAX_JSON_DEPTH, and strings (keys included) without
 * NUL or unpaired surrogates.
 */
import type { FieldError } from './problem'

/** The deepest nesting of arrays and objects a body may have. */
export const MAX_JSON_DEPTH = 64

/**
 * The deepest nesting of a JSON text, counted without parsing (brackets outside strings), so a
 * body nested 10,000 levels is refused before a recursive parser or validator meets it.
 */
export function jsonDepth(text: string): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // a backslash escapes the next character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) { if (++depth > max) max = depth }
    else if (c === 0x5d || c === 0x7d) depth--
  }
  return max
}

/**
 * The length of a string as the OpenAPI document's `maxLength`/`minLength` count it: Unicode code
 * points (JSON Schema's characters), not UTF-16 code units, so an emoji is one character. The
 * validator counts the same way (patches/@sinclair%2Ftypebox@0.34.52.patch); every length rule the
 * service checks by hand uses this too.
 */
export function charLength(s: string): number {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) { n--; i++ }
    }
  }
  return n
}

/** Why a string cannot be stored as text, or undefined when it can. */
export function textProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain NUL (U+0000)'
  if (!s.isWellFormed()) return 'must not contain an unpaired surrogate (U+D800-U+DFFF)'
  return undefined
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1')

/**
 * Every string value and object key of a parsed body that cannot be stored as text, as one
 * errors[] entry per JSON Pointer. Walks iteratively (the depth is already bounded).
 */
export function textViolations(value: unknown, limit = 20): FieldError[] {
  // The common case, a body with nothing to report, is judged without building a pointer per value.
  if (!hasTextProblem(value)) return []
  const out: FieldError[] = []
  const stack: [unknown, string][] = [[value, '']]
  while (stack.length > 0 && out.length < limit) {
    const [v, pointer] = stack.pop()!
    if (typeof v === 'string') {
      const problem = textProblem(v)
      if (problem) out.push({ pointer, message: problem })
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${pointer}/${i}`])
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!
        const at = `${pointer}/${escapePointer(key)}`
        const keyProblem = textProblem(key)
        if (keyProblem) out.push({ pointer: at, message: `a member name ${keyProblem}` })
        stack.push([child, at])
      }
    }
  }
  return out
}

/** Whether any string value or object key of a parsed body cannot be stored as text (no pointers built). */
function hasTextProblem(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'string') {
      if (textProblem(v)) return true
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item)
    } else if (v !== null && typeof v === 'object') {
      for (const key in v) {
        if (textProblem(key)) return true
        stack.push((v as Record<string, unknown>)[key])
      }
    }
  }
  return false
}
