/**
 * The built-in question generator (no network): reads obligations out of guideline text and drafts
 * one question per obligation, citing the guideline block it came from.
 *
 * An obligation is a sentence with a modal of obligation ("must", "shall", "required", "mandatory",
 * "should") or a threshold (a comparison with a number or an amount: "at least USD 1,000,000",
 * "not exceed 80%", "between 1.25 and 10"). Its criticality: minor when softened ("where
 * available", "preferably", "ideally", "optional", "recommended", "may"), critical with "must",
 * "shall", "required" or "mandatory", major otherwise ("should", a bare threshold).
 * Its question: with a threshold, a number question on the measured attribute's fact (`fact_path`
 * = the attribute as snake_case, `accept` = the threshold as a rule over exact decimals); "must not
 * have X" / "there must be no X" a boolean question accepting `value = false` ("must have X":
 * `value = true`); anything else a text question quoting the requirement.
 *
 * The measured attribute of a threshold (`measureOf`) is what the number counts, not who has it:
 *  - "X must be at least N" (X is or is not ...): X ("annual revenue", "loan-to-value ratio");
 *  - "<entity> must have a/an X of at least N", "a minimum X of N", "maximum X of N": X ("DSCR",
 *    "FICO"), asked of the entity ("What is the borrower's DSCR?");
 *  - the quantity's own unit phrase when the number is the object: "at least 3 years in business"
 *    -> `years_in_business`, "How many years has the borrower been in business?"; "no more than 2
 *    late payments in the last 12 months" -> `late_payments`, "How many late payments does the
 *    borrower have in the last 12 months?"; "N months of reserves" -> `months_of_reserves`; "at
 *    least 21 years of age" / "years old" -> `age`; "operating for at least 2 years" ->
 *    `years_operating`. Scale words (million), currencies, "%", "x" and "times" are part of the
 *    amount, never an attribute.
 * The fact path is the attribute alone (`years_in_business`), the label a document states it under;
 * a dotted path would name a document (`<document>.label`), so the entity is only in the question.
 */
import { slug } from '../evaluation/facts'
import { parseNumber } from '../evaluation/values'
import type { Question } from '../evaluation/engine'

/** A guideline block as the generator reads it. */
export interface GenBlock { id: string; guidelineId: string; page: number; text: string }

/** A threshold of an obligation: comparator and exact decimal. */
export interface Threshold { comparator: '>=' | '>' | '<=' | '<' | '='; value: string; unit?: string }

/** A citation of a guideline block: the quoted span of its text. */
export interface Citation { guideline_id: string; block_id: string; page: number; quote: string }

/** A drafted question. */
export type Draft = Question & { thresholds: Threshold[]; citations: Citation[] }

const MODAL = /\b(must|shall|required|requires|mandatory|should)\b/i
const STRONG = /\b(must|shall|required|requires|mandatory)\b/i
const SOFT = /\b(where available|where possible|if available|preferably|ideally|optional(?:ly)?|recommended|may)\b/i

const AMOUNT = String.raw`(?:(?:[$€£¥]|USD|EUR|GBP|CHF|CAD|AUD|JPY)\s?)?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|USD|EUR|GBP|CHF|CAD|AUD|JPY)\b|%)?`

/** Comparison phrases, most specific first: [pattern before the amount, comparator]. */
const PHRASES: [string, Threshold['comparator']][] = [
  ['(?:at least|no less than|not less than|a minimum of|minimum of|min\\.?|not below|or more than)', '>='],
  ['(?:at most|no more than|not more than|a maximum of|maximum of|max\\.?|not (?:to )?exceed|does not exceed|do not exceed|up to)', '<='],
  ['(?:more than|greater than|exceeds?|above|over)', '>'],
  ['(?:less than|fewer than|below|under)', '<'],
  ['(?:equal to|exactly)', '='],
]

/** A threshold found in a sentence. */
export interface FoundThreshold {
  thresholds: Threshold[]
  /** The rule they make (`value >= 3`). */
  accept: string
  /** Offset where the comparison starts, and just after its (last) amount. */
  at: number
  end: number
  /** "minimum X of N" / "maximum X of N": the X the comparison names itself. */
  measure?: string
  /** The words that follow the amount when they are not simply the text after `end` ("2 years or more in business"). */
  after?: string
}

