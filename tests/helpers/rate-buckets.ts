/**
 * Emptying a workspace's rate bucket for a test of the 429 path.
 */
import type { TestApp } from './app'
import { takeRateToken, type RateClassName } from '../../server/http/rate-limit'

/**
 * Spends a workspace's bucket of `klass` through the service's own take until it refuses, then sets
 * what fraction of a token the last take left to zero. Without that, the fraction (up to just under
 * one token) refills to a whole token in a fraction of the refill interval: on a loaded machine the
 * next request came more than that later and was let through (seen: a complete answered 202 instead
 * of 429). Zeroed, the next token is a whole refill interval away (30 s for the unit class).
 */
export async function emptyRateBucket(app: TestApp, tenantId: string, klass: RateClassName): Promise<void> {
  while ((await takeRateToken(app.deps, tenantId, klass)).allowed) { /* spending the burst */ }
  await app.sql`update rate_buckets set tokens = 0, refilled_at = greatest(refilled_at, now()) where tenant_id = ${tenantId} and class = ${klass}`
}
