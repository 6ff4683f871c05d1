/**
 * Query strings, validated here rather than by Elysia so the spec's split holds exactly: a value that
 * does not convert to its declared type is 400 malformed, a converted value that breaks the schema
 * is 422 with a pointer per violation (`/limit`). A route declares its query schema in its own
 * `detail` (`withQuery`), where the OpenAPI document reads it as the route's query parameters.
 */
import { type TObject, type Static, Kind } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ProblemError } from './problem'
import { fieldErrors } from './errors'
import { textProblem } from './json-text'

/** The `detail` entry holding a route's query schema for the OpenAPI document (never sent out itself). */
export const QUERY_DETAIL = 'x-svc-query'

/**
 * A route's `detail` with its query schema declared for the OpenAPI document. Elysia does not
 * validate it (readQuery does, for the spec's 400/422 split); the schema travels as a function so
 * no merge of route hooks copies it.
 */
export function withQuery<D extends Record<string, unknown>>(query: TObject, detail: D): D & { [QUERY_DETAIL]: () => TObject } {
  return { ...detail, [QUERY_DETAIL]: () => query }
}

/** The query schema a route declared with withQuery, if any. */
export const declaredQuery = (detail: Record<string, unknown> | undefined): TObject | undefined =>
  typeof detail?.[QUERY_DETAIL] === 'function' ? (detail[QUERY_DETAIL] as () => TObject)() : undefined

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const isNumeric = (s: { [Kind]?: string; type?: unknown }) => s.type === 'integer' || s.type === 'number'

/** Converts and validates a raw query object against a schema; throws the spec's 400 or 422. */
export function readQuery<T extends TObject>(schema: T, raw: Record<string, string | undefined>): Static<T> {
  const out: Record<string, unknown> = {}
  const malformed: string[] = []
  for (const [name, prop] of Object.entries(schema.properties)) {
    const value = raw[name]
    if (value === undefined) continue
    if (textProblem(value)) { malformed.push(name); continue } // NUL or a broken surrogate: no text type takes it
    if (isNumeric(prop as { type?: unknown })) {
      const pattern = (prop as { type?: unknown }).type === 'integer' ? /^-?\d{1,15}$/ : /^-?\d{1,15}(\.\d+)?$/
      if (!pattern.test(value)) malformed.push(name)
      else out[name] = Number(value)
    } else if ((prop as { type?: unknown }).type === 'boolean') {
      if (value !== 'true' && value !== 'false') malformed.push(name)
      else out[name] = value === 'true'
    } else if ((prop as { format?: unknown }).format === 'uuid') {
      if (!UUID.test(value)) malformed.push(name) // an id that is not a UUID does not convert, like a path id
      else out[name] = value
    } else out[name] = value
  }
  if (malformed.length) throw new ProblemError('malformed', `The query value of ${malformed.join(', ')} is not of its declared type.`)
  if (!Value.Check(schema, out)) throw new ProblemError('validation', 'The request does not match the schema.', { errors: fieldErrors([...Value.Errors(schema, out)]) })
  return out as Static<T>
}
