/**
 * The types an answer engine and its parts share: the question, an answer with its evidence, the
 * case context an engine reads. Apart from engine.ts so the parts it calls (text-answer.ts) can
 * name them without importing the engine back.
 */
import type { Question } from '../../schemas/question-set'
import type { CaseBlock, FactIndex } from './facts'
import type { BlockIndex } from './retrieval'
import type { CheckResult } from './checks'
import type { AnswerValue, DecimalMark } from './values'

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
  /** Documents that failed an arithmetic check (absent: none known). */
  failedChecks?: FailedChecks
  /** Each document's decimal mark, as its own figures show it (facts.ts decimalMarks; absent: a point). */
  decimalMarks?: ReadonlyMap<string, DecimalMark>
}

/** Options of one answer. */
export interface AnswerOptions { signal?: AbortSignal }

/** An answer engine. */
export interface AnswerEngine {
  readonly name: 'builtin' | 'model'
  answer(question: Question, context: CaseContext, options?: AnswerOptions): Promise<EngineAnswer>
}

/** The checks a document of the case failed (checks.ts), by document id. */
export type FailedChecks = ReadonlyMap<string, { filename: string; checks: readonly CheckResult[] }>
