/**
 * Scenario (a case): the request and response shapes.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, named, pageQuery, NonBlankText } from './common'
import { VerticalKey } from './vertical'

/** POST /v1/scenarios body. */
export const ScenarioCreate = t.Object({
  name: NonBlankText({ minLength: 1, maxLength: 500 }),
  external_ref: t.Optional(t.String({ minLength: 1, maxLength: 255, description: "The caller's own reference." })),
  vertical: t.Optional(t.Union([VerticalKey, t.Null()], {
    description: "A key of GET /v1/verticals. Absent: the workspace's default binding (tenant settings `vertical`) at creation; "
      + 'null: the shipped default entry whatever the workspace binds.',
  })),
})

/** A scenario as every endpoint returns it. */
export const Scenario = named('Scenario', t.Object({
  id: Uuid,
  name: t.String(),
  external_ref: t.Optional(t.String()),
  status: t.String({ description: '`created` on creation; other values may be added (Versioning 3)' }),
  vertical: t.Optional(t.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** GET /v1/scenarios query: the page query plus an exact external_ref filter. */
export const ScenarioListQuery = Type.Object({
  ...pageQuery,
  external_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
})
