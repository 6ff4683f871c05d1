/**
 * Accept rules: the small declarative expression a question states over its answer's value, checked
 * when a question-set version is created (syntax and type against the question's answer_type) and
 * evaluated against each answer. The language, case-insensitive keywords:
 *
 *   rule       := or
 *   or         := and ("or" and)*
 *   and        := not ("and" not)*
 *   not        := "not" not | "(" rule ")" | "present" | "absent" | test
 *   test       := "value" ( op literal
 *                         | "between" literal "and" literal      (inclusive)
 *                         | "in" "[" literal ("," literal)* "]"   (one-of)
 *                         | "contains" string )                   (text only, case-insensitive)
 *   op         := "=" | "==" | "!=" | "<" | "<=" | ">" | ">="
 *   literal    := number (-12.50) | date (2024-01-31) | string ('x' or "x") | true | false
 *
 * Examples: `value >= 1000000`, `value between 0 and 0.35`, `value = false`,
 * `value in ['LLC', 'Corporation']`, `present`, `absent or value < 3`.
 * Numbers compare exactly as decimals (big.js), dates as ISO dates, text case-insensitively.
 * A rule without "present"/"absent" says nothing about a value that was not found.
 */
import Big from 'big.js'
import type { AnswerType, AnswerValue } from './values'
import { parseDate } from './values'

/** A literal of a rule. */
export type Literal =
  | { type: 'number'; value: string }
  | { type: 'date'; value: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'text'; value: string }

/** A comparison operator. */
export type Comparator = '=' | '!=' | '<' | '<=' | '>' | '>='

/** A parsed rule. */
export type Rule =
  | { op: 'and' | 'or'; args: Rule[] }
  | { op: 'not'; arg: Rule }
  | { op: 'present' }
  | { op: 'absent' }
  | { op: 'compare'; comparator: Comparator; literal: Literal }
  | { op: 'between'; low: Literal; high: Literal }
  | { op: 'in'; literals: Literal[] }
  | { op: 'contains'; literal: Literal }

/** Why a rule was refused, with the 1-based column where the problem is. */
export class RuleError extends Error {
  constructor(message: string, readonly column: number) { super(`${message} (at column ${column})`) }
}

/** The longest rule accepted. */
export const MAX_RULE_LENGTH = 500

interface Token { kind: 'word' | 'number' | 'date' | 'string' | 'punct'; text: string; column: number }

const TOKEN = /\s*(?:(\d{4}-\d{2}-\d{2})(?![\d.])|(-?\d+(?:\.\d+)?)(?![\d.])|'([^']*)'|"([^"]*)"|([A-Za-z_]+)|(<=|>=|!=|==|[=<>()[\],]))/y

function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  TOKEN.lastIndex = 0
  let at = 0
  while (at < source.length) {
    if (/^\s*$/.test(source.slice(at))) break
    TOKEN.lastIndex = at
    const m = TOKEN.exec(source)
    if (!m) {
      const column = at + (source.slice(at).length - source.slice(at).trimStart().length) + 1
      throw new RuleError(`unexpected character "${source.slice(column - 1, column)}"`, column)
    }
    const column = m.index + m[0].length - m[0].trimStart().length + 1
    if (m[1] !== undefined) tokens.push({ kind: 'date', text: m[1], column })
    else if (m[2] !== undefined) tokens.push({ kind: 'number', text: m[2], column })
    else if (m[3] !== undefined || m[4] !== undefined) tokens.push({ kind: 'string', text: m[3] ?? m[4]!, column })
    else if (m[5] !== undefined) tokens.push({ kind: 'word', text: m[5].toLowerCase(), column })
    else tokens.push({ kind: 'punct', text: m[6]!, column })
    at = TOKEN.lastIndex
  }
  return tokens
}

