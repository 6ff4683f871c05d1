/**
 * Evaluations of a case and their results (answers, evidence, decision, decision review): request
 * and response shapes.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, OneOf, named, pageQuery, NonBlankText } from './common'
import { InlineNotifications } from './notifications'
import { AnswerTypeSchema, Criticality } from './question-set'

/** POST /v1/scenarios/{id}/evaluate body (optional). */
export const EvaluateRequest = t.Object({
  question_set_id: t.Optional(t.String({ format: 'uuid', description: "Pin this set's newest published version instead of the case vertical's." })),
  question_set_version_id: t.Optional(t.String({ format: 'uuid', description: 'Pin exactly this published version.' })),
  notifications: InlineNotifications,
})

/** An evaluation as every endpoint returns it. */
export const Evaluation = named('Evaluation', t.Object({
  id: Uuid,
  scenario_id: Uuid,
  status: OneOf(['queued', 'running', 'succeeded', 'failed', 'canceled']),
  question_set_id: Uuid,
  question_set_version_id: Uuid,
  engine: OneOf(['builtin', 'model'], { description: 'builtin (deterministic, no network) or model (SVC_MODEL_URL)' }),
  progress: t.Object({ answered: Int(), total: Int() }),
  document_count: t.Optional(Int({ description: 'Processed documents of the case the evaluation read' })),
  block_count: t.Optional(Int()),
  error_code: t.Optional(OneOf(['evaluation_failed', 'evaluation_canceled', 'budget_exceeded'], { description: 'budget_exceeded: a model-backed evaluation stopped at the workspace cost budget' })),
  error: t.Optional(t.String({ description: 'Why it failed; never document content' })),
  created_at: Timestamp,
  started_at: t.Optional(Timestamp),
  finished_at: t.Optional(Timestamp),
  updated_at: Timestamp,
}))

/** POST .../evaluations/{evaluationId}/cancel body (optional, empty). */
export const CancelRequest = t.Object({})

/** The value of an answer: a decimal string (number), an ISO date, a boolean, a string, or null. */
export const AnswerValueSchema = t.Union([t.String(), t.Boolean(), t.Null()])

/** An answer as every endpoint returns it. */
export const Answer = named('Answer', t.Object({
  id: Uuid,
  evaluation_id: Uuid,
  question_key: t.String(),
  criticality: Criticality,
  answer_type: AnswerTypeSchema,
  value: AnswerValueSchema,
  confidence: t.Number({ minimum: 0, maximum: 1 }),
  status: OneOf(['answered', 'not_found']),
  evidence_ids: t.Array(Uuid),
  source: OneOf(['fact', 'retrieval', 'model'], { description: 'fact (a mined fact), retrieval (best passages) or model' }),
  fact_path: t.Optional(t.String()),
  accepted: t.Optional(t.Boolean({ description: "The accept rule's verdict; absent without a rule or when it cannot judge" })),
  downgraded: t.Boolean({ description: 'A model answer lowered because its citations or value did not hold' }),
  note: t.Optional(t.String()),
}))

/** One piece of evidence: the block of a document an answer cites and the quoted span. */
export const Evidence = named('Evidence', t.Object({
  id: Uuid,
  evaluation_id: Uuid,
  answer_id: Uuid,
  question_key: t.String(),
  document_id: Uuid,
  block_id: Uuid,
  page: Int({ minimum: 1 }),
  quote: t.String(),
}))

/** The three outcomes of a decision. */
export const OUTCOMES = ['approve', 'refer', 'decline'] as const

/** The outcome of a decision. */
export const DecisionOutcome = OneOf(OUTCOMES)

/** One reason of a decision. */
export const DecisionReason = named('DecisionReason', t.Object({
  question_key: t.String(),
  criticality: Criticality,
  finding: OneOf(['rule_failed', 'not_found']),
  effect: OneOf(['decline', 'refer']),
  message: t.String(),
  value: t.Optional(t.Union([t.String(), t.Boolean(), t.Null()], { description: 'The value found (null: none), for a question with an accept rule.' })),
  rule: t.Optional(t.String({ description: 'The accept rule the value was judged by.' })),
}))

/** The human override of a decision (the newest review). */
export const DecisionOverride = named('DecisionOverride', t.Object({
  id: Uuid,
  outcome: DecisionOutcome,
  reason: t.String(),
  reviewer: t.Object({ user_id: Uuid }),
  reviewed_at: Timestamp,
}))

/** A decision: the computed outcome and, beside it, the human override in force. */
export const DecisionSchema = named('Decision', t.Object({
  id: t.String({ format: 'uuid', description: "The decision's id: one per evaluation's computed decision, the same on every read (a review adds an override beside it, never a new decision)" }),
  evaluation_id: Uuid,
  outcome: OneOf(['approve', 'refer', 'decline'], { description: 'The computed outcome' }),
  reasons: t.Array(DecisionReason),
  computed_at: Timestamp,
  override: t.Optional(DecisionOverride),
  final_outcome: OneOf(['approve', 'refer', 'decline'], { description: "The override's outcome when there is one, else the computed one" }),
}))

/** POST /v1/scenarios/{id}/decision/review body. */
export const DecisionReviewRequest = t.Object({
  outcome: DecisionOutcome,
  reason: NonBlankText({ minLength: 1, maxLength: 2000 }),
  evaluation_id: t.Optional(t.String({ format: 'uuid', description: 'Default: the latest succeeded evaluation' })),
})

/** Query of the result endpoints: an older evaluation instead of the latest succeeded one. */
export const ResultQuery = Type.Object({
  evaluation_id: Type.Optional(Type.String({ format: 'uuid' })),
})

/** GET /v1/scenarios/{id}/evaluations query. */
export const EvaluationListQuery = Type.Object({
  ...pageQuery,
})

/** Path parameters naming an evaluation of a case. */
export const EvaluationParams = t.Object({ scenarioId: Uuid, evaluationId: Uuid })
