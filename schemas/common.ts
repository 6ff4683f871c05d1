/**
 * Shapes shared by every resource family: identifiers, the Problem object and the page object.
 */
import { t, type TSchema } from 'elysia'
import { Type } from '@sinclair/typebox'

/** A server-assigned UUID. */
export const Uuid = t.String({ format: 'uuid' })

/** An RFC 3339 UTC timestamp. */
export const Timestamp = t.String({ format: 'date-time' })

/** Path parameters naming a case. */
export const ScenarioParams = t.Object({ scenarioId: Uuid })

/** The spec's Problem object (every error body). */
export const Problem = Type.Object({
  type: Type.String({ description: 'Stable URN urn:svc:error:<code>' }),
  title: Type.String({ description: 'Constant for a given type' }),
  status: Type.Integer(),
  detail: Type.String(),
  instance: Type.String({ description: 'The request path' }),
  request_id: Type.String({ description: 'Equals the X-Request-Id response header' }),
  errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String({ description: 'JSON Pointer' }), message: Type.String() }), { description: 'Schema violations (422 validation only)' })),
  retry_after_seconds: Type.Optional(Type.Integer({ description: 'On 429, equals Retry-After' })),
})

/** The spec's page of results around an item schema. */
export const PageOf = <T extends TSchema>(item: T) =>
  t.Object({ items: t.Array(item), next_cursor: t.Union([t.String(), t.Null()]) })