/** Parses a rule's text into its tree; throws RuleError naming the column of the first problem. */
export function parseRule(source: string): Rule {
  if (source.length > MAX_RULE_LENGTH) throw new RuleError(`a rule has at most ${MAX_RULE_LENGTH} characters`, MAX_RULE_LENGTH + 1)
  const tokens = tokenize(source)
  let i = 0
  const end = source.length + 1
  const peek = () => tokens[i]
  const columnHere = () => peek()?.column ?? end
  const isWord = (w: string) => peek()?.kind === 'word' && peek()!.text === w
  const isPunct = (p: string) => peek()?.kind === 'punct' && peek()!.text === p
  const expect = (what: string, ok: boolean) => {
    if (!ok) throw new RuleError(peek() ? `expected ${what}, found "${peek()!.text}"` : `expected ${what} at the end`, columnHere())
    return tokens[i++]!
  }

  const literal = (): Literal => {
    const t = peek()
    if (!t) throw new RuleError('expected a value at the end', end)
    i++
    if (t.kind === 'number') return { type: 'number', value: t.text }
    if (t.kind === 'date') {
      const d = parseDate(t.text)
      if (!d) throw new RuleError(`"${t.text}" is not a calendar date`, t.column)
      return { type: 'date', value: d }
    }
    if (t.kind === 'string') return { type: 'text', value: t.text }
    if (t.kind === 'word' && (t.text === 'true' || t.text === 'false')) return { type: 'boolean', value: t.text === 'true' }
    throw new RuleError(`expected a value (number, date, 'text', true or false), found "${t.text}"`, t.column)
  }

  const test = (): Rule => {
    expect('"value", "present", "absent", "not" or "("', isWord('value'))
    const t = peek()
    if (t?.kind === 'punct' && ['=', '==', '!=', '<', '<=', '>', '>='].includes(t.text)) {
      i++
      return { op: 'compare', comparator: (t.text === '==' ? '=' : t.text) as Comparator, literal: literal() }
    }
    if (isWord('between')) {
      i++
      const low = literal()
      expect('"and"', isWord('and'))
      return { op: 'between', low, high: literal() }
    }
    if (isWord('in')) {
      i++
      expect('"["', isPunct('['))
      const literals = [literal()]
      while (isPunct(',')) { i++; literals.push(literal()) }
      expect('"]"', isPunct(']'))
      return { op: 'in', literals }
    }
    if (isWord('contains')) {
      i++
      return { op: 'contains', literal: literal() }
    }
    throw new RuleError(t ? `expected a comparison, "between", "in" or "contains" after "value", found "${t.text}"` : 'expected a comparison after "value"', columnHere())
  }

  const not = (): Rule => {
    if (isWord('not')) { i++; return { op: 'not', arg: not() } }
    if (isPunct('(')) { i++; const r = or(); expect('")"', isPunct(')')); return r }
    if (isWord('present')) { i++; return { op: 'present' } }
    if (isWord('absent')) { i++; return { op: 'absent' } }
    return test()
  }
  const and = (): Rule => {
    const args = [not()]
    while (isWord('and')) { i++; args.push(not()) }
    return args.length === 1 ? args[0]! : { op: 'and', args }
  }
  const or = (): Rule => {
    const args = [and()]
    while (isWord('or')) { i++; args.push(and()) }
    return args.length === 1 ? args[0]! : { op: 'or', args }
  }

  if (tokens.length === 0) throw new RuleError('a rule must not be empty', 1)
  const rule = or()
  if (i < tokens.length) throw new RuleError(`unexpected "${tokens[i]!.text}"`, tokens[i]!.column)
  return rule
}

const ORDERED: Record<AnswerType, boolean> = { number: true, date: true, boolean: false, text: false }

