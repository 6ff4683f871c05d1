/**
 * Typed values read out of document text: exact decimals as strings (money never becomes a float),
 * ISO dates, booleans, or plain text. The fact miner, the accept rules and the model-backed engine
 * share these readers, so "1,250,000.00" means the same thing everywhere.
 */

import { ANSWER_TYPES, type AnswerTypeSchema } from '../../schemas/question-set'
import type { Static } from '@sinclair/typebox'

export { ANSWER_TYPES }
/** The answer types a question can declare. */
export type AnswerType = Static<typeof AnswerTypeSchema>

/** A value with its type: numbers are decimal strings ("1250000.00"), dates ISO ("2024-01-31"). */
export type TypedValue =
  | { type: 'number'; value: string; unit?: string }
  | { type: 'date'; value: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'text'; value: string }

/** The JSON value of an answer: a decimal string, an ISO date, a boolean, a string, or null. */
export type AnswerValue = string | boolean | null

const CURRENCY = /^(?:[$€£¥]|usd|eur|gbp|chf|cad|aud|jpy)\s*/i
const CURRENCY_AFTER = /\s*(?:[$€£¥]|usd|eur|gbp|chf|cad|aud|jpy)$/i
const GROUPED = /^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/
const PLAIN = /^\d+(?:\.\d+)?$|^\.\d+$/
/**
 * Numbers written with a decimal comma (most of Europe), where no English reading exists: a comma
 * decimal after dot- or space-grouped thousands or none (`1.234,50`, `1 234,50`, `12,50`), or two
 * or more dot-separated groups (`1.234.567`). `1,500` and `1.500` read both ways and keep their
 * English reading (1500 and 1.5); space-grouped digits without a decimal comma (`1 234`) may be two
 * numbers side by side and are not read as one.
 */
const COMMA_DECIMAL = /^\d{1,3}(?:([. \u00a0\u202f])\d{3})(?:\1\d{3})*,\d+$|^\d+,\d+$/
const DOT_GROUPS = /^\d{1,3}(?:\.\d{3}){2,}$/

/**
 * Reads an exact number: thousands separators (","), a currency sign or code, a minus sign or
 * accounting parentheses, and a trailing "%" are understood; so is a decimal comma where the
 * number has no English reading (COMMA_DECIMAL). Returns the canonical decimal string
 * (scale kept as written: "1,250,000.00" -> "1250000.00") with its unit, or null.
 */
/**
 * A document's decimal mark, where its own figures show it: `comma` for a document that writes
 * `1.234,50` and never `1,234.50` (numbersOf in facts.ts), else `point`. It decides only the numbers
 * that read both ways, `1.500` and `1,500`.
 */
export type DecimalMark = 'point' | 'comma'

export function parseNumber(raw: string, mark: DecimalMark = 'point'): { value: string; unit?: string } | null {
  let s = raw.trim()
  let negative = false
  if (/^\(.*\)$/.test(s)) { negative = true; s = s.slice(1, -1).trim() }
  if (/^[-−]/.test(s)) { negative = !negative; s = s.slice(1).trim() } else if (s.startsWith('+')) s = s.slice(1).trim()
  let unit: string | undefined
  const before = CURRENCY.exec(s)
  if (before) { unit = before[0].trim().toUpperCase(); s = s.slice(before[0].length) }
  if (/^[-−]/.test(s)) { negative = !negative; s = s.slice(1).trim() }
  const after = unit === undefined ? CURRENCY_AFTER.exec(s) : null
  if (after) { unit = after[0].trim().toUpperCase(); s = s.slice(0, after.index).trim() }
  if (s.endsWith('%')) { unit = '%'; s = s.slice(0, -1).trim() }
  // In a document whose figures write a decimal comma, `1.500` is 1500 and `1,500` is 1.5.
  const bothWays = /^\d{1,3}[.,]\d{3}$/.test(s)
  // Money with three digits after one dot (`€ 1.500`): thousands in most of Europe, a price to the
  // tenth of a cent in English. Both are read in underwriting files, a thousand times apart: no
  // number, unless the document's own figures say which.
  if (mark === 'point' && unit !== undefined && unit !== '%' && /^\d{1,3}\.\d{3}$/.test(s)) return null
  let digits: string
  if (mark === 'comma' && bothWays) digits = s.includes('.') ? s.replace('.', '') : s.replace(',', '.')
  else if (GROUPED.test(s) || PLAIN.test(s)) digits = s.replaceAll(',', '')
  else if (COMMA_DECIMAL.test(s) || DOT_GROUPS.test(s)) digits = s.replace(/[. \u00a0\u202f]/g, '').replace(',', '.')
  else return null
  if (digits.startsWith('.')) digits = `0${digits}`
  digits = digits.replace(/^0+(?=\d)/, '')
  const zero = /^0(?:\.0+)?$/.test(digits)
  const value = negative && !zero ? `-${digits}` : digits
  return unit !== undefined ? { value, unit: normaliseUnit(unit) } : { value }
}

