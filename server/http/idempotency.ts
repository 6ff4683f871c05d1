/**
 * Idempotency-Key for every work-creating POST. The key is scoped to the workspace and the route;
 * its record (request fingerprint and response) is written in the same transaction as the work, so
 * a replay returns the stored status and body, a different body is 409 idempotency_conflict, a
 * refused request stores nothing, and concurrent duplicates wait on the record's unique key instead
 * of creating twice. Records live 24 hours; the hourly maintenance sweeps expired ones
 * (sweepExpiredIdempotency) with one scan: the store keeps no index on its always-growing expiry,
 * which every POST would append to on one right-most page.
 */
import { createHash } from 'node:crypto'
import type postgres from 'postgres'
import type { Sql, Tx } from '../db/connect'
import { ProblemError } from './problem'

/** The stored outcome of a work-creating request. */
export interface WorkResult { status: number; body: unknown; location?: string }

/** What a route needs to run its work idempotently. */
export interface IdempotencyContext {
  sql: Sql
  tenantId: string
  method: string
  path: string
  body: unknown
  key: string | null
}

const TTL_HOURS = 24
const MAX_KEY = 255

/** JSON with object keys sorted, so equal bodies have equal fingerprints whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** Reads and checks the Idempotency-Key header (at most 255 characters, not blank). */
export function idempotencyKeyOf(request: Request): string | null {
  const key = request.headers.get('idempotency-key')
  if (key === null) return null
  if (key.trim() === '' || key.length > MAX_KEY) {
    throw new ProblemError('validation', `The Idempotency-Key header must be 1 to ${MAX_KEY} characters.`)
  }
  return key
}

/** The route, fingerprint and key of an idempotent request. */
function keyOf(ctx: IdempotencyContext, key: string): { route: string; fingerprint: string; key: string } {
  const route = `${ctx.method} ${ctx.path}`
  const fingerprint = createHash('sha256').update(route).update('\n').update(canonicalJson(ctx.body)).digest('hex')
  return { route, fingerprint, key }
}

/** A stored record as the claim statement returns it. */
interface StoredRecord { fingerprint: string; response_status: number; response_body: string; response_location: string | null }

/** The replay of a stored record, or the problem it is: another body (409), or still in progress. */
function replayOf(stored: StoredRecord | undefined, fingerprint: string): WorkResult & { replayed: true } {
  if (!stored || stored.response_status === 0) throw new ProblemError('conflict', 'A request with this Idempotency-Key is still in progress; retry shortly.')
  if (stored.fingerprint !== fingerprint) {
    throw new ProblemError('idempotency_conflict', 'This Idempotency-Key was used with a different request body.')
  }
  return { status: stored.response_status, body: JSON.parse(stored.response_body), location: stored.response_location ?? undefined, replayed: true }
}

/**
 * What a one-statement create (runIdempotentStatement) writes: its response's status, Location
 * and body, and the statement that does the work.
 */
export interface OneStatementCreate {
  status: number
  /** Unique to this request (it names the resource created): tells this request's claim from a stored record. */
  location: string
  /**
   * An SQL expression of the response body's JSON text, evaluated in the statement (so a value the
   * statement itself resolves, like a workspace default, can be spliced in); the response is this text.
   */
  bodyText: postgres.PendingQuery<postgres.Row[]>
  /**
   * The data-modifying statement (no RETURNING needed), run only where `claimed` holds: a condition
   * that is true when this request claimed its key (always true without a key).
   */
  work: (claimed: postgres.PendingQuery<postgres.Row[]>) => postgres.PendingQuery<postgres.Row[]>
  /**
   * Further writes of the same statement (an appended case event): `ctes(claimed)` is more CTEs
   * after `work`, each written `, name as (...)` and writing only where `claimed` holds; `finalExpr`
   * is evaluated once by the statement's final select (a `pg_notify` of those rows: a CTE that only
   * selects runs when it is read); `after` runs in this process once the statement succeeded.
   */
  more?: { ctes: (claimed: postgres.PendingQuery<postgres.Row[]>) => postgres.PendingQuery<postgres.Row[]>; finalExpr: postgres.PendingQuery<postgres.Row[]>; after?: () => void }
}

/**
 * Runs a work-creating request whose whole work is one data-modifying statement in ONE round trip:
 * the idempotency claim (storing the final response at once), the work and the answer are one
 * statement and so its own transaction: no transaction stays open across client round trips, and
 * a failing statement stores nothing. A replay returns the stored result from the same statement.
 * An expired record is deleted and the statement run once more (rare: the hourly sweep removes them).
 */
