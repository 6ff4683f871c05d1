/**
 * The one error path. The catalogue below is the spec's Errors table; every error the service
 * returns is a ProblemError rendered by `problemResponse` as application/problem+json.
 */

/** The spec's error catalogue: code -> HTTP status and constant title. */
export const PROBLEM_CATALOGUE = {
  malformed: { status: 400, title: 'Malformed request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  budget_exceeded: { status: 402, title: 'Budget exceeded' },
  forbidden: { status: 403, title: 'Forbidden' },
  tenant_suspended: { status: 403, title: 'Workspace suspended' },
  not_admitted: { status: 403, title: 'Not admitted' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  idempotency_conflict: { status: 409, title: 'Idempotency key reused with a different request' },
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  validation: { status: 422, title: 'Validation failed' },
  invalid_cursor: { status: 422, title: 'Invalid cursor' },
  rate_limited: { status: 429, title: 'Rate limited' },
  internal: { status: 500, title: 'Internal error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const

/** A code of the error catalogue. */
export type ProblemCode = keyof typeof PROBLEM_CATALOGUE

/** One schema violation: a JSON Pointer into the request and what is wrong there. */
export interface FieldError { pointer: string; message: string }

/** Extra members and headers of one problem. */
export interface ProblemOptions {
  errors?: FieldError[]
  retryAfterSeconds?: number
  headers?: Record<string, string>
}

/** An error that leaves the service as a problem+json body with the catalogue's status and title. */
export class ProblemError extends Error {
  readonly code: ProblemCode
  readonly status: number
  readonly detail: string
  readonly options: ProblemOptions
  constructor(code: ProblemCode, detail: string, options: ProblemOptions = {}) {
    super(detail)
    this.code = code
    this.status = PROBLEM_CATALOGUE[code].status
    this.detail = detail
    this.options = options
  }
}

/** Shorthand constructors for the problems routes raise most. */
export const problems = {
  notFound: (what = 'resource') => new ProblemError('not_found', `The ${what} does not exist.`),
  unauthorized: () => new ProblemError('unauthorized', 'A valid credential is required.'),
  forbidden: (detail = 'The credential does not allow this operation.') => new ProblemError('forbidden', detail),
  malformed: (detail: string) => new ProblemError('malformed', detail),
  /** A schema violation: one entry per violated rule, with a JSON Pointer. */
  schema: (errors: FieldError[]) => new ProblemError('validation', 'The request does not match the schema.', { errors }),
  /** A domain-rule violation: no errors[]; the detail names the field. */
  rule: (detail: string) => new ProblemError('validation', detail),
  conflict: (detail: string) => new ProblemError('conflict', detail),
}

/** The JSON body of a problem, as the spec's Problem object. */
export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  instance: string
  request_id: string
  errors?: FieldError[]
  retry_after_seconds?: number
}

/** Renders a ProblemError for one request as a problem+json Response carrying X-Request-Id. */
export function problemResponse(problem: ProblemError, instance: string, requestId: string): Response {
  const body: ProblemBody = {
    type: `urn:svc:error:${problem.code}`,
    title: PROBLEM_CATALOGUE[problem.code].title,
    status: problem.status,
    detail: problem.detail,
    instance,
    request_id: requestId,
  }
  if (problem.options.errors && problem.code === 'validation') body.errors = problem.options.errors
  const headers: Record<string, string> = {
    'content-type': 'application/problem+json',
    'x-request-id': requestId,
    'cache-control': 'no-store',
    ...problem.options.headers,
  }
  if (problem.options.retryAfterSeconds !== undefined) {
    body.retry_after_seconds = problem.options.retryAfterSeconds
    headers['retry-after'] = String(problem.options.retryAfterSeconds)
  }
  if (problem.code === 'unauthorized') headers['www-authenticate'] = 'Bearer'
  const text = JSON.stringify(body)
  // Stated here so the access line can count the bytes (the server would send the same header).
  headers['content-length'] = String(Buffer.byteLength(text))
  return new Response(text, { status: problem.status, headers })
}