const normaliseUnit = (u: string) => ({ $: 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY' } as Record<string, string>)[u] ?? u

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']

const monthOf = (name: string): number | null => {
  const n = name.toLowerCase().replace(/\.$/, '')
  if (n.length < 3) return null
  const i = MONTHS.findIndex((m) => m.startsWith(n) && (n.length >= 3))
  return i < 0 ? null : i + 1
}

const iso = (y: number, m: number, d: number): string | null => {
  if (m < 1 || m > 12 || d < 1 || y < 1000 || y > 9999) return null
  const date = new Date(Date.UTC(y, m - 1, d))
  if (date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`
}

/**
 * Reads a calendar date written unambiguously: ISO (2024-01-31, 2024/01/31), "January 31, 2024",
 * "Jan 31 2024" or "31 January 2024". Day-first or month-first numeric forms (01/02/2024) are
 * ambiguous and are not read as dates. Returns "YYYY-MM-DD" or null.
 */
export function parseDate(raw: string): string | null {
  const s = raw.trim().replace(/\s+/g, ' ')
  let m = /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(s)
  if (m) return iso(Number(m[1]), Number(m[2]), Number(m[3]))
  m = /^([A-Za-z]+\.?) (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})$/.exec(s)
  if (m) { const mo = monthOf(m[1]!); return mo ? iso(Number(m[3]), mo, Number(m[2])) : null }
  m = /^(\d{1,2})(?:st|nd|rd|th)? ([A-Za-z]+\.?),? (\d{4})$/.exec(s)
  if (m) { const mo = monthOf(m[2]!); return mo ? iso(Number(m[3]), mo, Number(m[1])) : null }
  return null
}

/** Reads yes/no, true/false, y/n (any case) as a boolean, or null. */
export function parseBoolean(raw: string): boolean | null {
  const s = raw.trim().toLowerCase().replace(/[.!]$/, '')
  if (['yes', 'true', 'y'].includes(s)) return true
  if (['no', 'false', 'n', 'none'].includes(s)) return false
  return null
}

/** A ticked box or chosen radio button, as the document adapters write them (☒ ☑ ◉), and an empty one (☐ ○). */
const TICKED = /^(?:[\u2612\u2611\u25c9]|\[[xX\u2713\u2714]\])$/u
const BOX = /([\u2612\u2611\u25c9\u2610\u25cb]|\[[xX\u2713\u2714 ]\])/u
/** A box typed as text (`[X]`, `[ ]`), as plain-text and scanned forms write one: a row of them only (two or more). */
const TYPED_BOX = /^\[[xX\u2713\u2714 ]\]$/u

/**
 * The option a row of check boxes picks ("☒ Yes ☐ No" is "Yes"; "[X] Yes [ ] No" too; "Yes ☐ No ☒" is "No"; several
 * ticked are joined by ", "), "" when none is ticked, or null when the value holds no box or
 * cannot be read safely: boxes that sit both before and after text, so that which option a box
 * belongs to is unclear.
 */
export function checkedChoice(raw: string): string | null {
  // Every cell and value of a case passes here: most hold no box, and are not split.
  if (!BOX.test(raw)) return null
  const parts = raw.split(BOX) // text, box, text, box, ..., text
  if (parts.length < 3) return null
  // `[x]` alone may be text ("see note [x]"); two or more boxes are a row of options.
  if (parts.length < 5 && TYPED_BOX.test(parts[1]!)) return null
  const first = parts[0]!.trim()
  const last = parts[parts.length - 1]!.trim()
  if ((first === '') === (last === '')) return null
  const chosen: string[] = []
  for (let i = 1; i < parts.length; i += 2) {
    if (!TICKED.test(parts[i]!)) continue
    const option = (first === '' ? parts[i + 1] : parts[i - 1])!.trim()
    if (option !== '') chosen.push(option)
  }
  return chosen.join(', ')
}

/**
 * Types a raw cell or "Label: value" value: a number (optionally followed by one unit word, as in
 * "12 years"), a date, a boolean, else text. A row of check boxes is the option it picks (a row
 * with none ticked, or one that cannot be read safely, stays text).
 */
export function parseValue(raw: string, mark: DecimalMark = 'point'): TypedValue {
  const choice = checkedChoice(raw)
  if (choice) return parseValue(choice, mark)
  const s = raw.trim()
  const date = parseDate(s)
  if (date) return { type: 'date', value: date }
  const n = parseNumber(s, mark)
  if (n) return { type: 'number', ...n }
  const withUnit = /^(.*?\d)\s+([A-Za-z]{1,12})$/.exec(s)
  if (withUnit) {
    const n2 = parseNumber(withUnit[1]!, mark)
    if (n2 && n2.unit === undefined) return { type: 'number', value: n2.value, unit: withUnit[2]!.toLowerCase() }
  }
  const b = parseBoolean(s)
  if (b !== null) return { type: 'boolean', value: b }
  return { type: 'text', value: s }
}

/**
 * Converts a typed value to the value of an answer of `answerType`, or null when it cannot be one
 * (a text fact asked as a number, for example). Text answers take any value's written form.
 */
export function toAnswerValue(v: TypedValue, answerType: AnswerType): AnswerValue {
  switch (answerType) {
    case 'number': return v.type === 'number' ? v.value : null
    case 'date': return v.type === 'date' ? v.value : null
    case 'boolean': return v.type === 'boolean' ? v.value : null
    case 'text': return typeof v.value === 'boolean' ? (v.value ? 'yes' : 'no') : v.value
  }
}

/**
 * Reads a value a model (or any JSON producer) gave for `answerType`: numbers as JSON numbers or
 * decimal strings, dates as ISO or written dates, booleans as JSON booleans or yes/no. Null when
 * the value is not of the type.
 */
export function readAnswerValue(value: unknown, answerType: AnswerType): AnswerValue {
  if (value === null || value === undefined) return null
  switch (answerType) {
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return parseNumber(String(value))?.value ?? null
      return typeof value === 'string' ? parseNumber(value)?.value ?? null : null
    case 'date': return typeof value === 'string' ? parseDate(value) : null
    case 'boolean':
      if (typeof value === 'boolean') return value
      return typeof value === 'string' ? parseBoolean(value) : null
    case 'text':
      if (typeof value === 'string') return value.trim() === '' ? null : value.trim()
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : null
  }
}
