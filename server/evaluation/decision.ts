/**
 * The decision of an evaluation, computed from its answers and each question's criticality:
 *  - a critical question whose answer fails its accept rule        -> decline
 *  - a critical question not found (and not judged by its rule),
 *    or a major question whose answer fails its accept rule        -> refer
 *  - otherwise                                                      -> approve
 * `reasons` names every question that moved the outcome away from approve, worst first, then in
 * question order. Minor questions never change the outcome.
 */

import type { Static } from '@sinclair/typebox'
import { CRITICALITIES, type Criticality as CriticalitySchema } from '../../schemas/question-set'
import { OUTCOMES, type DecisionOutcome } from '../../schemas/evaluation'
import type { AnswerValue } from './values'

export { CRITICALITIES, OUTCOMES }
/** The three outcomes. */
export type Outcome = Static<typeof DecisionOutcome>
/** The question criticalities. */
export type Criticality = Static<typeof CriticalitySchema>

/** What the decision reads of one answer. */
export interface JudgedAnswer {
  questionKey: string
  criticality: Criticality
  status: 'answered' | 'not_found'
  /** The accept rule's verdict; undefined when the question has no rule or the rule could not judge. */
  accepted?: boolean
  /** The value found (for the reason's message and `value`). */
  value?: AnswerValue
  /** The accept rule (for the reason's message and `rule`). */
  rule?: string
}

/** One reason of a decision. */
export interface DecisionReason {
  question_key: string
  criticality: Criticality
  /** `rule_failed`: the answer fails the accept rule; `not_found`: no answer in the documents. */
  finding: 'rule_failed' | 'not_found'
  /** What this finding does to the outcome. */
  effect: 'decline' | 'refer'
  message: string
  /** The value found, when the answer had one. */
  value?: AnswerValue
  /** The accept rule the value broke. */
  rule?: string
}

/** A computed decision. */
export interface Decision { outcome: Outcome; reasons: DecisionReason[] }

/** Computes the decision (see the file comment). */
export function decide(answers: readonly JudgedAnswer[]): Decision {
  const reasons: DecisionReason[] = []
  // A failed rule says what was found and which rule it broke: "... fails its accept rule: found 950000.00, rule value >= 1000000".
  const failed = (a: JudgedAnswer, effect: 'decline' | 'refer'): DecisionReason => {
    const found = a.value === undefined ? '' : `found ${a.value === null ? 'nothing' : typeof a.value === 'boolean' ? (a.value ? 'yes' : 'no') : a.value}`
    const detail = [found, a.rule !== undefined ? `rule ${a.rule}` : ''].filter(Boolean).join(', ')
    return {
      question_key: a.questionKey, criticality: a.criticality, finding: 'rule_failed', effect,
      message: `${a.criticality} question ${a.questionKey} fails its accept rule${detail ? `: ${detail}` : ''}`,
      ...(a.value !== undefined ? { value: a.value } : {}), ...(a.rule !== undefined ? { rule: a.rule } : {}),
    }
  }
  for (const a of answers) {
    if (a.criticality === 'critical' && a.accepted === false) {
      reasons.push(failed(a, 'decline'))
    } else if (a.criticality === 'critical' && a.accepted === undefined && a.status === 'not_found') {
      reasons.push({ question_key: a.questionKey, criticality: a.criticality, finding: 'not_found', effect: 'refer', message: `critical question ${a.questionKey} was not found in the documents`, ...(a.rule !== undefined ? { rule: a.rule } : {}) })
    } else if (a.criticality === 'major' && a.accepted === false) {
      reasons.push(failed(a, 'refer'))
    }
  }
  const declines = reasons.filter((r) => r.effect === 'decline')
  const refers = reasons.filter((r) => r.effect === 'refer')
  return { outcome: declines.length ? 'decline' : refers.length ? 'refer' : 'approve', reasons: [...declines, ...refers] }
}
