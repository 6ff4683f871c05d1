/**
 * The fact language of a question's `fact_path`: which mined fact answers it. The grammar:
 *
 *   fact_path    := alternative ("|" alternative)*         at most 10 alternatives, tried in order
 *   alternative  := name ("." name)* row?
 *   row          := "[" name "=" cell "]"                  the row whose `name` column holds `cell`
 *   name         := [a-z0-9_]+
 *   cell         := any characters but "]" (or quoted: '...' / "..."), not empty
 *
 * Examples: `annual_revenue`, `bank_statement.balance.min` (a document's column), `annual_revenue|
 * gross_revenue|total_sales` (the first that is in the documents answers), `loss_run.claims
 * [policy_year=2024]` (the `claims` cell of the loss run's row whose `policy_year` is 2024; the row
 * key matches as text, case-insensitively, or as the same number or date). A leading name may be
 * a document's type (`bank_statement`, see document-types.ts) or its file name without extension.
 */

/** One alternative of a fact path. */
export interface FactPathAlternative {
  /** The dotted path (for a row: the namespace, if any, then the column asked). */
  path: string
  /** The row selector: the key column and the cell it must hold. */
  row?: { column: string; value: string }
}

/** Why a fact path was refused, with the 1-based column where the problem is. */
export class FactPathError extends Error {
  constructor(message: string, readonly column: number) { super(`${message} (at column ${column})`) }
}

/** The most alternatives a fact path may list. */
export const MAX_ALTERNATIVES = 10

const NAME = /^[a-z0-9_]+$/

/** Parses a fact path; throws FactPathError naming the column of the first problem. */
export function parseFactPath(source: string): FactPathAlternative[] {
  const out: FactPathAlternative[] = []
  let at = 0
  while (at <= source.length) {
    // An alternative ends at a "|" outside brackets.
    let end = at
    let inRow = false
    while (end < source.length && (inRow || source[end] !== '|')) {
      if (source[end] === '[') inRow = true
      else if (source[end] === ']') inRow = false
      end++
    }
    out.push(alternative(source.slice(at, end), at + 1))
    if (out.length > MAX_ALTERNATIVES) throw new FactPathError(`a fact path lists at most ${MAX_ALTERNATIVES} alternatives`, at + 1)
    at = end + 1
    if (end >= source.length) break
  }
  return out
}

function alternative(text: string, column: number): FactPathAlternative {
  if (text === '') throw new FactPathError('expected a fact name', column)
  const open = text.indexOf('[')
  const path = open < 0 ? text : text.slice(0, open)
  const segments = path.split('.')
  let offset = column
  for (const s of segments) {
    if (!NAME.test(s)) throw new FactPathError(s === '' ? 'expected a name (a-z, 0-9, _) between dots' : `"${s}" is not a name (lower-case a-z, 0-9 and _)`, offset)
    offset += s.length + 1
  }
  if (open < 0) return { path }
  const close = text.lastIndexOf(']')
  if (close !== text.length - 1) throw new FactPathError('a row selector ends the alternative with "]"', column + (close < 0 ? text.length : close + 1))
  const inner = text.slice(open + 1, close)
  const eq = inner.indexOf('=')
  if (eq < 0) throw new FactPathError('a row selector is [column=value]', column + open + 1)
  const key = inner.slice(0, eq).trim()
  if (!NAME.test(key)) throw new FactPathError(`"${key}" is not a column name (lower-case a-z, 0-9 and _)`, column + open + 1)
  let value = inner.slice(eq + 1).trim()
  if (/^(['"]).*\1$/.test(value) && value.length >= 2) value = value.slice(1, -1)
  if (value === '') throw new FactPathError('a row selector needs a value after "="', column + open + eq + 2)
  return { path, row: { column: key, value } }
}

/** Null when the fact path is valid, else one message (what is wrong and where). */
export function factPathProblem(source: string): string | null {
  try {
    parseFactPath(source)
    return null
  } catch (e) {
    if (e instanceof FactPathError) return e.message
    throw e
  }
}
