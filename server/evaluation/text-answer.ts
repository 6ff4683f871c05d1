/**
 * Text answers of the built-in engine (questions without a `fact_path`), with a confidence that says
 * how well the cited text answers the question. The case's best blocks (BM25+) are cut into
 * candidates: every `Label: value` line (the answer is the value, the quote is the line) and every
 * other sentence (the answer and the quote are the sentence). Each candidate is measured against the
 * question's terms, each term weighted by how specific it is in this case (its idf: "purpose" in a
 * loan file weighs far more than "loan"):
 *
 *   coverage   share of the question's term weight the quoted line holds
 *   recall     share of the question's term weight the line's label holds (label lines only)
 *   precision  share of the label's words that are question terms (label lines only)
 *   margin     how far the best candidate is ahead of the best one with another answer (0..1)
 *
 *   label line:  confidence = 0.50 recall + 0.20 precision + 0.15 coverage + 0.15 margin
 *   sentence:    confidence = 0.60 coverage + 0.20 margin                 (at most 0.80)
 *
 * The answer is `not_found` when no candidate holds half of the question's term weight, and its
 * confidence is at most 0.45 when the cited line lacks the question's most specific term (the key
 * term). Words naming a party ("applicant", "borrower", ...) weigh a quarter: documents name the
 * party. docs/evaluation.md says what a reader should do at which confidence.
 */
import type { CaseBlock } from './facts'
import { labelValue } from './facts'
import { tokenize, indexTerm } from './retrieval'
import { parseValue, toAnswerValue } from './values'
import type { CaseContext, EngineAnswer, Question } from './engine-types'

/** Blocks (best BM25+ first) whose lines are candidates. */
export const CANDIDATE_BLOCKS = 8
/** Below this coverage of the question's term weight, the answer is `not_found`. */
export const MIN_TEXT_COVERAGE = 0.5
/** The most an answer whose quote lacks the question's key term may have. */
export const MISSING_KEY_TERM_CAP = 0.45
/** The longest quote. */
export const MAX_QUOTE_CHARS = 500

// Words of how questions are asked that say nothing of what is asked (stemmed, as terms are).
const QUESTION_WORDS = new Set(['many', 'much', 'show', 'shown', 'list', 'listed', 'stated', 'mention', 'mentioned', 'document', 'file', 'according', 'given', 'record', 'recorded', 'long'])

// Words that name a party of the case, which documents name by its name instead ("against Acme
// Holdings LLC" answers "against the applicant"): they count a quarter of their weight.
const PARTY_WORDS = new Set(['applicant', 'borrower', 'company', 'business', 'insured', 'firm', 'client', 'customer'])
/** The share of its weight a party word keeps. */
export const PARTY_WEIGHT = 0.25

interface Candidate {
  block: CaseBlock
  quote: string
  value: string
  label: boolean
  coverage: number
  recall: number
  precision: number
  hasKey: boolean
  score: number
}

