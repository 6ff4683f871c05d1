/**
 * Shapes shared by every resource family: identifiers, the Problem object and the page object.
 */
import { t, type TSchema } from 'elysia'
import { Type, type IntegerOptions, type SchemaOptions, type StringOptions, type TLiteral, type TUnion } from '@sinclair/typebox'
import { NON_BLANK_TEXT_PATTERN } from './patterns'

/**
 * An integer as plain JSON Schema `integer`. Elysia's own `t.Integer` also takes numeric strings
 * ("157") and publishes `anyOf [string, integer]`; the spec's integers (sizes, counts, `_micro`
 * money) are JSON numbers, so a string is a 422 with a pointer.
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options)

/**
 * A closed set of string values sent or accepted by the service. The OpenAPI document shows it as an
 * `enum`; clients tolerate members added later (Versioning 3).
 */
export function OneOf<const V extends readonly [string, ...string[]]>(values: V, options: SchemaOptions = {}): TUnion<TLiteral<V[number]>[]> {
  return t.Union(values.map((v) => t.Literal(v)), options) as never
}

/**
 * Names a schema as a component of the OpenAPI document (`#/components/schemas/<name>`), so clients
 * generated from it get a type of that name to import. Returns the same schema.
 */
export function named<T extends TSchema>(name: string, schema: T): T {
  ;(schema as Record<string, unknown>)['x-component'] = name
  return schema
}

/** The schema key `oneOfBy` sets; the OpenAPI writer (server/http/openapi-schemas.ts) reads it. */
export const ONE_OF_BY = 'x-svc-one-of-by'

/**
 * Marks an object whose members depend on its `property` (a closed set of strings): for each value,
 * the member of that name is required and the members named by the other values are absent
 * (`channel: "email"` comes with `email`, not `webhook`). The validator sees the plain object and
 * the route checks the dependency itself, with a pointer at the member; the document states it as
 * `oneOf` with a discriminator on `property`. Returns the same schema.
 */
export function oneOfBy<T extends TSchema>(property: string, schema: T): T {
  ;(schema as Record<string, unknown>)[ONE_OF_BY] = property
  return schema
}

/** The schema key of a pattern the document states and the route checks itself (see `NonBlankText`). */
export const STATED_PATTERN = 'x-svc-stated-pattern'

/**
 * Free text that must hold a character other than white space: a string schema whose document says
 * so as a `pattern`, while the route refuses a blank value as a domain rule (422 without errors[], the
 * field named in `detail`, as the spec requires), so the validator is not given the pattern.
 */
export const NonBlankText = (options: StringOptions & { minLength?: number; maxLength?: number }) =>
  Type.String({ ...options, [STATED_PATTERN]: NON_BLANK_TEXT_PATTERN, description: [options.description, 'Must contain a character other than white space (else 422 without errors[], the field named in detail).'].filter(Boolean).join(' ') })

/**
 * The schema key of a closed set of values the document states as `enum` while the route checks
 * membership itself (with its own message and pointer): a catalog too long for a useful validator
 * message (time zones, currencies) or one the route already names (verticals). The validator ignores
 * the key; the OpenAPI writer turns it into `enum`.
 */
export const STATED_ENUM = 'x-svc-stated-enum'

/** The schema key `exactlyOneOf` sets; the OpenAPI writer reads it. */
export const EXACTLY_ONE_OF = 'x-svc-exactly-one-of'

/**
 * Marks an object of which exactly one of `members` must be present (`invoice` or `invoice_upload`):
 * the route refuses both or neither as a domain rule (422 without errors[]); the document states it
 * as `oneOf` of one `required` each. Returns the same schema.
 */
export function exactlyOneOf<T extends TSchema>(members: readonly string[], schema: T): T {
  ;(schema as Record<string, unknown>)[EXACTLY_ONE_OF] = [...members]
  return schema
}

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

/** The page size of a list whose query names none (the spec's default). */
export const DEFAULT_PAGE_LIMIT = 50

const limitField = (description?: string) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: DEFAULT_PAGE_LIMIT, ...(description ? { description } : {}) }))
const cursorField = (description?: string) =>
  Type.Optional(Type.String({ maxLength: 512, ...(description ? { description } : {}) }))

/**
 * The page part of every list query, `limit` (1-200, default 50) and `cursor`: spread first into
 * each list's query schema (`Type.Object({ ...pageQuery, status })`), so it is written once.
 */
export const pageQuery = { limit: limitField(), cursor: cursorField() }

/** A list query of the page part alone, with descriptions (as the deliveries list documents it). */
export const PageQuery = Type.Object({
  limit: limitField(`Page size, default ${DEFAULT_PAGE_LIMIT}, at most 200.`),
  cursor: cursorField('Opaque cursor from the previous page.'),
})
