/**
 * Human reviews of a decision: each review is kept (author, outcome, reason, time) beside the
 * computed decision, which never changes; the newest review is the override in force. Owns
 * `decision_reviews`.
 */
import type { Tx } from '../db/connect'
import type { DecisionReason, Outcome } from './decision'

/** A row of `decision_reviews`. */
export interface ReviewRow { id: string; evaluation_id: string; outcome: Outcome; reason: string; reviewer_user_id: string; created_at: Date }

/** Records a review. */
export async function insertReview(tx: Tx, tenantId: string, r: { evaluationId: string; scenarioId: string; outcome: Outcome; reason: string; reviewerUserId: string }): Promise<ReviewRow> {
  const [row] = await tx<ReviewRow[]>`
    insert into decision_reviews (tenant_id, id, evaluation_id, scenario_id, outcome, reason, reviewer_user_id)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${r.evaluationId}, ${r.scenarioId}, ${r.outcome}, ${r.reason}, ${r.reviewerUserId})
    returning id, evaluation_id, outcome, reason, reviewer_user_id, created_at`
  return row!
}

/** The newest review of an evaluation's decision (the override in force), or null. */
export async function latestReview(sql: Tx, tenantId: string, evaluationId: string): Promise<ReviewRow | null> {
  const [row] = await sql<ReviewRow[]>`
    select id, evaluation_id, outcome, reason, reviewer_user_id, created_at
    from decision_reviews where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}
    order by id desc limit 1`
  return row ?? null
}

/** The API shape of a decision: the computed outcome and reasons, the override beside them. */
export function renderDecision(evaluationId: string, computed: { id: string; outcome: string; reasons: DecisionReason[]; created_at: Date }, review: ReviewRow | null) {
  return {
    id: computed.id,
    evaluation_id: evaluationId,
    outcome: computed.outcome,
    reasons: computed.reasons,
    computed_at: computed.created_at.toISOString(),
    ...(review ? {
      override: {
        id: review.id,
        outcome: review.outcome,
        reason: review.reason,
        reviewer: { user_id: review.reviewer_user_id },
        reviewed_at: review.created_at.toISOString(),
      },
    } : {}),
    final_outcome: review?.outcome ?? computed.outcome,
  }
}
