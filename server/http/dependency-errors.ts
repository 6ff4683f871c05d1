/**
 * Dependency outages as the spec's 503 `unavailable` with Retry-After: errors that say the database
 * (or the blob store) cannot be reached right now, as opposed to a fault of the request or the code.
 * The client library's own connection errors, the socket errors under it, and PostgreSQL's
 * connection-exception and operator-intervention states (a restart, a shutdown, a recovery).
 */
import { ProblemError } from './problem'

/** Seconds a client should wait before retrying while a dependency is away. */
export const OUTAGE_RETRY_AFTER_SECONDS = 2

const CONNECTION_CODES = new Set([
  // porsager/postgres; QUERY_TIMEOUT and POOL_TIMEOUT are the client patch's statement deadline and pool wait
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'QUERY_TIMEOUT', 'POOL_TIMEOUT',
  // sockets and name resolution
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ConnectionRefused', 'ConnectionClosed',
  // the local blob store's disk failing or full (a retry can succeed once an operator has acted)
  'EIO', 'ENOSPC', 'EDQUOT',
])

/**
 * PostgreSQL SQLSTATEs that say the database is unavailable right now (docs/operations.md has the
 * table): class 08 (connection exception, PgBouncer's errors too), 57P01-57P05 (terminated by an
 * administrator, crash, starting up, database dropped, idle session timeout), 57014 (a statement
 * timeout), 3D000 (the database does not exist: renamed or dropped away), 53 (insufficient
 * resources: too many clients, disk full, out of memory), 25006 (read-only: a standby after a
 * failover), and 55000 when it says the database is not accepting connections (ALLOW_CONNECTIONS
 * false; 55000 otherwise is a fault of the statement).
 */
function isServerAway(sqlState: string, message: string): boolean {
  if (sqlState.startsWith('08') || sqlState.startsWith('53') || sqlState.startsWith('57P')) return true
  if (sqlState === '57014' || sqlState === '3D000' || sqlState === '25006') return true
  return sqlState === '55000' && /not currently accepting connections/i.test(message)
}

/** Whether an error means a dependency is unreachable (retry later) rather than a fault. */
export function isDependencyOutage(error: unknown): boolean {
  for (let e = error as { code?: unknown; name?: unknown; cause?: unknown; $metadata?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    const code = typeof e.code === 'string' ? e.code : undefined
    if (code && (CONNECTION_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isServerAway(code, String((e as { message?: unknown }).message ?? ''))))) return true
    // The S3 client: a network failure, or the store answering 5xx.
    if (e.name === 'TimeoutError' || e.name === 'NetworkingError') return true
    const status = (e.$metadata as { httpStatusCode?: number } | undefined)?.httpStatusCode
    if (status !== undefined && status >= 500) return true
  }
  return false
}

/** The problem for a dependency outage, or undefined when the error is not one. */
export function dependencyProblem(error: unknown): ProblemError | undefined {
  if (!isDependencyOutage(error)) return undefined
  return new ProblemError('unavailable', 'A service this request depends on is unreachable; retry shortly.', { retryAfterSeconds: OUTAGE_RETRY_AFTER_SECONDS })
}