const BETWEEN = new RegExp(String.raw`\bbetween\s+(${AMOUNT})\s+and\s+(${AMOUNT})`, 'i')
const COMPARISONS = PHRASES.map(([phrase, comparator]) => [new RegExp(String.raw`\b${phrase}\s+(?:of\s+)?(${AMOUNT})`, 'i'), comparator] as const)
const NAMED = new RegExp(String.raw`\b(minimum|min\.|maximum|max\.)\s+((?:[A-Za-z][\w'’/-]*\s+){0,4}?[A-Za-z][\w'’/-]*)\s+(?:of|at|is)\s+(${AMOUNT})`, 'i')
const TRAILING = new RegExp(String.raw`(${AMOUNT})(?:\s+([A-Za-z]+))?\s+or\s+(more|greater|higher|less|fewer|lower)\b`, 'i')
/** Cheap pre-checks: a sentence without a digit has no threshold; one without min/max names no measure. */
const DIGIT = /\d/
const MIN_MAX = /\b(?:min|max)/i

/** Thresholds of a sentence, the comparison's span, and the rule they make; null when none. */
export function thresholdsOf(sentence: string): FoundThreshold | null {
  if (!DIGIT.test(sentence)) return null
  const read = (raw: string) => parseNumber(raw.replace(/\s+/g, ' ').trim())
  const between = BETWEEN.exec(sentence)
  if (between) {
    const low = read(between[1]!)
    const high = read(between[2]!)
    if (low && high) {
      return {
        thresholds: [{ comparator: '>=', ...low }, { comparator: '<=', ...high }],
        accept: `value between ${low.value} and ${high.value}`,
        at: between.index,
        end: between.index + between[0].length,
      }
    }
  }
  for (const [pattern, comparator] of COMPARISONS) {
    const m = pattern.exec(sentence)
    const n = m ? read(m[1]!) : null
    if (m && n) return { thresholds: [{ comparator, ...n }], accept: `value ${comparator} ${n.value}`, at: m.index, end: m.index + m[0].length }
  }
  // "a minimum FICO of 680", "maximum LTV of 80%": the comparison names what it measures.
  const named = MIN_MAX.test(sentence) ? NAMED.exec(sentence) : null
  if (named) {
    const n = read(named[3]!)
    const comparator = /^min/i.test(named[1]!) ? '>=' : '<='
    if (n) return { thresholds: [{ comparator, ...n }], accept: `value ${comparator} ${n.value}`, at: named.index, end: named.index + named[0].length, measure: named[2]! }
  }
  const trailing = TRAILING.exec(sentence)
  if (trailing) {
    const n = read(trailing[1]!)
    const comparator = /more|greater|higher/i.test(trailing[3]!) ? '>=' : '<='
    const end = trailing.index + trailing[0].length
    if (n) return { thresholds: [{ comparator, ...n }], accept: `value ${comparator} ${n.value}`, at: trailing.index, end, after: `${trailing[2] ?? ''} ${sentence.slice(end)}` }
  }
  return null
}

