/**
 * OpenAPI helpers: the success responses of a route plus the problem responses it can give, each
 * pointing at the one Problem schema. Routes put the result in `detail.responses`.
 */
import type { TSchema } from '@sinclair/typebox'
import { PROBLEM_CATALOGUE, type ProblemCode } from './problem'

const problemContent = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } }

/** A problem response entry per HTTP status, naming the catalogue types it can carry. */
export function problemResponses(codes: readonly ProblemCode[]): Record<string, any> {
  const byStatus = new Map<number, string[]>()
  // A code listed twice (BODY_PROBLEMS and PATH_PROBLEMS both name malformed) is described once.
  for (const code of new Set(codes)) {
    const { status } = PROBLEM_CATALOGUE[code]
    byStatus.set(status, [...(byStatus.get(status) ?? []), `urn:svc:error:${code}`])
  }
  return Object.fromEntries([...byStatus].map(([status, types]) => [String(status), { description: types.join(', '), content: problemContent, 'x-svc-problem-types': types }]))
}

/** Problems every JSON-body route can give. */
export const BODY_PROBLEMS: readonly ProblemCode[] = ['malformed', 'payload_too_large', 'unsupported_media_type', 'validation']
/** Problems every route with a resource id in its path can give. */
export const PATH_PROBLEMS: readonly ProblemCode[] = ['malformed', 'not_found']
/** Problems every list route can give. */
export const LIST_PROBLEMS: readonly ProblemCode[] = ['malformed', 'validation', 'invalid_cursor']

/** `detail.responses` for a route: its success bodies and its problems. */
export function responses(success: Record<number, TSchema | null>, problems: readonly ProblemCode[] = []): Record<string, any> {
  const ok = Object.fromEntries(Object.entries(success).map(([status, schema]) => [
    status,
    schema ? { description: `Status ${status}`, content: { 'application/json': { schema } } } : { description: `Status ${status}` },
  ]))
  return { ...ok, ...problemResponses(problems) }
}
