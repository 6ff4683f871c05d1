/**
 * Query strings, validated here rather than by Elysia so the spec's split holds exactly: a value that
 * does not convert to its declared type is 400 malformed, a converted value that breaks the schema
 * is 422 with a pointer per violation (`/limit`). Each schema is also registered for the OpenAPI
 * document, which shows it as the route's query parameters.
 */
import { type TObject, type Static, Kind } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ProblemError } from './problem'
import { fieldErrors } from './errors'
import { textProblem } from './json-text'

const documented: Record<string, Record<string, { query: TObject }>> = {}

/** Registers a query schema for the OpenAPI document of `method path` (Elysia path syntax). */
export function documentQuery(method: string, path: string, schema: TObject): void {
  ;(documented[path] ??= {})[method.toLowerCase()] = { query: schema }
}

/** The registered query schemas, by Elysia path and lower-case method. */
export const documentedQueries = (): Record<string, Record<string, TObject>> =>
  Object.fromEntries(Object.entries(documented).map(([path, methods]) => [path, Object.fromEntries(Object.entries(methods).map(([m, v]) => [m, v.query]))]))

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
