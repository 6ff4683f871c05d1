/**
 * Question sets and their versions: request and response shapes.
 */
import { t, type Static } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, OneOf, named, pageQuery, NonBlankText } from './common'
import { VerticalKey } from './vertical'
import { InlineNotifications } from './notifications'

/** The question criticalities. */
export const CRITICALITIES = ['critical', 'major', 'minor'] as const

/** A question's criticality: what a failed or missing answer does to the decision. */
export const Criticality = OneOf(CRITICALITIES, {
  description: 'critical: a failed rule declines, not found refers; major: a failed rule refers; minor: informative.',
})

/** The answer types a question can declare. */
export const ANSWER_TYPES = ['boolean', 'text', 'number', 'date'] as const

/** The type of a question's answer value. */
export const AnswerTypeSchema = OneOf(ANSWER_TYPES, {
  description: 'number answers are decimal strings, dates ISO dates (YYYY-MM-DD).',
})

/**
 * The grammars of `fact_path` and `accept` as the document states them (`x-svc-grammar`): the routes
 * parse both (server/evaluation/fact-path.ts, rules.ts; 422 at the member naming the column), and an
 * accept rule is also typed against the question's answer_type, which no JSON Schema keyword holds.
 * This one is the fact language (server/evaluation/fact-path.ts) in one line.
 */
export const FACT_PATH_GRAMMAR = 'fact_path := alternative ("|" alternative){0,9}; alternative := name ("." name)* row?; '
  + 'row := "[" name "=" cell "]" (the row whose column `name` holds `cell`); name := [a-z0-9_]+; cell := any characters but "]", or quoted \'...\' / "...", not empty'
/** The accept rule language (server/evaluation/rules.ts) in one line, for `x-svc-grammar`. */
export const ACCEPT_GRAMMAR = 'rule := and ("or" and)*; and := not ("and" not)*; not := "not" not | "(" rule ")" | "present" | "absent" | test; '
  + 'test := "value" (op literal | "between" literal "and" literal | "in" "[" literal ("," literal)* "]" | "contains" string); '
  + 'op := "=" | "==" | "!=" | "<" | "<=" | ">" | ">="; literal := number (-12.50) | date (2024-01-31) | string (\'x\' or "x") | true | false; '
  + 'keywords in any letter case; each literal must fit answer_type (contains: text only)'

/** One question of a version. */
export const QuestionSchema = named('Question', t.Object({
  key: t.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', description: 'Unique within the version.' }),
  text: t.String({ minLength: 1, maxLength: 2000 }),
  criticality: Criticality,
  answer_type: AnswerTypeSchema,
  guidance: t.Optional(t.String({ maxLength: 4000, description: 'Hints for whoever (or whatever) answers.' })),
  fact_path: t.Optional(t.String({
    minLength: 1, maxLength: 200,
    description: 'A mined fact that answers the question (docs/evaluation.md, "The fact language"): annual_revenue, bank_statement.balance.min, '
      + 'annual_revenue|gross_revenue|total_sales (alternatives, first found answers), loss_run.claims[policy_year=2024] (a cell of the row whose policy_year is 2024). '
      + 'Checked when the version is created (422 with pointer /questions/i/fact_path).',
    examples: ['annual_revenue', 'bank_statement.balance.min', 'annual_revenue|gross_revenue|total_sales', 'loss_run.claims[policy_year=2024]'],
    'x-svc-grammar': FACT_PATH_GRAMMAR,
  })),
  accept: t.Optional(t.String({
    minLength: 1, maxLength: 500,
    description: "Accept rule over the answer value, e.g. `value >= 1000000`, `value between 0 and 0.35`, `value in ['LLC']`, `present`. Needs fact_path. "
      + 'Checked when the version is created (422 with pointer /questions/i/accept naming the column).',
    examples: ['value >= 1000000', 'value between 0 and 0.35', "value in ['LLC', 'Corporation']", 'present', 'absent or value < 3'],
    'x-svc-grammar': ACCEPT_GRAMMAR,
  })),
}))
// No `additionalProperties: false`: like every body's, a question's unknown members are dropped
// (Elysia's normalize, README), and the document must not say they are refused.

/** A question of a question-set version. */
export type Question = Static<typeof QuestionSchema>

/** POST /v1/question-sets body. */
export const QuestionSetCreate = t.Object({
  name: NonBlankText({ minLength: 1, maxLength: 200 }),
  vertical: t.Optional(t.Union([VerticalKey, t.Null()], {
    description: "A key of GET /v1/verticals. Absent: the workspace's default binding (tenant settings `vertical`) at creation; "
      + 'null: the shipped default entry whatever the workspace binds.',
  })),
})

/** A question set as every endpoint returns it. */
export const QuestionSet = named('QuestionSet', t.Object({
  id: Uuid,
  name: t.String(),
  vertical: t.Optional(t.String()),
  latest_version_id: t.Optional(Uuid),
  published_version_id: t.Optional(t.String({ format: 'uuid', description: 'The newest published version.' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** POST .../versions and PUT .../versions/{versionId} body. */
export const VersionWrite = t.Object({
  questions: t.Array(QuestionSchema, { maxItems: 500 }),
})

/** POST .../publish body. */
export const PublishRequest = t.Object({
  notifications: InlineNotifications,
})

/** A question-set version as every endpoint returns it. */
export const QuestionSetVersion = named('QuestionSetVersion', t.Object({
  id: Uuid,
  question_set_id: Uuid,
  number: Int({ minimum: 1 }),
  status: OneOf(['draft', 'publishing', 'published', 'failed']),
  questions: t.Array(QuestionSchema),
  etag: t.String({ description: 'Equals the ETag header; send it as If-Match to edit or publish this version.' }),
  failure_reason: t.Optional(t.String()),
  published_at: t.Optional(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** GET /v1/question-sets query. */
export const QuestionSetListQuery = Type.Object({
  ...pageQuery,
  vertical: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only sets bound to this vertical' })),
})

/** GET .../versions query. */
export const VersionListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('publishing'), Type.Literal('published'), Type.Literal('failed')])),
})

/** Path parameters naming a question set. */
export const QuestionSetParams = t.Object({ questionSetId: Uuid })
/** Path parameters naming a version of a question set. */
export const VersionParams = t.Object({ questionSetId: Uuid, versionId: Uuid })
