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
}

/** A computed decision. */
export interface Decision { outcome: Outcome; reasons: DecisionReason[] }

/** Computes the decision (see the file comment). */
export function decide(answers: readonly JudgedAnswer[]): Decision {
  const reasons: DecisionReason[] = []
  for (const a of answers) {
    if (a.criticality === 'critical' && a.accepted === false) {
      reasons.push({ question_key: a.questionKey, criticality: a.criticality, finding: 'rule_failed', effect: 'decline', message: `critical question ${a.questionKey} fails its accept rule` })
    } else if (a.criticality === 'critical' && a.accepted === undefined && a.status === 'not_found') {
      reasons.push({ question_key: a.questionKey, criticality: a.criticality, finding: 'not_found', effect: 'refer', message: `critical question ${a.questionKey} was not found in the documents` })
    } else if (a.criticality === 'major' && a.accepted === false) {
      reasons.push({ question_key: a.questionKey, criticality: a.criticality, finding: 'rule_failed', effect: 'refer', message: `major question ${a.questionKey} fails its accept rule` })
    }
  }
  const declines = reasons.filter((r) => r.effect === 'decline')
  const refers = reasons.filter((r) => r.effect === 'refer')
  return { outcome: declines.length ? 'decline' : refers.length ? 'refer' : 'approve', reasons: [...declines, ...refers] }
}
