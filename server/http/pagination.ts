/**
 * Pages of results: `{items, next_cursor}` with keyset pagination on time-ordered ids, and opaque
 * cursors signed with the service key so a garbled cursor, one reused with other filters, or one
 * of another workspace's list is refused with 422 invalid_cursor. A cursor's scope always names the
 * workspace (cursorScope), so a list cannot be written without binding its cursors to it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ProblemError } from './problem'
import { DEFAULT_PAGE_LIMIT } from '../../schemas/common'

/** The page object of the spec. */
export interface Page<T> { items: T[]; next_cursor: string | null }

/** The rows a store reads for one page: after a keyset position, at most `fetch` rows (limit + 1). */
export interface PageWindow { readonly after: string | null; readonly fetch: number }

/**
 * One request of a list route, opened by `Cursors.open`: the page size, the keyset position its
 * cursor continues after, and the page built from the rows fetched.
 */
export interface ListRequest extends PageWindow {
  /** The page size: the query's `limit`, or the default. */
  readonly limit: number
  /** How many rows to fetch: one more than `limit`, the extra one only says another page exists. */
  readonly fetch: number
  /** The position the cursor continues after (null on the first page). */
  readonly after: string | null
  /** The page of `rows` (fetched with `fetch`); `key` picks a row's keyset position, `render` its API shape. */
  page<R, T>(rows: R[], key: (row: R) => string, render: (row: R) => T): Page<T>
}

/** What a cursor is valid for: one workspace's list with its filters. Made only by cursorScope. */
export type CursorScope = { readonly tenantId: string; readonly list: string; readonly [cursorScopeBrand]: true }
declare const cursorScopeBrand: unique symbol

/** The scope of a list of workspace `tenantId`; `list` names the route and its filters. */
export function cursorScope(tenantId: string, list: string): CursorScope {
  return { tenantId, list } as CursorScope
}

/** Signs and checks cursors with one key. */
export class Cursors {
  readonly #key: Uint8Array
  readonly #previous: Uint8Array[]
  /** `previous`: keys of earlier service keys, accepted when reading a cursor (never used to sign one). */
  constructor(key: Uint8Array, previous: Uint8Array[] = []) { this.#key = key; this.#previous = previous }

  #mac(payload: string, key: Uint8Array = this.#key): Buffer {
    return createHmac('sha256', key).update(payload).digest().subarray(0, 16)
  }

  #signedByAKey(payload: string, given: Buffer): boolean {
    for (const key of [this.#key, ...this.#previous]) {
      const expected = this.#mac(payload, key)
      if (given.length === expected.length && timingSafeEqual(given, expected)) return true
    }
    return false
  }

  /** An opaque cursor continuing after `after`, valid only with the same `scope` (workspace, route and filters). */
  encode(after: string, scope: CursorScope): string {
    const payload = Buffer.from(JSON.stringify({ a: after, s: scope.list, t: scope.tenantId })).toString('base64url')
    return `${payload}.${this.#mac(payload).toString('base64url')}`
  }

  /** The position a cursor continues after; 422 invalid_cursor when garbled, of another workspace or of another scope. */
  decode(cursor: string, scope: CursorScope): string {
    const refuse = () => new ProblemError('invalid_cursor', 'The cursor is not valid for this list; start again without a cursor.')
    const [payload, mac] = cursor.split('.')
    if (!payload || !mac) throw refuse()
    // Only the MAC's canonical spelling: base64url ignores the unused low bits of its last
    // character, so a changed last character could otherwise still read as the same MAC.
    const given = Buffer.from(mac, 'base64url')
    if (given.toString('base64url') !== mac || !this.#signedByAKey(payload, given)) throw refuse()
    let parsed: { a?: unknown; s?: unknown; t?: unknown }
    try { parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) } catch { throw refuse() }
    if (typeof parsed.a !== 'string' || parsed.s !== scope.list || parsed.t !== scope.tenantId) throw refuse()
    return parsed.a
  }

  /**
   * Opens one request of a list route: its page size (default 50) and its cursor decoded within
   * `scope` (422 invalid_cursor otherwise). Every list route goes through here, so the default and
   * the cursor check are written once.
   */
  open(query: { limit?: number; cursor?: string }, scope: CursorScope): ListRequest {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const after = query.cursor !== undefined ? this.decode(query.cursor, scope) : null
    return { limit, fetch: limit + 1, after, page: (rows, key, render) => this.page(rows, limit, scope, key, render) }
  }

  /**
   * Builds a page from rows fetched with `limit + 1`: the extra row only says another page exists.
   * `key` picks the keyset position of a row.
   */
  page<R, T>(rows: R[], limit: number, scope: CursorScope, key: (row: R) => string, render: (row: R) => T): Page<T> {
    const more = rows.length > limit
    const shown = more ? rows.slice(0, limit) : rows
    return {
      items: shown.map(render),
      next_cursor: more ? this.encode(key(shown[shown.length - 1]!), scope) : null,
    }
  }
}