/** Checks that every literal and operator of a rule fits `answerType`; returns the problems found. */
export function typeProblems(rule: Rule, answerType: AnswerType): string[] {
  const out: string[] = []
  const lit = (l: Literal) => {
    if (answerType === 'date' && l.type === 'text' && parseDate(l.value)) return
    if (l.type !== answerType) out.push(`${l.type} literal ${JSON.stringify(l.value)} cannot be compared with a ${answerType} answer`)
  }
  const walk = (r: Rule) => {
    switch (r.op) {
      case 'and': case 'or': r.args.forEach(walk); break
      case 'not': walk(r.arg); break
      case 'present': case 'absent': break
      case 'compare':
        if (!ORDERED[answerType] && !['=', '!='].includes(r.comparator)) out.push(`"${r.comparator}" does not apply to a ${answerType} answer (use = or !=)`)
        lit(r.literal)
        break
      case 'between':
        if (!ORDERED[answerType]) out.push(`"between" does not apply to a ${answerType} answer`)
        lit(r.low); lit(r.high)
        break
      case 'in': r.literals.forEach(lit); break
      case 'contains':
        if (answerType !== 'text') out.push(`"contains" applies to text answers only`)
        if (r.literal.type !== 'text') out.push(`"contains" takes a 'text' literal`)
        break
    }
  }
  walk(rule)
  return out
}

/**
 * Validates a rule for a question: parses it and type-checks it against the answer type. Returns
 * null when valid, else one message (what is wrong and where).
 */
export function ruleProblem(source: string, answerType: AnswerType): string | null {
  try {
    const problems = typeProblems(parseRule(source), answerType)
    return problems.length ? problems[0]! : null
  } catch (e) {
    if (e instanceof RuleError) return e.message
    throw e
  }
}

/** True when the rule mentions "present" or "absent", i.e. it judges a value that was not found. */
export function judgesAbsence(rule: Rule): boolean {
  switch (rule.op) {
    case 'and': case 'or': return rule.args.some(judgesAbsence)
    case 'not': return judgesAbsence(rule.arg)
    case 'present': case 'absent': return true
    default: return false
  }
}

const literalValue = (l: Literal, answerType: AnswerType): string | boolean =>
  answerType === 'date' && l.type === 'text' ? parseDate(l.value)! : l.value

function compare(value: string | boolean, literal: string | boolean, answerType: AnswerType): number {
  if (answerType === 'number') return new Big(value as string).cmp(new Big(literal as string))
  if (answerType === 'text') {
    const a = String(value).trim().toLowerCase()
    const b = String(literal).trim().toLowerCase()
    return a === b ? 0 : a < b ? -1 : 1
  }
  if (answerType === 'boolean') return value === literal ? 0 : 1
  return value === literal ? 0 : (value as string) < (literal as string) ? -1 : 1
}

/**
 * Evaluates a (type-checked) rule against an answer value; null means "not found": it satisfies
 * "absent" and nothing else.
 */
export function evaluateRule(rule: Rule, value: AnswerValue, answerType: AnswerType): boolean {
  switch (rule.op) {
    case 'and': return rule.args.every((r) => evaluateRule(r, value, answerType))
    case 'or': return rule.args.some((r) => evaluateRule(r, value, answerType))
    case 'not': return !evaluateRule(rule.arg, value, answerType)
    case 'present': return value !== null
    case 'absent': return value === null
    default: break
  }
  if (value === null) return false
  switch (rule.op) {
    case 'compare': {
      const c = compare(value, literalValue(rule.literal, answerType), answerType)
      switch (rule.comparator) {
        case '=': return c === 0
        case '!=': return c !== 0
        case '<': return c < 0
        case '<=': return c <= 0
        case '>': return c > 0
        case '>=': return c >= 0
      }
      return false
    }
    case 'between':
      return compare(value, literalValue(rule.low, answerType), answerType) >= 0 && compare(value, literalValue(rule.high, answerType), answerType) <= 0
    case 'in': return rule.literals.some((l) => compare(value, literalValue(l, answerType), answerType) === 0)
    case 'contains': return String(value).toLowerCase().includes(String(rule.literal.value).toLowerCase())
  }
}

/**
 * Judges an answer by a rule's text: true or false, or undefined when the value was not found and
 * the rule does not speak about absence. The rule must already be valid for the answer type.
 */
export function acceptAnswer(source: string, value: AnswerValue, answerType: AnswerType): boolean | undefined {
  const rule = parseRule(source)
  if (value === null && !judgesAbsence(rule)) return undefined
  return evaluateRule(rule, value, answerType)
}
