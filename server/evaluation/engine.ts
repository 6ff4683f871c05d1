/**
 * The answer engine: one interface, two implementations. The built-in engine (here) is
 * deterministic and needs no network: a question with a `fact_path` is answered from the mined fact
 * and judged by its accept rule; any other question gets the best `Label: value` line or sentence
 * of the best retrieved passages with a confidence (text-answer.ts), or `not_found`. The model-backed engine (model-engine.ts) is chosen when
 * SVC_MODEL_URL is set. Every answer carries the evidence it was built from, and nothing else.
 */
import { indexFacts, mineCase, type CaseBlock, type SynonymTable } from './facts'
import { buildBlockIndex } from './retrieval'
import { answerFromText } from './text-answer'
import { acceptAnswer } from './rules'
import { toAnswerValue } from './values'

export type { Question, EvidenceRef, EngineAnswer, CaseContext, AnswerOptions, AnswerEngine, FailedChecks } from './engine-types'
import type { AnswerEngine, EngineAnswer, CaseContext, FailedChecks, Question } from './engine-types'

/** What a case context is built with beside its blocks. */
export interface CaseContextOptions {
  /** Alternative label names (synonyms.ts: the built-in table with the workspace's edits). */
  synonyms?: SynonymTable
  /** The documents that failed an arithmetic check at ingestion. */
  failedChecks?: FailedChecks
}

/** The most confidence an answer drawn from a document failing a check keeps. */
export const FAILED_CHECK_CAP = 0.49

/**
 * Marks an answer whose evidence lies in a document that failed an arithmetic check: its `note`
 * names the check and by how much it is off, and its confidence is at most 0.49. Any engine's
 * answer goes through here; the value and the rule's verdict are left as they are.
 */
export function withCheckNotes(answer: EngineAnswer, context: Pick<CaseContext, 'failedChecks'>): EngineAnswer {
  if (!context.failedChecks?.size || answer.status !== 'answered') return answer
  const notes: string[] = []
  for (const documentId of new Set(answer.evidence.map((e) => e.documentId))) {
    const failed = context.failedChecks.get(documentId)
    for (const c of failed?.checks ?? []) notes.push(`${failed!.filename} fails its ${c.name} check (${c.rule}): ${c.detail}`)
  }
  if (notes.length === 0) return answer
  // Idempotent: an answer already marked (the built-in engine marks its own) is not marked twice.
  const fresh = notes.filter((n) => !answer.note?.includes(n))
  return { ...answer, confidence: Math.min(answer.confidence, FAILED_CHECK_CAP), ...(fresh.length ? { note: [answer.note, ...fresh].filter(Boolean).join('; ') } : {}) }
}

/** Builds the context of a case from its blocks, in case order (documents by upload, then position). */
export function buildCaseContext(blocks: readonly CaseBlock[], options: CaseContextOptions = {}): CaseContext {
  const { facts, tables, marks } = mineCase(blocks)
  return {
    blocks,
    decimalMarks: marks,
    byId: new Map(blocks.map((b) => [b.id, b])),
    facts: indexFacts(blocks, facts, { tables, marks, ...(options.synonyms ? { synonyms: options.synonyms } : {}) }),
    index: buildBlockIndex(blocks),
    ...(options.failedChecks ? { failedChecks: options.failedChecks } : {}),
  }
}


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
    return withCheckNotes(judge(question, question.fact_path ? fromFact(question, context) : answerFromText(question, context)), context)
  },
}

function fromFact(question: Question, context: CaseContext): EngineAnswer {
  const path = question.fact_path!
  const found = context.facts.resolve(path)
  const base = { questionKey: question.key, source: 'fact' as const, downgraded: false }
  if (!found) return { ...base, status: 'not_found', value: null, confidence: 0, evidence: [], note: `no fact ${path} in the documents` }
  const { fact, note } = found
  const evidence = [{ documentId: fact.documentId, blockId: fact.blockId, page: fact.page, quote: fact.quote }]
  const value = toAnswerValue(fact.value, question.answer_type)
  if (value === null) {
    return { ...base, status: 'not_found', value: null, confidence: 0, evidence, note: `fact ${path} is not a ${question.answer_type}` }
  }
  return { ...base, status: 'answered', value, confidence: 1, evidence, ...(note ? { note } : {}) }
}