/** Sentence spans of a block's text: [start, end) offsets; a line break ends a sentence before a capital or a list mark. */
export function sentenceSpans(text: string): [number, number][] {
  const spans: [number, number][] = []
  let start = 0
  const push = (end: number) => {
    const raw = text.slice(start, end)
    const lead = raw.length - raw.trimStart().length
    const s = start + lead
    const e = start + raw.trimEnd().length
    if (e > s) spans.push([s, e])
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    const next = text.slice(i + 1)
    if ((c === '.' || c === '!' || c === '?' || c === ';') && /^\s+(?=["'(\[]?[A-Z0-9•*-])/.test(next) && !/\b(?:e\.g|i\.e|etc|no|approx|min|max)$/i.test(text.slice(start, i))) {
      push(i + 1)
      start = i + 1
    } else if (c === '\n' && (/[.;:!?]\s*$/.test(text.slice(start, i)) || /^\s*(?:[A-Z0-9•*(-])/.test(next))) {
      push(i)
      start = i + 1
    }
  }
  push(text.length)
  return spans
}

const DROP = new Set(['the', 'a', 'an', 'each', 'every', 'all', 'any', 'its', 'their', 'his', 'her', 'our', 'your', 'this', 'that', 'these', 'those'])
const LEAD_IN = /^(?:[-•*]\s*|\(?[0-9ivx]+[.)]\s+|(?:in addition|additionally|also|furthermore|moreover|finally|however|ideally|preferably|where available|where possible|if available)\s*,?\s+)+/i

/** The subject of an obligation: the noun phrase before its modal or comparison, tidied (at most 6 words). */
export function subjectOf(phrase: string, sentence = phrase): string {
  const words = phrase.replace(LEAD_IN, '').replace(/[,:;"“”()]/g, ' ').split(/\s+/).filter(Boolean)
    .filter((w) => !DROP.has(w.toLowerCase()) && !/['’]s$/i.test(w))
  while (words.length && /^(?:is|are|be|been|will|to|and|or|of|in|for|with)$/i.test(words[words.length - 1]!)) words.pop()
  // Lower case, except acronyms (FICO, DSCR, LTV) in a sentence that is not all capitals.
  const keepAcronyms = /[a-z]/.test(sentence)
  return words.slice(-6).map((w) => (keepAcronyms && /^[A-Z][A-Z0-9&]+$/.test(w) ? w : w.toLowerCase())).join(' ')
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim()

/** Units of time a quantity can be counted in (singular and plural). */
const TIME_UNITS = new Set(['year', 'years', 'yr', 'yrs', 'month', 'months', 'week', 'weeks', 'day', 'days', 'hour', 'hours'])
/** Words after a number that belong to the amount (scale), or make it a ratio, share or currency amount. */
const SCALE = new Set(['thousand', 'million', 'billion', 'trillion', 'k', 'm', 'mm', 'bn'])
const NOT_A_MEASURE = new Set([
  'x', 'times', 'percent', 'per', 'pct', 'bps', 'basis', 'point', 'points', 'dollars', 'dollar', 'euros', 'euro', 'pounds', 'usd', 'eur',
  'gbp', 'chf', 'cad', 'aud', 'jpy', 'the', 'a', 'an', 'its', 'their', 'of',
])
/** Words that end the phrase after a number (a clause, a conjunction, a verb). */
const PHRASE_END = new Set([
  'and', 'or', 'but', 'unless', 'if', 'when', 'where', 'which', 'that', 'who', 'as', 'than', 'is', 'are', 'was', 'were', 'be', 'been',
  'must', 'shall', 'should', 'will', 'may', 'can', 'required', 'to', 'prior', 'including', 'excluding', 'old',
])
/** Prepositions that start the qualifier of a counted noun ("late payments | in the last 12 months"). */
const PREPOSITIONS = new Set(['in', 'of', 'for', 'on', 'within', 'during', 'over', 'under', 'per', 'at', 'from', 'with', 'since', 'before', 'after', 'across', 'away', 'into'])
/** Subjects that name no entity ("There must be no more than 2 ...", "It should ..."). */
const EXPLETIVE = /^(?:there|it|this|they)$/i

/** The phrase after a quantity: its head noun words ("late payments") and the qualifier after them ("in the last 12 months"). */
function unitPhraseAfter(rest: string): { head: string[]; tail: string[] } {
  const words = (/^[^.,;:!?()"“”]*/.exec(rest)?.[0] ?? '').split(/\s+/).filter(Boolean)
  const head: string[] = []
  const tail: string[] = []
  for (const w of words) {
    const lower = w.toLowerCase()
    if (PHRASE_END.has(lower)) break
    if (tail.length || (head.length && PREPOSITIONS.has(lower))) {
      if (tail.length >= 6) break
      tail.push(w)
      continue
    }
    if (!/^[A-Za-z][A-Za-z'’-]*$/.test(w) || head.length >= 3) break
    if (!head.length && SCALE.has(lower)) continue
    if (PREPOSITIONS.has(lower)) break
    head.push(w)
  }
  if (head.some((w) => NOT_A_MEASURE.has(w.toLowerCase()))) return { head: [], tail: [] }
  return { head, tail }
}

/** The entity an obligation is about, as a question names it ("Borrowers" -> "borrower"); '' when none. */
function entityOf(phrase: string): string {
  const subject = subjectOf(phrase)
  if (!subject || EXPLETIVE.test(subject)) return ''
  const words = subject.split(' ')
  const last = words.pop()!
  const one = /ies$/i.test(last) ? last.replace(/ies$/i, 'y') : /[^su]s$/i.test(last) && !/ss$/i.test(last) ? last.slice(0, -1) : last
  return [...words, one].join(' ')
}

/** What a threshold measures: the fact's key, the question, and the unit when it counts time. */
export interface Measure { key: string; question: string; unit?: string }

const ask = (entity: string, attribute: string) => (entity ? `What is the ${entity}'s ${attribute}?` : `What is the ${attribute}?`)

/**
 * The attribute a threshold sentence measures (see the module comment), or null when none can be
 * named. `modal` is the sentence's modal of obligation, if any.
 */
export function measureOf(text: string, threshold: FoundThreshold, modal: RegExpExecArray | null): Measure | null {
  const before = text.slice(0, threshold.at)
  const modalFirst = modal !== null && modal.index < threshold.at
  const entity = modalFirst ? entityOf(text.slice(0, modal.index)) : ''
  const verb = modalFirst ? text.slice(modal.index + modal[0].length, threshold.at) : ''
  const after = threshold.after ?? text.slice(threshold.end)
  const { head, tail } = unitPhraseAfter(after)
  const unit = head.length === 1 && TIME_UNITS.has(head[0]!.toLowerCase()) ? head[0]!.toLowerCase().replace(/^yrs?$/, 'years').replace(/(?<!s)$/, 's') : undefined
  const tailText = tail.join(' ')
  const measured = (attribute: string, question: string): Measure | null => {
    const key = slug(attribute.split(' ').filter((w) => !DROP.has(w)).join(' '))
    return key ? { key, question, ...(unit ? { unit } : {}) } : null
  }

  // "a minimum FICO of 680": the comparison names the attribute.
  if (threshold.measure) {
    const attribute = subjectOf(threshold.measure, text)
    if (attribute) return measured(attribute, ask(entity, attribute))
  }
  // "at least 21 years of age", "18 years old".
  if (unit === 'years' && (/^of age\b/i.test(tailText) || /^\s*\S+\s+old\b/i.test(after))) {
    return measured('age', entity ? `How old is the ${entity}?` : 'What is the age?')
  }
  // "have been operating for at least 2 years", "be in business for at least 3 years".
  const duration = unit ? /^\s*(?:not\s+)?(?:have\s+been|has\s+been|been|be)\s+(.+?)\s+for\s*$/i.exec(verb) : null
  if (duration && unit) {
    const state = collapse(duration[1]!).toLowerCase()
    return measured(`${unit} ${state}`, entity ? `How many ${unit} has the ${entity} been ${state}?` : `How many ${unit} ${state}?`)
  }
  // "must have a DSCR of at least 1.25", "maintain a minimum bank balance of at least 10,000".
  const possession = /^\s*(?:not\s+)?(?:have|has|maintain|show|demonstrate|hold|keep|achieve|report|carry|provide|own)\s+(?!been\b)(.*)$/i.exec(verb)
  const object = possession ? subjectOf(possession[1]!, text) : ''
  if (object) return measured(object, ask(entity, object))
  const entityHasIt = possession !== null
  // The number is the object, or the subject only names who it is about: the quantity's own words.
  // ("There must be no more than 2 late payments": no entity either.)
  const quantityIsObject = entityHasIt || (modalFirst && !entity)
  const timeQualifier = unit !== undefined && /^(?:in|with|at)\b/i.test(tailText)
  if (head.length && (quantityIsObject || timeQualifier)) {
    const noun = head.join(' ').toLowerCase()
    if (timeQualifier) {
      // "3 years in business": how long the entity has been in that state.
      const state = tailText.toLowerCase()
      return measured(`${unit} ${state}`, entity ? `How many ${unit} has the ${entity} been ${state}?` : `How many ${unit} ${state}?`)
    }
    if (unit && /^of\b/i.test(tailText)) {
      // "6 months of reserves", "5 years of experience".
      const counted = `${unit} ${tailText.toLowerCase()}`
      return measured(counted, entity ? `How many ${counted} does the ${entity} have?` : `How many ${counted}?`)
    }
    // "2 late payments in the last 12 months": a count (a singular noun after 0 or 1 is counted too).
    const single = /^(?:0|1)$/.test(threshold.thresholds[threshold.thresholds.length - 1]!.value)
    const plural = /[^s]s$/i.test(noun) ? noun : single ? `${noun}s` : null
    if (plural) {
      const qualifier = tailText ? ` ${tailText}` : ''
      return measured(plural, entity ? `How many ${plural} does the ${entity} have${qualifier}?` : `How many ${plural} are there${qualifier}?`)
    }
    // "at least 680 FICO": a named measure after the number.
    const named = subjectOf(head.join(' '), text)
    return measured(named, ask(entity, named))
  }
  // "The property must be at least 10 miles from the coast": how far (long, many) the entity is.
  const copula = /^\s*(?:not\s+)?be\s*$/i.test(verb)
  if (copula && entity && head.length && tail.length && !/^of\b/i.test(tailText)) {
    const noun = head.join(' ').toLowerCase()
    return measured(`${noun} ${tailText.toLowerCase()}`, `How many ${noun} ${tailText} is the ${entity}?`)
  }
  // "X must be at least N": the subject is what is measured (never when it is who has the quantity).
  if (entityHasIt) return null
  const cut = Math.min(modal?.index ?? Infinity, threshold.at)
  const subject = subjectOf(text.slice(0, cut), text) || subjectOf(before, text)
  if (!subject || EXPLETIVE.test(subject)) return null
  const countable = /^(?:number|count) of (.+)$/i.exec(subject)
  if (countable) return measured(subject, `How many ${countable[1]} are there?`)
  if (/^(?:years|months|weeks|days)\s+(?:in|of|with|at)\b/i.test(subject)) return measured(subject, `How many ${subject}?`)
  return measured(subject, `What is the ${subject}${unit ? ` (in ${unit})` : ''}?`)
}

/** The draft of one obligation sentence, or null when the sentence states none. */
export function draftOf(sentence: string): Omit<Draft, 'citations'> | null {
  const text = collapse(sentence)
  const threshold = thresholdsOf(text)
  const modal = MODAL.exec(text)
  if (!modal && !threshold) return null
  const criticality: Question['criticality'] = SOFT.test(text) ? 'minor' : STRONG.test(text) ? 'critical' : 'major'
  const guidance = `From the guideline: "${text.length > 3900 ? `${text.slice(0, 3897)}...` : text}"`
  const cut = Math.min(modal?.index ?? Infinity, threshold?.at ?? Infinity)
  if (threshold) {
    // Nothing to name as measured: with a modal ("There must be a minimum of 2.") a text question quoting
    // it, below; a bare number phrase ("At least 5.", a cell or a heading) states no obligation.
    const measure = measureOf(text, threshold, modal)
    if (measure) {
      const thresholds = measure.unit ? threshold.thresholds.map((t) => (t.unit ? t : { ...t, unit: measure.unit })) : threshold.thresholds
      return { key: measure.key, text: measure.question, criticality, answer_type: 'number', guidance, fact_path: measure.key, accept: threshold.accept, thresholds }
    }
    if (!modal) return null
  }
  const negative = /\b(?:must|shall|should)\s+not\s+(?:have|had|be subject to|carry)\s+(.+?)[.;!?]?$/i.exec(text)
    ?? /\bthere\s+(?:must|shall|should)\s+be\s+no\s+(.+?)[.;!?]?$/i.exec(text)
  const positive = /\b(?:must|shall|should)\s+(?:have|hold|carry)\s+(.+?)[.;!?]?$/i.exec(text)
  const has = threshold ? null : negative ?? positive
  if (has) {
    const subject = subjectOf(has[1]!.split(/\s+(?:against|for|from|at|in|on|within|during)\s+/i)[0]!)
    const key = slug(subject)
    if (key) {
      return { key, text: `Is there any ${subject}?`, criticality, answer_type: 'boolean', guidance, fact_path: key, accept: negative ? 'value = false' : 'value = true', thresholds: [] }
    }
  }
  const subject = subjectOf(text.slice(0, Number.isFinite(cut) ? cut : text.length)) || (modal ? subjectOf(text.slice(modal.index + modal[0].length)) : '')
  const key = slug(subject) || 'requirement'
  const question = `Is this requirement met: ${text}`
  return { key, text: question.length > 2000 ? `${question.slice(0, 1997)}...` : question, criticality, answer_type: 'text', guidance, thresholds: [] }
}

/** Drafts every obligation of some blocks, in reading order, each citing its block and sentence. */
export function draftFromBlocks(blocks: readonly GenBlock[]): Draft[] {
  const out: Draft[] = []
  for (const b of blocks) {
    for (const [s, e] of sentenceSpans(b.text)) {
      const quote = b.text.slice(s, e)
      const draft = draftOf(quote)
      if (draft) out.push({ ...draft, citations: [{ guideline_id: b.guidelineId, block_id: b.id, page: b.page, quote }] })
    }
  }
  return out
}

/** Makes draft keys unique against `taken` (adds _2, _3, ...); records the keys it hands out. */
export function uniqueKeys<T extends { key: string }>(drafts: T[], taken: Set<string>): T[] {
  return drafts.map((d) => {
    let key = d.key.slice(0, 60)
    for (let n = 2; taken.has(key); n++) key = `${d.key.slice(0, 56)}_${n}`
    taken.add(key)
    return { ...d, key }
  })
}

/** Cuts a guideline's blocks into chunks of at most `maxChars` characters (a block is never split). */
export function chunkBlocks<T extends { text: string }>(blocks: readonly T[], maxChars: number): T[][] {
  const chunks: T[][] = []
  let current: T[] = []
  let size = 0
  for (const b of blocks) {
    if (current.length && size + b.text.length > maxChars) { chunks.push(current); current = []; size = 0 }
    current.push(b)
    size += b.text.length
  }
  if (current.length) chunks.push(current)
  return chunks
}
