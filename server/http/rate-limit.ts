/**
 * Rate limits per workspace (spec Limits): the run-starting class and the unit-of-work class, each a
 * token bucket of `burst` tokens refilled one per `refill_seconds` (SVC_RATE_RUN / SVC_RATE_UNIT).
 * The bucket lives in PostgreSQL (`rate_buckets`, one row per workspace and class) and is refilled
 * and spent in a single INSERT ... ON CONFLICT DO UPDATE ... RETURNING statement, so every API
 * process of a deployment shares it and concurrent calls serialise on the row.
 *
 * Use, in a route of the named classes (after authorization, before any work):
 *
 * ```ts
 * import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
 * .post('/v1/scenarios/:scenarioId/evaluate', async ({ principal }) => {
 *   const tenantId = tenantOf(principal)
 *   await consumeRate(deps, tenantId, 'run')          // 429 rate_limited when the bucket is empty
 *   ...
 * }, { access: ..., detail: { responses: responses({ 202: X }, [...RATE_PROBLEMS, ...]) } })
 * ```
 *
 * Inside a transaction (e.g. runIdempotent's work) pass it as the last argument,
 * `consumeRate(deps, tenantId, 'unit', tx)`: the token is then spent only if the work commits, and an
 * idempotent replay (which does not run the work) costs nothing. Run-starting class: evaluating a
 * case, resuming a run, starting a generation or diff run. Unit-of-work class: finalising or
 * re-reading a document, publishing a version, structuring a question.
 */
import type { Config } from '../config'
import type { Sql, Tx } from '../db/connect'
import { ProblemError, type ProblemCode } from './problem'

/** The two rate classes of the spec. */
export type RateClassName = 'run' | 'unit'

/** The problem a rate-limited route can give; add it to the route's documented responses. */
export const RATE_PROBLEMS: readonly ProblemCode[] = ['rate_limited']

/** What consumeRate needs from the app's dependencies. */
export interface RateDeps { sql: Sql; config: Pick<Config, 'rateRun' | 'rateUnit'> }

/** The outcome of one take: whether it was allowed, the tokens left, and the wait for the next one. */
export interface RateTake { allowed: boolean; tokens: number; retryAfterSeconds: number }

/**
 * Takes one token of a workspace's bucket of `klass` and reports the outcome (never throws for an
 * empty bucket). Most routes want consumeRate, which turns a refusal into the 429.
 */
export async function takeRateToken(deps: RateDeps, tenantId: string, klass: RateClassName, tx?: Tx): Promise<RateTake> {
  const { burst, refillSeconds } = klass === 'run' ? deps.config.rateRun : deps.config.rateUnit
  const sql = tx ?? deps.sql
  // The refilled level: the stored tokens plus what the time since the last take brought back, capped
  // at burst. (A transaction's now() may be older than the last take of another; that counts as no time.)
  const level = sql`least(${burst}::float8, b.tokens + greatest(0, extract(epoch from (now() - b.refilled_at)))::float8 / ${refillSeconds}::float8)`
  const [row] = await sql<{ tokens: number; allowed: boolean }[]>`
    insert into rate_buckets as b (tenant_id, class, tokens, refilled_at, allowed)
    values (${tenantId}, ${klass}, ${burst - 1}::float8, now(), true)
    on conflict (tenant_id, class) do update set
      tokens = case when ${level} >= 1 then ${level} - 1 else ${level} end,
      allowed = ${level} >= 1,
      refilled_at = greatest(b.refilled_at, now())
    returning tokens, allowed`
  const tokens = Number(row!.tokens)
  const retryAfterSeconds = Math.max(1, Math.ceil((row!.allowed ? Math.max(0, 1 - tokens) : 1 - tokens) * refillSeconds))
  return { allowed: row!.allowed, tokens, retryAfterSeconds }
}

/**
 * Spends one token of a workspace's bucket of `klass` ('run' or 'unit'); throws 429 rate_limited
 * with `Retry-After` and `retry_after_seconds` (equal, whole seconds, rounded up) when it is empty.
 */
export async function consumeRate(deps: RateDeps, tenantId: string, klass: RateClassName, tx?: Tx): Promise<void> {
  const take = await takeRateToken(deps, tenantId, klass, tx)
  if (!take.allowed) {
    const what = klass === 'run' ? 'run-starting' : 'unit-of-work'
    throw new ProblemError('rate_limited', `The workspace's ${what} rate limit is reached; retry after ${take.retryAfterSeconds} seconds.`, { retryAfterSeconds: take.retryAfterSeconds })
  }
}
