/**
 * Plugin: maps every error, Elysia's own included, onto the problem catalogue. Path values that do
 * not convert are 400 malformed; body schema violations are 422 with one errors[] entry each; any
 * other exception is a 500 whose detail reveals nothing (the cause goes to the log with the request id).
 */
import { Elysia } from 'elysia'
import { ProblemError, problemResponse, type FieldError } from './problem'
import { contextOfRequest, requestIdOf } from './request-id'
import { dependencyProblem } from './dependency-errors'
import { patternMessage } from './pattern-messages'
import type { RouteMethods } from './methods'
import { defaultLogger } from '../observability/log'

interface TypeBoxError { path: string; message: string; schema?: Record<string, unknown>; value?: unknown }

/** A readable message for one schema violation. */
function describe(e: TypeBoxError): string {
  const stated = patternMessage(e.schema, e.value)
  if (stated !== undefined) return stated
  const options = (e.schema?.anyOf as Array<{ const?: unknown }> | undefined)?.map((s) => s.const)
  if (options && options.every((o) => o !== undefined)) return `must be one of: ${options.join(', ')}`
  if (Array.isArray(e.schema?.enum)) return `must be one of: ${(e.schema!.enum as unknown[]).join(', ')}`
  if (e.value === undefined && /^Expected (required property|string|object|number|integer|boolean|array)/.test(e.message)) return 'is required'
  return e.message.replace(/^Expected /, 'expected ')
}

/** Converts TypeBox violations into the spec's errors[] entries (one per pointer). */
export function fieldErrors(all: TypeBoxError[]): FieldError[] {
  const seen = new Set<string>()
  const out: FieldError[] = []
  for (const e of all) {
    const pointer = e.path ?? ''
    if (seen.has(pointer)) continue
    seen.add(pointer)
    out.push({ pointer, message: describe(e) })
  }
  return out
}

function toProblem(code: string | number, error: unknown, path: string, methods: RouteMethods | undefined): ProblemError | undefined {
  if (error instanceof ProblemError) return error
  // Elysia wraps anything thrown while parsing a body; the body parser's own problems keep their type.
  if ((error as { cause?: unknown })?.cause instanceof ProblemError) return (error as { cause: ProblemError }).cause
  switch (code) {
    case 'NOT_FOUND': {
      const allowed = methods?.allowed(path) ?? []
      if (allowed.length > 0) {
        return new ProblemError('method_not_allowed', `This path answers ${allowed.join(', ')} only.`, { headers: { allow: allowed.join(', ') } })
      }
      return new ProblemError('not_found', 'No resource exists at this path.')
    }
    case 'PARSE':
      return new ProblemError('malformed', 'The request body could not be parsed.')
    case 'INVALID_COOKIE_SIGNATURE':
    case 'INVALID_FILE_TYPE':
      return new ProblemError('malformed', 'The request could not be read.')
    case 'VALIDATION': {
      const v = error as { type: string; all: TypeBoxError[] }
      if (v.type === 'params' || v.type === 'query' || v.type === 'property' || v.type === 'cookie') {
        const names = v.all.map((e) => e.path.replace(/^\//, '')).filter(Boolean)
        return new ProblemError('malformed', `The path or query value ${names.join(', ') || ''} is not of its declared type.`.replace('  ', ' '))
      }
      if (v.type === 'body' || v.type === 'headers') return new ProblemError('validation', 'The request does not match the schema.', { errors: fieldErrors(v.all) })
      return undefined // a response that breaks its own schema is our fault: 500
    }
  }
  return undefined
}

/**
 * The problem+json response of any error a request ends in: the one error path, shared by the
 * Elysia hook below and the read front (server/resources/read-front.ts). `code` is Elysia's error
 * code when the framework raised it (undefined elsewhere); a dependency outage is 503 with a
 * warning line, anything unknown a 500 whose cause goes to the log with the request id.
 */
export function errorResponse(code: string | number | undefined, error: unknown, path: string, requestId: string, methods?: RouteMethods): Response {
  let problem = toProblem(code ?? '', error, path, methods) ?? dependencyProblem(error)
  if (problem?.code === 'unavailable' && !(error instanceof ProblemError)) {
    defaultLogger().warn('dependency unavailable', { request_id: requestId, path, error: (error as Error)?.message ?? String(error) })
  }
  if (!problem) {
    defaultLogger().error((error as Error)?.message ?? String(error), { request_id: requestId, path, stack: (error as Error)?.stack })
    problem = new ProblemError('internal', 'An unexpected error occurred; quote the request_id when reporting it.')
  }
  return problemResponse(problem, path, requestId)
}

/**
 * The listener's last resort (Bun.serve's `error`): an error that escaped the app's own error path
 * (a fault in that path itself) still leaves as a problem, a 500 whose detail reveals nothing, its
 * cause logged under a request id of its own. Bun's default in development mode would answer an
 * HTML page with the message and the stack instead; the listener also runs outside that mode.
 */
export function escapedErrorResponse(error: unknown): Response {
  return errorResponse(undefined, error, '/', crypto.randomUUID())
}

/**
 * Plugin: the single error path. `methods` is the app's route table (loaded once the app is built),
 * which turns an unknown method on a known path into 405 with `Allow`.
 */
export const problemErrors = (methods: RouteMethods) => new Elysia({ name: 'problem-errors' }).onError({ as: 'global' }, ({ code, error, request, path }) => {
  const response = errorResponse(code, error, path, requestIdOf(request), methods)
  contextOfRequest(request).response = response // the access line's status and bytes
  return response
})
