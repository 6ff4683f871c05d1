/**
 * File names shown to people: in the download's Content-Disposition, the frame, reports and lists.
 * A name that could be displayed as something other than what it is, or break a header or a path,
 * is refused where it is given (documents and guideline sources: 422 with the pointer /filename) and
 * neutralised where it is derived (an email's attachments, a name stored before this rule).
 *
 * Refused: path separators, C0 and C1 control characters and DEL (Unicode Cc), line and paragraph
 * separators (Zl, Zp), and every invisible format character (Cf): the bidirectional embeddings,
 * overrides and isolates U+202A-U+202E and U+2066-U+2069 (U+202E turns `invoice_fdp.exe` into
 * something that reads `invoice_exe.pdf`), the marks U+200E, U+200F and U+061C, the zero-width
 * characters U+200B-U+200D, U+2060 and U+FEFF, the invisible operators U+2061-U+2064, soft hyphens,
 * tag characters and the rest of the category.
 */
import { problems } from '../http/problem'

/** Characters no file name may hold (besides path separators). */
// eslint-disable-next-line no-control-regex
const INVISIBLE_OR_CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`

/** Why `filename` is refused, naming the first offending character; null when it is acceptable. */
export function filenameProblem(filename: string): string | null {
  if (filename.trim() === '') return 'must contain a non-whitespace character'
  if (/[/\\]/.test(filename)) return 'must not contain path separators (/ or \\)'
  const bad = INVISIBLE_OR_CONTROL.exec(filename)?.[0]
  if (bad === undefined) return null
  const cp = bad.codePointAt(0)!
  if (cp <= 0x1f || cp === 0x7f) return `must not contain control characters (${codePoint(bad)})`
  if (cp >= 0x80 && cp <= 0x9f) return `must not contain C1 control characters (${codePoint(bad)})`
  if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200e || cp === 0x200f || cp === 0x061c) {
    return `must not contain bidirectional control characters (${codePoint(bad)})`
  }
  return `must not contain invisible formatting or separator characters (${codePoint(bad)})`
}

/** Refuses a given file name with 422 and the pointer /filename. */
export function checkFilename(filename: string): void {
  const why = filenameProblem(filename)
  if (why) throw problems.schema([{ pointer: '/filename', message: why }])
}

/**
 * A derived or stored name made safe to show: path separators and every refused character become
 * `_`; at most 255 characters; `fallback` when nothing is left.
 */
export function neutraliseFilename(name: string, fallback = 'file'): string {
  let safe = name.replace(/[/\\]/g, '_').replace(new RegExp(INVISIBLE_OR_CONTROL.source, 'gu'), '_').slice(0, 255)
  if (/[\uD800-\uDBFF]$/.test(safe)) safe = safe.slice(0, -1) // never cut a surrogate pair in half
  return safe.trim() === '' ? fallback : safe
}
