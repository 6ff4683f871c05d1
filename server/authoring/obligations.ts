/**
 * The built-in question generator (no network): reads obligations out of guideline text and drafts
 * one question per obligation, citing the guideline block it came from.
 *
 * An obligation is a sentence with a modal of obligation ("must", "shall", "required", "mandatory",
 * "should") or a threshold (a comparison with a number or an amount: "at least USD 1,000,000",
 * "not exceed 80%", "between 1.25 and 10"). Its criticality: minor when softened ("where
 * available", "preferably", "ideally", "optional", "recommended", "may"), critical with "must",
 * "shall", "required" or "mandatory", major otherwise ("should", a bare threshold).
 * Its question: with a threshold, a number question on the subject's fact (`fact_path` = the
 * subject as snake_case, `accept` = the threshold as a rule over exact decimals); "must not have X"
 * / "there must be no X" a boolean question accepting `value = false` ("must have X": `value =
 * true`); anything else a text question quoting the requirement.
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

/** Thresholds of a sentence, the comparison's start offset, and the rule they make; null when none. */
export function thresholdsOf(sentence: string): { thresholds: Threshold[]; accept: string; at: number } | null {
  const read = (raw: string) => parseNumber(raw.replace(/\s+/g, ' ').trim())
  const between = new RegExp(String.raw`\bbetween\s+(${AMOUNT})\s+and\s+(${AMOUNT})`, 'i').exec(sentence)
  if (between) {
    const low = read(between[1]!)
    const high = read(between[2]!)
    if (low && high) {
      return {
        thresholds: [{ comparator: '>=', ...low }, { comparator: '<=', ...high }],
        accept: `value between ${low.value} and ${high.value}`,
        at: between.index,
      }
    }
  }
  for (const [phrase, comparator] of PHRASES) {
    const m = new RegExp(String.raw`\b${phrase}\s+(?:of\s+)?(${AMOUNT})`, 'i').exec(sentence)
    const n = m ? read(m[1]!) : null
    if (m && n) return { thresholds: [{ comparator, ...n }], accept: `value ${comparator} ${n.value}`, at: m.index }
  }
  const trailing = new RegExp(String.raw`(${AMOUNT})(?:\s+[A-Za-z]+)?\s+or\s+(more|greater|higher|less|fewer|lower)\b`, 'i').exec(sentence)
  if (trailing) {
    const n = read(trailing[1]!)
    const comparator = /more|greater|higher/i.test(trailing[2]!) ? '>=' : '<='
    if (n) return { thresholds: [{ comparator, ...n }], accept: `value ${comparator} ${n.value}`, at: trailing.index }
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
export function subjectOf(phrase: string): string {
  const words = phrase.replace(LEAD_IN, '').replace(/[,:;"“”()]/g, ' ').split(/\s+/).filter(Boolean)
    .filter((w) => !DROP.has(w.toLowerCase()) && !/['’]s$/i.test(w))
  while (words.length && /^(?:is|are|be|been|will|to|and|or|of|in|for|with)$/i.test(words[words.length - 1]!)) words.pop()
  return words.slice(-6).join(' ').toLowerCase()
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim()

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
    // "must have a minimum bank balance of at least 10,000": the subject follows the verb.
    const verb = /\b(?:must|shall|should)\s+(?:have|maintain|show|demonstrate|hold|keep|achieve|report)\s+(.+)$/i.exec(text.slice(0, threshold.at))
    const subject = subjectOf(verb ? verb[1]! : text.slice(0, cut)) || subjectOf(text.slice(0, threshold.at))
    const key = slug(subject)
    if (!key) return null
    return { key, text: `What is the ${subject}?`, criticality, answer_type: 'number', guidance, fact_path: key, accept: threshold.accept, thresholds: threshold.thresholds }
  }
  const negative = /\b(?:must|shall|should)\s+not\s+(?:have|had|be subject to|carry)\s+(.+?)[.;!?]?$/i.exec(text)
    ?? /\bthere\s+(?:must|shall|should)\s+be\s+no\s+(.+?)[.;!?]?$/i.exec(text)
  const positive = /\b(?:must|shall|should)\s+(?:have|hold|carry)\s+(.+?)[.;!?]?$/i.exec(text)
  const has = negative ?? positive
  if (has) {
    const subject = subjectOf(has[1]!.split(/\s+(?:against|for|from|at|in|on|within|during)\s+/i)[0]!)
    const key = slug(subject)
    if (key) {
      return { key, text: `Is there any ${subject}?`, criticality, answer_type: 'boolean', guidance, fact_path: key, accept: negative ? 'value = false' : 'value = true', thresholds: [] }
    }
  }
  const subject = subjectOf(text.slice(0, Number.isFinite(cut) ? cut : text.length)) || subjectOf(text.slice(modal!.index + modal![0].length))
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