export async function runIdempotentStatement(ctx: IdempotencyContext, create: OneStatementCreate): Promise<WorkResult & { replayed: boolean }> {
  const { sql } = ctx
  const { more } = create
  if (ctx.key === null) {
    const [row] = await sql<{ response_body: string }[]>`
      with work as (${create.work(sql`true`)}) ${more ? more.ctes(sql`true`) : sql``}
      select ${create.bodyText} as response_body ${more ? sql`, ${more.finalExpr} as more` : sql``}`
    more?.after?.()
    return { status: create.status, body: JSON.parse(row!.response_body), location: create.location, replayed: false }
  }
  const { route, fingerprint, key } = keyOf(ctx, ctx.key)
  for (let round = 0; ; round++) {
    // A conflict "updates" the stored record to itself: it is locked (a concurrent duplicate waits
    // for its first request to commit) and returned, so a replay needs no second statement.
    const [row] = await sql<(StoredRecord & { claimed: boolean; expired: boolean })[]>`
      with claim as (
        insert into idempotency_keys (tenant_id, route, key, fingerprint, response_status, response_body, response_location, expires_at)
        values (${ctx.tenantId}, ${route}, ${key}, ${fingerprint}, ${create.status}, ${create.bodyText}, ${create.location}, now() + make_interval(hours => ${TTL_HOURS}))
        on conflict (tenant_id, route, key) do update set key = excluded.key
        returning response_location = ${create.location} as claimed, expires_at <= now() as expired,
          fingerprint, response_status, response_body, response_location
      ), work as (${create.work(sql`exists (select 1 from claim where claimed)`)})
      ${more ? more.ctes(sql`exists (select 1 from claim where claimed)`) : sql``}
      select claimed, expired, fingerprint, response_status, response_body, response_location ${more ? sql`, ${more.finalExpr} as more` : sql``} from claim`
    if (row!.claimed) {
      more?.after?.()
      return { status: create.status, body: JSON.parse(row!.response_body), location: create.location, replayed: false }
    }
    if (!row!.expired || round > 0) return replayOf(row, fingerprint)
    await sql`
      delete from idempotency_keys
      where tenant_id = ${ctx.tenantId} and route = ${route} and key = ${key} and expires_at <= now()`
  }
}

/**
 * Runs `work` in one transaction; with a key, stores or replays its result. The result says whether
 * it was replayed so the route can mark the response.
 */
export async function runIdempotent(ctx: IdempotencyContext, work: (tx: Tx) => Promise<WorkResult>): Promise<WorkResult & { replayed: boolean }> {
  if (ctx.key === null) {
    const result = await ctx.sql.begin((tx) => work(tx))
    return { ...(result as WorkResult), replayed: false }
  }
  const { route, fingerprint, key } = keyOf(ctx, ctx.key)
  const outcome = await ctx.sql.begin(async (tx) => {
    // One statement claims the key: a new record, or an expired one taken over (a live one is left
    // as it is, locked until this transaction ends, and read below).
    const claimed = await tx`
      insert into idempotency_keys (tenant_id, route, key, fingerprint, response_status, response_body, expires_at)
      values (${ctx.tenantId}, ${route}, ${key}, ${fingerprint}, 0, 'null', now() + make_interval(hours => ${TTL_HOURS}))
      on conflict (tenant_id, route, key) do update
        set fingerprint = excluded.fingerprint, response_status = 0, response_body = 'null', response_location = null,
            created_at = now(), expires_at = excluded.expires_at
        where idempotency_keys.expires_at <= now()
      returning key`
    if (claimed.length === 0) {
      const [stored] = await tx<StoredRecord[]>`
        select fingerprint, response_status, response_body, response_location
        from idempotency_keys
        where tenant_id = ${ctx.tenantId} and route = ${route} and key = ${key}`
      return replayOf(stored, fingerprint)
    }
    const result = await work(tx)
    await tx`
      update idempotency_keys
      set response_status = ${result.status}, response_body = ${JSON.stringify(result.body)}, response_location = ${result.location ?? null}
      where tenant_id = ${ctx.tenantId} and route = ${route} and key = ${key}`
    return { ...result, replayed: false }
  })
  return outcome as WorkResult & { replayed: boolean }
}

/**
 * For a work-creating operation that cannot replay its result (it answers a secret shown once, or
 * its own state already says what a repeat does): a request carrying Idempotency-Key is refused
 * with a problem that says why, and nothing is created. A key is never silently ignored.
 */
export function refuseIdempotencyKey(request: Request, why: string): void {
  if (request.headers.has('idempotency-key')) throw new ProblemError('validation', `This operation takes no Idempotency-Key: ${why}.`)
}

/**
 * Deletes every expired idempotency record and returns how many. A sequential scan once an hour
 * instead of an index on `expires_at` that every work-creating POST would write to.
 */
export async function sweepExpiredIdempotency(tx: Tx): Promise<number> {
  const result = await tx`delete from idempotency_keys where expires_at <= now()`
  return result.count
}

/** The part of Elysia's `set` a work result writes to. */
interface ReplySet { status?: number | string; headers: Record<string, string | number> }

/**
 * Applies a work result to the response: its status, its Location, and `Idempotent-Replayed: true`
 * when it was replayed. Returns the body for the route to return.
 */
export function replyWith(set: ReplySet, result: WorkResult & { replayed: boolean }): unknown {
  set.status = result.status
  if (result.location) set.headers.location = result.location
  if (result.replayed) set.headers['idempotent-replayed'] = 'true'
  return result.body
}
