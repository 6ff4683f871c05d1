/**
 * The typed client of the underwriting case service (package export "./client"): the OpenAPI
 * document's types (generated at build time by openapi-typescript into ./api) over openapi-fetch,
 * plus what every integration writes by hand otherwise: the API key on every call, an
 * Idempotency-Key made for each work-creating POST, retries of 429 and 503 after their Retry-After,
 * and iteration over cursor-paged lists.
 */
import createClient, { type Client } from 'openapi-fetch'
import type { components, paths } from './api.js'
import { IDEMPOTENT_POSTS } from './idempotent-posts.js'

export type { components, paths }

/** Options of createCaseClient. */
export interface CaseClientOptions {
  /** The service's base URL, e.g. https://underwriting.example.com (no trailing /v1). */
  baseUrl: string
  /** An API key (`svc_live_...` or `svc_test_...`) or a user access token. */
  apiKey: string
  /** Retries of a 429 or 503 answer (default 3); each waits Retry-After (at most maxRetryWaitMs). */
  maxRetries?: number
  /** The longest wait before a retry, in milliseconds (default 30,000). */
  maxRetryWaitMs?: number
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch
}

/** A typed client: openapi-fetch's GET/POST/PUT/PATCH/DELETE over the service's paths. */
export type CaseClient = Client<paths>

const pathPatterns = IDEMPOTENT_POSTS.map((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`))

/** Whether a POST to this path creates work and takes an Idempotency-Key (from the document). */
export function takesIdempotencyKey(pathname: string): boolean {
  return pathPatterns.some((p) => p.test(pathname))
}

/** Seconds of a Retry-After header (delta seconds or an HTTP date), or undefined. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/**
 * A fetch that adds the credential and, on a work-creating POST without one, an Idempotency-Key;
 * and that repeats a request answered 429 or 503 after its Retry-After. A repeated POST carries the
 * same Idempotency-Key, so the service answers it from the stored reply if the first one did the work.
 */
export function caseFetch(options: CaseClientOptions): typeof fetch {
  const base = options.fetch ?? fetch
  const maxRetries = options.maxRetries ?? 3
  const maxWait = options.maxRetryWaitMs ?? 30_000
  const wrapped = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const first = new Request(input, init)
    const headers = new Headers(first.headers)
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${options.apiKey}`)
    if (first.method === 'POST' && !headers.has('idempotency-key') && takesIdempotencyKey(new URL(first.url).pathname)) {
      headers.set('idempotency-key', crypto.randomUUID())
    }
    const body = first.body === null ? undefined : await first.arrayBuffer()
    for (let attempt = 0; ; attempt++) {
      const response = await base(new Request(first.url, { method: first.method, headers, body, signal: first.signal, redirect: first.redirect }))
      if ((response.status !== 429 && response.status !== 503) || attempt >= maxRetries) return response
      const wait = Math.min(maxWait, retryAfterMs(response.headers.get('retry-after')) ?? 2 ** attempt * 500)
      await response.body?.cancel()
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
  return wrapped as typeof fetch
}

/** A typed client of the service; see the module comment for what it adds to openapi-fetch. */
export function createCaseClient(options: CaseClientOptions): CaseClient {
  return createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: caseFetch(options) })
}

/** One page of a list: its items and the cursor of the next page (null at the end). */
export interface Page<T> { items: T[]; next_cursor?: string | null }

/**
 * Every item of a cursor-paged list, page by page: `readPage(cursor)` reads one page (undefined for
 * the first). Stops at the page whose next_cursor is null or absent.
 *
 * ```ts
 * for await (const c of allPages((cursor) => client.GET('/v1/scenarios', { params: { query: { cursor, limit: 200 } } }))) ...
 * ```
 */
export async function* allPages<T>(readPage: (cursor: string | undefined) => Promise<{ data?: Page<T>; error?: unknown; response: Response }>): AsyncGenerator<T> {
  let cursor: string | undefined
  for (;;) {
    const { data, error, response } = await readPage(cursor)
    if (!data) throw new CaseApiError(response.status, error)
    yield* data.items
    if (!data.next_cursor) return
    cursor = data.next_cursor
  }
}

/** A problem answer turned into an error (allPages throws it). */
export class CaseApiError extends Error {
  constructor(readonly status: number, readonly problem: unknown) {
    super(`${status} ${typeof problem === 'object' && problem !== null && 'detail' in problem ? String((problem as { detail: unknown }).detail) : 'request failed'}`)
    this.name = 'CaseApiError'
  }
}
