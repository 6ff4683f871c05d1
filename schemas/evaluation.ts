/**
 * Evaluations of a case and their results (answers, evidence, decision, decision review): request
 * and response shapes.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid } from './common'
import { InlineNotifications } from '../server/notifications/inline'

/** POST /v1/scenarios/{id}/evaluate body (optional). */
export const EvaluateRequest = t.Object({
  question_set_id: t.Optional(t.String({ format: 'uuid', description: "Pin this set's newest published version instead of the case vertical's." })),
  question_set_version_id: t.Optional(t.String({ format: 'uuid', description: 'Pin exactly this published version.' })),
  notifications: InlineNotifications,
})

/** An evaluation as every endpoint returns it. */
export const Evaluation = t.Object({
  id: Uuid,
  scenario_id: Uuid,
  status: t.String({ description: 'queued, running, succeeded, failed or canceled' }),
  question_set_id: Uuid,
  question_set_version_id: Uuid,
  engine: t.String({ description: 'builtin (deterministic, no network) or model (SVC_MODEL_URL)' }),
  progress: t.Object({ answered: t.Integer(), total: t.Integer() }),
  document_count: t.Optional(t.Integer({ description: 'Processed documents of the case the evaluation read' })),
  block_count: t.Optional(t.Integer()),
  error_code: t.Optional(t.String({ description: 'evaluation_failed, evaluation_canceled, or budget_exceeded (a model-backed evaluation stopped at the workspace cost budget)' })),
  error: t.Optional(t.String({ description: 'Why it failed; never document content' })),
  created_at: Timestamp,
  started_at: t.Optional(Timestamp),
  finished_at: t.Optional(Timestamp),
  updated_at: Timestamp,
})

/** POST .../evaluations/{evaluationId}/cancel body (optional, empty). */
export const CancelRequest = t.Object({})

/** The value of an answer: a decimal string (number), an ISO date, a boolean, a string, or null. */
export const AnswerValueSchema = t.Union([t.String(), t.Boolean(), t.Null()])

/** An answer as every endpoint returns it. */
export const Answer = t.Object({
  id: Uuid,
  evaluation_id: Uuid,
  question_key: t.String(),
  criticality: t.String(),
  answer_type: t.String(),
  value: AnswerValueSchema,
  confidence: t.Number({ minimum: 0, maximum: 1 }),
  status: t.String({ description: 'answered or not_found' }),
  evidence_ids: t.Array(Uuid),
  source: t.String({ description: 'fact (a mined fact), retrieval (best passages) or model' }),
  fact_path: t.Optional(t.String()),
  accepted: t.Optional(t.Boolean({ description: "The accept rule's verdict; absent without a rule or when it cannot judge" })),
  downgraded: t.Boolean({ description: 'A model answer lowered because its citations or value did not hold' }),
  note: t.Optional(t.String()),
})

/** One piece of evidence: the block of a document an answer cites and the quoted span. */
export const Evidence = t.Object({
  id: Uuid,
  evaluation_id: Uuid,
  answer_id: Uuid,
  question_key: t.String(),
  document_id: Uuid,
  block_id: Uuid,
  page: t.Integer({ minimum: 1 }),
  quote: t.String(),
})

/** One reason of a decision. */
export const DecisionReason = t.Object({
  question_key: t.String(),
  criticality: t.String(),
  finding: t.String({ description: 'rule_failed or not_found' }),
  effect: t.String({ description: 'decline or refer' }),
  message: t.String(),
})

/** The human override of a decision (the newest review). */
export const DecisionOverride = t.Object({
  id: Uuid,
  outcome: t.String({ description: 'approve, refer or decline' }),
  reason: t.String(),
  reviewer: t.Object({ user_id: Uuid }),
  reviewed_at: Timestamp,
})

/** A decision: the computed outcome and, beside it, the human override in force. */
export const DecisionSchema = t.Object({
  id: t.String({ format: 'uuid', description: "The decision's id: one per evaluation's computed decision, the same on every read (a review adds an override beside it, never a new decision)" }),
  evaluation_id: Uuid,
  outcome: t.String({ description: 'The computed outcome: approve, refer or decline' }),
  reasons: t.Array(DecisionReason),
  computed_at: Timestamp,
  override: t.Optional(DecisionOverride),
  final_outcome: t.String({ description: "The override's outcome when there is one, else the computed one" }),
})

/** POST /v1/scenarios/{id}/decision/review body. */
export const DecisionReviewRequest = t.Object({
  outcome: t.Union([t.Literal('approve'), t.Literal('refer'), t.Literal('decline')]),
  reason: t.String({ minLength: 1, maxLength: 2000 }),
  evaluation_id: t.Optional(t.String({ format: 'uuid', description: 'Default: the latest succeeded evaluation' })),
})

/** Query of the result endpoints: an older evaluation instead of the latest succeeded one. */
export const ResultQuery = Type.Object({
  evaluation_id: Type.Optional(Type.String({ format: 'uuid' })),
})

/** GET /v1/scenarios/{id}/evaluations query. */
export const EvaluationListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
})

/** Path parameters naming an evaluation of a case. */
export const EvaluationParams = t.Object({ scenarioId: Uuid, evaluationId: Uuid })