const round2 = (n: number) => Math.round(n * 100) / 100
const termsOf = (text: string) => new Set(tokenize(text).map(indexTerm).filter((t): t is string => t !== null))
const holds = (set: Set<string>, term: string) => {
  if (set.has(term)) return true
  if (term.length < 5) return false
  for (const t of set) if (t.length >= 5 && (t.startsWith(term) || term.startsWith(t))) return true
  return false
}
const sentencesOf = (line: string) => line.split(/(?<=[.!?;])\s+(?=[A-Z0-9"'(])/).map((s) => s.trim()).filter((s) => s.length > 0)
const clip = (s: string) => (s.length > MAX_QUOTE_CHARS ? s.slice(0, MAX_QUOTE_CHARS) : s)

/** A line of a block read once: its terms, its label and value if it is a `Label: value` line, its sentences. */
interface Line { text: string; terms: Set<string>; label?: { terms: Set<string>; value: string }; sentences: { text: string; terms: Set<string> }[] }

// Lines are read once per block object and kept while the case context lives (50 questions reread the same blocks).
const linesCache = new WeakMap<CaseBlock, Line[]>()
function linesOf(block: CaseBlock): Line[] {
  let lines = linesCache.get(block)
  if (lines) return lines
  lines = []
  for (const raw of block.text.split('\n')) {
    const text = raw.trim()
    if (!text) continue
    const lv = labelValue(text)
    const sentences = sentencesOf(text)
    lines.push({
      text, terms: termsOf(text),
      ...(lv ? { label: { terms: termsOf(lv.label), value: lv.value.trim() } } : {}),
      sentences: sentences.length === 1 && sentences[0] === text ? [{ text, terms: termsOf(text) }] : sentences.map((t) => ({ text: t, terms: termsOf(t) })),
    })
  }
  linesCache.set(block, lines)
  return lines
}

/** The question's terms that carry meaning, with their weights in this case. */
export function questionTerms(question: Pick<Question, 'text'>, context: Pick<CaseContext, 'index'>): { term: string; weight: number }[] {
  return context.index.terms(question.text).filter((t) => !QUESTION_WORDS.has(t)).map((term) => ({ term, weight: context.index.idf(term) * (PARTY_WORDS.has(term) ? PARTY_WEIGHT : 1) }))
}

/** Answers a text question from the case's lines and sentences (see the file comment). */
export function answerFromText(question: Question, context: CaseContext): EngineAnswer {
  const base = { questionKey: question.key, source: 'retrieval' as const, downgraded: false }
  const none = (note: string): EngineAnswer => ({ ...base, status: 'not_found', value: null, confidence: 0, evidence: [], note })
  const terms = questionTerms(question, context)
  if (terms.length === 0) return none('the question has no searchable term')
  const total = terms.reduce((s, t) => s + t.weight, 0)
  const key = terms.reduce((a, b) => (b.weight > a.weight ? b : a))
  const share = (set: Set<string>) => terms.reduce((s, t) => s + (holds(set, t.term) ? t.weight : 0), 0) / total

  const candidates: Candidate[] = []
  for (const hit of context.index.search(question.text, CANDIDATE_BLOCKS)) {
    for (const line of linesOf(hit.block)) {
      const coverage = share(line.terms)
      if (coverage === 0) continue
      if (line.label) {
        const recall = share(line.label.terms)
        if (recall > 0) {
          const labelTerms = [...line.label.terms]
          const precision = labelTerms.length ? labelTerms.filter((t) => terms.some((q) => holds(new Set([t]), q.term))).length / labelTerms.length : 0
          candidates.push({ block: hit.block, quote: clip(line.text), value: line.label.value, label: true, coverage, recall, precision, hasKey: holds(line.terms, key.term), score: 0.5 * recall + 0.2 * precision + 0.3 * coverage })
          continue
        }
      }
      for (const sentence of line.sentences) {
        const c = share(sentence.terms)
        if (c > 0) candidates.push({ block: hit.block, quote: clip(sentence.text), value: sentence.text, label: false, coverage: c, recall: 0, precision: 0, hasKey: holds(sentence.terms, key.term), score: 0.85 * c })
      }
    }
  }
  if (candidates.length === 0) return none('no passage holds the question\'s terms')
  candidates.sort((a, b) => b.score - a.score || a.block.order - b.block.order)
  const best = candidates[0]!
  if (best.coverage < MIN_TEXT_COVERAGE) return none(`no passage holds half of the question's terms (the best holds ${Math.round(best.coverage * 100)}%)`)
  const norm = (v: string) => v.toLowerCase().replace(/\s+/g, ' ')
  const second = candidates.find((c) => norm(c.value) !== norm(best.value))
  const margin = second ? Math.max(0, Math.min(1, (best.score - second.score) / best.score)) : 1
  let confidence = best.label
    ? 0.5 * best.recall + 0.2 * best.precision + 0.15 * best.coverage + 0.15 * margin
    : 0.6 * best.coverage + 0.2 * margin
  let note: string | undefined
  if (!best.hasKey) {
    confidence = Math.min(confidence, MISSING_KEY_TERM_CAP)
    note = `the cited text does not hold the question's key term "${key.term}"`
  }
  const typed = question.answer_type === 'text' ? best.value : toAnswerValue(parseValue(best.value, context.decimalMarks?.get(best.block.documentId)), question.answer_type)
  return {
    ...base,
    status: 'answered',
    value: typed ?? best.value,
    confidence: round2(Math.min(1, confidence)),
    evidence: [{ documentId: best.block.documentId, blockId: best.block.id, page: best.block.page, quote: best.quote }],
    ...(note ? { note } : {}),
  }
}
