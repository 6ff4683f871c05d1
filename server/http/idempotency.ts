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

/**
 * Runs `work` in one transaction; with a key, stores or replays its result. The result says whether
 * it was replayed so the route can mark the response.
 */
export async function runIdempotent(ctx: IdempotencyContext, work: (tx: Tx) => Promise<WorkResult>): Promise<WorkResult & { replayed: boolean }> {
  if (ctx.key === null) {
    const result = await ctx.sql.begin((tx) => work(tx))
    return { ...(result as WorkResult), replayed: false }
  }
  const route = `${ctx.method} ${ctx.path}`
  const fingerprint = createHash('sha256').update(route).update('\n').update(canonicalJson(ctx.body)).digest('hex')
  const key = ctx.key
  const outcome = await ctx.sql.begin(async (tx) => {
    await tx`
      delete from idempotency_keys
      where tenant_id = ${ctx.tenantId} and route = ${route} and key = ${key} and expires_at <= now()`
    const claimed = await tx`
      insert into idempotency_keys (tenant_id, route, key, fingerprint, response_status, response_body, expires_at)
      values (${ctx.tenantId}, ${route}, ${key}, ${fingerprint}, 0, 'null', now() + make_interval(hours => ${TTL_HOURS}))
      on conflict (tenant_id, route, key) do nothing
      returning key`
    if (claimed.length === 0) {
      const [stored] = await tx`
        select fingerprint, response_status, response_body, response_location
        from idempotency_keys
        where tenant_id = ${ctx.tenantId} and route = ${route} and key = ${key}`
      if (!stored) throw new ProblemError('conflict', 'A request with this Idempotency-Key is still in progress; retry shortly.')
      if (stored.fingerprint !== fingerprint) {
        throw new ProblemError('idempotency_conflict', 'This Idempotency-Key was used with a different request body.')
      }
      return { status: stored.response_status as number, body: JSON.parse(stored.response_body as string), location: stored.response_location ?? undefined, replayed: true }
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
