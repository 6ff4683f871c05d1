// Which errors are a dependency outage (503 unavailable with Retry-After) and which stay faults (500):
// the one table behind server/http/dependency-errors.ts. The errors here have the shapes the real
// clients throw (porsager postgres, sockets, the AWS SDK); the process tests produce them for real.
import { expect, setDefaultTimeout, test } from 'bun:test'
import { dependencyProblem, isDependencyOutage, OUTAGE_RETRY_AFTER_SECONDS } from '../../server/http/dependency-errors'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const withCode = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(code), { code, ...extra })

test.each([
  ['the client: connection closed', withCode('CONNECTION_CLOSED')],
  ['the client: connect timeout', withCode('CONNECT_TIMEOUT')],
  ['the client: pool ended', withCode('CONNECTION_ENDED')],
  ['socket: refused', withCode('ECONNREFUSED')],
  ['socket: reset', withCode('ECONNRESET')],
  ['Bun fetch: refused', withCode('ConnectionRefused')],
  ['PostgreSQL 57P01 admin_shutdown', withCode('57P01')],
  ['PostgreSQL 57P03 cannot_connect_now', withCode('57P03')],
  ['PostgreSQL 08006 connection_failure', withCode('08006')],
  ['PostgreSQL 53300 too_many_connections', withCode('53300')],
  ['PostgreSQL 57P02 crash_shutdown', withCode('57P02')],
  ['PostgreSQL 57P04 database_dropped', withCode('57P04')],
  ['PostgreSQL 3D000 invalid_catalog_name (the database renamed away)', withCode('3D000', { message: 'database "svc" does not exist' })],
  ['PostgreSQL 55000 not accepting connections (ALLOW_CONNECTIONS false)', Object.assign(new Error('database "svc" is not currently accepting connections'), { code: '55000' })],
  ['PostgreSQL 25006 read_only_sql_transaction (a standby after failover)', withCode('25006')],
  ['PostgreSQL 57014 statement timeout', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })],
  ['PostgreSQL 53100 disk_full', withCode('53100')],
  ['PgBouncer 08P01 (query_wait_timeout)', withCode('08P01')],
  ['the client: statement deadline (patch part 7)', withCode('QUERY_TIMEOUT')],
  ['the client: pool wait (patch part 7)', withCode('POOL_TIMEOUT')],
  ['disk: EIO', withCode('EIO')],
  ['disk: ENOSPC', withCode('ENOSPC')],
  ['S3: store answered 503', Object.assign(new Error('SlowDown'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } })],
  ['S3: timeout', Object.assign(new Error('timed out'), { name: 'TimeoutError' })],
  ['wrapped in a cause', new Error('upload failed', { cause: withCode('ECONNREFUSED') })],
])('%s is an outage', (_, error) => {
  expect(isDependencyOutage(error)).toBe(true)
  const problem = dependencyProblem(error)!
  expect(problem.code).toBe('unavailable')
  expect(problem.options.retryAfterSeconds).toBe(OUTAGE_RETRY_AFTER_SECONDS)
})

test.each([
  ['a unique violation', withCode('23505')],
  ['a syntax error', withCode('42601')],
  ['55000 for another reason', Object.assign(new Error('cannot do that in this state'), { code: '55000' })],
  ['40001 serialization_failure', withCode('40001')],
  ['a missing file', withCode('ENOENT')],
  ['S3: not found', Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } })],
  ['a TypeError', new TypeError('x is undefined')],
  ['a string', 'boom'],
  ['undefined', undefined],
])('%s is not', (_, error) => {
  expect(isDependencyOutage(error)).toBe(false)
  expect(dependencyProblem(error)).toBeUndefined()
})
