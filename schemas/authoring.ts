/**
 * Question authoring: question groups, guideline sources, generation runs and their drafts, diff
 * runs, structure tasks, supersessions and cost budgets — request and response shapes.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, named, OneOf, pageQuery, NonBlankText, exactlyOneOf } from './common'
import { Block, DocumentCreate, PageSummary, UploadInstructions } from './document'
import { QuestionSchema, Criticality, AnswerTypeSchema, ACCEPT_GRAMMAR } from './question-set'
import { InlineNotifications } from './notifications'

// ---- question groups and guideline sources ----

/** POST /v1/question-groups body. */
export const QuestionGroupCreate = t.Object({
  name: NonBlankText({ minLength: 1, maxLength: 200 }),
  description: t.Optional(t.String({ maxLength: 4000 })),
})

/** A question group. */
export const QuestionGroup = named('QuestionGroup', t.Object({
  id: Uuid,
  name: t.String(),
  description: t.Optional(t.String()),
  guideline_count: Int(),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** GET /v1/question-groups query. */
export const QuestionGroupListQuery = Type.Object({ ...pageQuery })

/** Path parameters naming a question group. */
export const QuestionGroupParams = t.Object({ groupId: Uuid })
/** Path parameters naming a guideline source of a group. */
export const GuidelineParams = t.Object({ groupId: Uuid, guidelineId: Uuid })

/** POST .../guidelines body: what will be uploaded (as for a document), optionally replacing a source. */
export const GuidelineCreate = t.Composite([DocumentCreate, t.Object({
  replaces_guideline_id: t.Optional(t.String({ format: 'uuid', description: 'A source of this group that this upload is a changed version of (for diff runs).' })),
})])

const guidelineStatuses = ['awaiting_upload', 'processing', 'ready', 'ready_degraded', 'failed', 'unsupported_pending'] as const

/** A guideline source. */
export const Guideline = named('GuidelineSource', t.Object({
  id: Uuid,
  question_group_id: Uuid,
  replaces_guideline_id: t.Optional(Uuid),
  filename: t.String(),
  content_type: t.String(),
  size_bytes: Int(),
  checksum_sha256: t.Optional(t.String()),
  status: t.Union(guidelineStatuses.map((s) => t.Literal(s))),
  page_count: t.Optional(Int()),
  block_count: t.Optional(Int()),
  pages: t.Optional(PageSummary),
  error_code: t.Optional(t.Union([t.Literal('guideline_ingestion_failed'), t.Literal('guideline_password_protected'), t.Literal('unsupported_pending')], { description: 'guideline_password_protected when the file needs a password to be opened; its notification says guideline_ingestion_failed either way.' })),
  error_detail: t.Optional(t.String()),
  uploaded_at: t.Optional(Timestamp),
  processed_at: t.Optional(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** The 201 of a guideline upload start. */
export const GuidelineCreated = t.Composite([Guideline, t.Object({ upload: UploadInstructions })])

/** POST .../complete body. */
export const GuidelineComplete = t.Object({ notifications: InlineNotifications })

/** GET .../guidelines query. */
export const GuidelineListQuery = Type.Object({ ...pageQuery, status: Type.Optional(Type.Union(guidelineStatuses.map((s) => Type.Literal(s)))) })

/** A block of a guideline (the document block shape, with guideline_id). */
export const GuidelineBlock = t.Composite([t.Omit(Block, ['document_id']), t.Object({ guideline_id: Uuid })])

/** GET .../blocks query. */
export const GuidelineBlockListQuery = Type.Object({ ...pageQuery, page: Type.Optional(Type.Integer({ minimum: 1 })) })

// ---- generation runs ----

/** A citation of a guideline block. */
export const Citation = t.Object({
  guideline_id: Uuid,
  block_id: Uuid,
  page: Int(),
  quote: t.String({ description: 'A span of the block text.' }),
})

/** A threshold found in an obligation; the value is a decimal string. */
export const Threshold = t.Object({
  comparator: t.Union(['>=', '>', '<=', '<', '='].map((c) => t.Literal(c))),
  value: t.String({ description: 'Exact decimal string, e.g. "1000000.00".' }),
  unit: t.Optional(t.String()),
})

/** A drafted question. */
export const DraftQuestion = t.Composite([QuestionSchema, t.Object({
  thresholds: t.Array(Threshold),
  citations: t.Array(Citation),
})])

/** Money and tokens used by a run. */
export const Usage = t.Object({
  input_tokens: Int(),
  output_tokens: Int(),
  cost_micro: Int({ description: 'Cost in integer micro-units of the billing currency.' }),
  cost: t.String({ description: 'The same cost as a decimal string.' }),
})

/** POST /v1/question-sets/{id}/generate body. */
export const GenerateRequest = t.Object({
  guideline_ids: t.Array(Uuid, { minItems: 1, maxItems: 50 }),
  generator: t.Optional(t.Union([t.Literal('builtin'), t.Literal('model')], { description: 'Default: model when a model endpoint is configured, builtin otherwise.' })),
  notifications: InlineNotifications,
})

/** A generation run. */
export const GenerationRun = named('GenerationRun', t.Object({
  id: Uuid,
  question_set_id: Uuid,
  guideline_ids: t.Array(Uuid),
  generator: t.Union([t.Literal('builtin'), t.Literal('model')]),
  status: OneOf(['queued', 'running', 'stalled', 'succeeded', 'failed', 'canceled']),
  paused_reason: t.Optional(OneOf(['vendor_outage', 'budget_exceeded'], { description: 'On a stalled run.' })),
  outage_checks: Int(),
  progress: t.Object({ steps_total: t.Union([Int(), t.Null()]), steps_done: Int(), drafted: Int() }),
  usage: Usage,
  error_code: t.Optional(t.String()),
  error_detail: t.Optional(t.String()),
  drafted_questions: t.Array(DraftQuestion),
  accepted_version_ids: t.Array(Uuid),
  started_at: t.Optional(Timestamp),
  finished_at: t.Optional(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** Path parameters naming a run of a question set. */
export const RunParams = t.Object({ questionSetId: Uuid, runId: Uuid })

/** GET .../generation-runs query. */
export const RunListQuery = Type.Object({ ...pageQuery })

/** POST .../accept body: which drafts to keep, with edits, into a new draft version. */
export const AcceptRequest = t.Object({
  keys: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 64 }), { maxItems: 500, description: 'Drafts to keep; all when absent.' })),
  edits: t.Optional(t.Array(t.Object({
    key: t.String({ minLength: 1, maxLength: 64, description: 'The draft edited.' }),
    new_key: t.Optional(t.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' })),
    text: t.Optional(t.String({ minLength: 1, maxLength: 2000 })),
    criticality: t.Optional(Criticality),
    answer_type: t.Optional(AnswerTypeSchema),
    guidance: t.Optional(t.String({ maxLength: 4000 })),
    fact_path: t.Optional(t.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)*$' })),
    accept: t.Optional(t.String({ minLength: 1, maxLength: 500, 'x-svc-grammar': ACCEPT_GRAMMAR })),
  }), { maxItems: 500 })),
  include_published: t.Optional(t.Boolean({ description: 'Start from the newest published version of the set (default true); drafts replace questions with the same key.' })),
})

// ---- diff runs ----

/** POST /v1/question-sets/{id}/diff-runs body. */
export const DiffRunCreate = t.Object({
  guideline_id: Uuid,
  base_version_id: Uuid,
  notifications: InlineNotifications,
})

/** A diff run. */
export const DiffRun = named('DiffRun', t.Object({
  id: Uuid,
  question_set_id: Uuid,
  guideline_id: Uuid,
  previous_guideline_id: Uuid,
  base_version_id: Uuid,
  status: OneOf(['queued', 'running', 'succeeded', 'failed']),
  summary: t.Optional(t.Object({ blocks_added: Int(), blocks_removed: Int(), blocks_changed: Int(), blocks_unchanged: Int() })),
  block_changes: t.Optional(t.Array(t.Object({
    change: t.Union([t.Literal('added'), t.Literal('removed'), t.Literal('changed')]),
    old_block_id: t.Optional(Uuid),
    new_block_id: t.Optional(Uuid),
    old_text: t.Optional(t.String()),
    new_text: t.Optional(t.String()),
  }))),
  proposals: t.Optional(t.Array(t.Object({
    action: t.Union([t.Literal('add'), t.Literal('change'), t.Literal('remove')]),
    question_key: t.String(),
    question: t.Optional(QuestionSchema),
    previous: t.Optional(QuestionSchema),
    citations: t.Array(Citation),
    reason: t.String(),
  }))),
  error_detail: t.Optional(t.String()),
  finished_at: t.Optional(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

// ---- structure tasks ----

/** POST .../structure-tasks body. */
export const StructureTaskCreate = t.Object({
  question_key: t.String({ minLength: 1, maxLength: 64 }),
  notifications: InlineNotifications,
})

/** A structure task. */
export const StructureTask = named('StructureTask', t.Object({
  id: Uuid,
  question_set_id: Uuid,
  version_id: Uuid,
  question_key: t.String(),
  status: OneOf(['queued', 'running', 'succeeded', 'failed']),
  proposal: t.Optional(t.Object({
    action: t.Union([t.Literal('split'), t.Literal('regroup'), t.Literal('keep')]),
    rationale: t.String(),
    questions: t.Array(QuestionSchema, { description: 'split: the questions that replace the original.' }),
    group: t.Optional(t.Object({ name: t.String(), question_keys: t.Array(t.String()) })),
  })),
  error_detail: t.Optional(t.String()),
  finished_at: t.Optional(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** Path parameters naming a structure task. */
export const StructureTaskParams = t.Object({ questionSetId: Uuid, versionId: Uuid, taskId: Uuid })

// ---- supersessions ----

/** A supersession of a case. */
export const Supersession = named('Supersession', t.Object({
  id: Uuid,
  scenario_id: Uuid,
  question_set_id: Uuid,
  evaluation_id: t.Optional(Uuid),
  question_key: t.String(),
  reason: OneOf(['changed', 'dropped', 'no_analog']),
  old: t.Union([QuestionSchema, t.Null()], { description: 'The question as the case answered it.' }),
  new: t.Union([QuestionSchema, t.Null()], { description: 'The question in the new version; null when dropped.' }),
  old_version_id: Uuid,
  new_version_id: Uuid,
  answer_value: t.Optional(t.Union([t.String(), t.Boolean(), t.Null()])),
  origin_supersession_id: t.Optional(Uuid),
  status: OneOf(['pending_review', 'confirmed', 'dismissed']),
  decided_at: t.Optional(Timestamp),
  note: t.Optional(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** GET /v1/scenarios/{id}/supersessions query. */
export const SupersessionListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union([Type.Literal('pending_review'), Type.Literal('confirmed'), Type.Literal('dismissed')])),
})

/** Path parameters naming a supersession of a case. */
export const SupersessionParams = t.Object({ scenarioId: Uuid, supersessionId: Uuid })

/** POST .../confirm and .../dismiss body. */
export const SupersessionDecision = t.Object({ note: t.Optional(t.String({ maxLength: 2000 })) })

// ---- cost budgets (operators) ----

/** PUT /v1/tenants/{tenantId}/cost-budget body: one of limit_micro or limit. */
export const BudgetWrite = exactlyOneOf(['limit_micro', 'limit'], t.Object({
  limit_micro: t.Optional(Int({ minimum: 0 })),
  limit: t.Optional(t.String({ pattern: '^\\d{1,12}(\\.\\d{1,6})?$', description: 'Decimal string, e.g. "25.50".' })),
}))

/** A workspace's budget and what it has spent. */
export const Budget = named('CostBudget', t.Object({
  tenant_id: Uuid,
  limit_micro: t.Union([Int(), t.Null()]),
  limit: t.Union([t.String(), t.Null()]),
  spent_micro: Int(),
  spent: t.String(),
  input_tokens: Int(),
  output_tokens: Int(),
  exceeded: t.Boolean(),
}))
