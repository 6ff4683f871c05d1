/**
 * The answer engine: one interface, two implementations. The built-in engine (here) is
 * deterministic and needs no network: a question with a `fact_path` is answered from the mined fact
 * and judged by its accept rule; any other question gets the best retrieved passage as a text
 * answer with a confidence, or `not_found`. The model-backed engine (model-engine.ts) is chosen when
 * SVC_MODEL_URL is set. Every answer carries the evidence it was built from, and nothing else.
 */
import { indexFacts, mineFacts, type CaseBlock, type FactIndex } from './facts'
import { buildBlockIndex, type BlockIndex, type Hit } from './retrieval'
import { acceptAnswer } from './rules'
import { toAnswerValue, type AnswerType, type AnswerValue } from './values'
import type { Question } from '../../schemas/question-set'

/** A question of a question-set version (its shape is the schema's). */
export type { Question }

/** A cited span: a block of a document of the case and a quote that its text contains. */
export interface EvidenceRef { documentId: string; blockId: string; page: number; quote: string }

/** An engine's answer to one question. */
export interface EngineAnswer {
  questionKey: string
  status: 'answered' | 'not_found'
  value: AnswerValue
  /** 0..1, two decimals. */
  confidence: number
  evidence: EvidenceRef[]
  /** The accept rule's verdict (absent: no rule, or the rule cannot judge a missing value). */
  accepted?: boolean
  /** How the answer was made: a mined fact, retrieved passages, or the model. */
  source: 'fact' | 'retrieval' | 'model'
  /** True when a model answer was lowered because of its citations or its value. */
  downgraded: boolean
  /** Why the answer is what it is, when that is not obvious (never document content beyond quotes). */
  note?: string
  /** Tokens of the model call behind the answer, as the endpoint reported them (metered; model engine only). */
  usage?: { inputTokens: number; outputTokens: number }
}

/** What an engine reads of one case: its blocks, their facts and their retrieval index. */
export interface CaseContext {
  blocks: readonly CaseBlock[]
  byId: ReadonlyMap<string, CaseBlock>
  facts: FactIndex
  index: BlockIndex
}

/** Options of one answer. */
export interface AnswerOptions { signal?: AbortSignal }

/** An answer engine. */
export interface AnswerEngine {
  readonly name: 'builtin' | 'model'
  answer(question: Question, context: CaseContext, options?: AnswerOptions): Promise<EngineAnswer>
}

/** Builds the context of a case from its blocks, in case order (documents by upload, then position). */
export function buildCaseContext(blocks: readonly CaseBlock[]): CaseContext {
  return {
    blocks,
    byId: new Map(blocks.map((b) => [b.id, b])),
    facts: indexFacts(blocks, mineFacts(blocks)),
    index: buildBlockIndex(blocks),
  }
}

/** The shortest passage shown as a quote: the block line that matches most query terms. */
export const MAX_QUOTE_CHARS = 500

/** The line of a hit's block matching most of its matched terms (a span of the block's text). */
export function bestLine(hit: Pick<Hit, 'block' | 'matched'>): string {
  const lines = hit.block.text.split('\n').map((l) => l.trim()).filter(Boolean)
  let best = lines[0] ?? hit.block.text
  let bestScore = -1
  for (const line of lines) {
    const lower = line.toLowerCase()
    const score = hit.matched.filter((t) => lower.includes(t)).length
    if (score > bestScore) { best = line; bestScore = score }
  }
  return best.length > MAX_QUOTE_CHARS ? best.slice(0, MAX_QUOTE_CHARS) : best
}

/** Passages whose coverage of the question's terms is at least this are evidence. */
export const MIN_COVERAGE = 0.5
/** Passages cited by a text answer. */
export const MAX_PASSAGES = 3

const round2 = (n: number) => Math.round(n * 100) / 100

/**
 * Applies a question's accept rule to an answer (sets `accepted`); answers without a rule are
 * returned as they are.
 */
export function judge(question: Question, answer: EngineAnswer): EngineAnswer {
  if (!question.accept) return answer
  const value = answer.status === 'answered' && answer.source !== 'retrieval' ? answer.value : null
  const accepted = acceptAnswer(question.accept, value, question.answer_type)
  const { accepted: _, ...rest } = answer
  return accepted === undefined ? rest : { ...rest, accepted }
}

/** The built-in, deterministic engine. */
export const builtinEngine: AnswerEngine = {
  name: 'builtin',
  async answer(question, context) {
    return judge(question, question.fact_path ? fromFact(question, context) : fromPassages(question, context))
  },
}

function fromFact(question: Question, context: CaseContext): EngineAnswer {
  const path = question.fact_path!
  const fact = context.facts.lookup(path)
  const base = { questionKey: question.key, source: 'fact' as const, downgraded: false }
  if (!fact) return { ...base, status: 'not_found', value: null, confidence: 0, evidence: [], note: `no fact ${path} in the documents` }
  const evidence = [{ documentId: fact.documentId, blockId: fact.blockId, page: fact.page, quote: fact.quote }]
  const value = toAnswerValue(fact.value, question.answer_type)
  if (value === null) {
    return { ...base, status: 'not_found', value: null, confidence: 0, evidence, note: `fact ${path} is not a ${question.answer_type}` }
  }
  return { ...base, status: 'answered', value, confidence: 1, evidence }
}

function fromPassages(question: Question, context: CaseContext): EngineAnswer {
  const hits = context.index.search(question.text, MAX_PASSAGES * 2).filter((h) => h.coverage >= MIN_COVERAGE).slice(0, MAX_PASSAGES)
  const base = { questionKey: question.key, source: 'retrieval' as const, downgraded: false }
  if (hits.length === 0) return { ...base, status: 'not_found', value: null, confidence: 0, evidence: [], note: 'no passage matches the question' }
  const evidence = hits.map((h) => ({ documentId: h.block.documentId, blockId: h.block.id, page: h.block.page, quote: bestLine(h) }))
  return { ...base, status: 'answered', value: evidence[0]!.quote, confidence: round2(0.9 * hits[0]!.coverage), evidence }
}
