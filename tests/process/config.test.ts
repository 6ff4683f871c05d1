// Configuration: a bad value stops the start with one line naming the variable.
import { expect, test, setDefaultTimeout } from 'bun:test'
import { availableParallelism, tmpdir } from 'node:os'
import { mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../server/db/connect'
import { ConfigError, defaultPoolSize, loadConfig } from '../../server/config'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const bad: Array<[string, Record<string, string>]> = [
  ['PORT', { PORT: 'eighty' }],
  ['PORT', { PORT: '70000' }],
  ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
  ['DATABASE_URL', { DATABASE_URL: 'postgres://svc@localhost/svc?host=var/run/postgresql' }],
  ['SVC_BASE_URL', { SVC_BASE_URL: 'not a url' }],
  ['SVC_OIDC_ISSUER', { SVC_OIDC_ISSUER: 'ftp://idp' }],
  ['SVC_OIDC_AUDIENCE', { SVC_OIDC_ISSUER: 'https://idp.example' }],
  ['SVC_OIDC_AUDIENCE', { SVC_OIDC_ISSUER: 'https://idp.example', SVC_OIDC_AUDIENCE: 'svc-api,,other' }],
  ['SVC_SMTP_URL', { SVC_SMTP_URL: 'http://mail' }],
  ['SVC_RATE_RUN', { SVC_RATE_RUN: 'ten' }],
  ['SVC_RATE_UNIT', { SVC_RATE_UNIT: '0/2' }],
  ['SVC_WEBHOOK_RETRY_INITIAL_MS', { SVC_WEBHOOK_RETRY_INITIAL_MS: '-5' }],
  ['SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES', { SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: '127.0.0.1,example.com' }],
  ['SVC_SECRET_KEY', { SVC_SECRET_KEY: 'c2hvcnQ=' }],
  ['SVC_EMBED_SESSION_TTL_S', { SVC_EMBED_SESSION_TTL_S: '0' }],
  ['SVC_EXAMPLE_HOST', { SVC_EXAMPLE_HOST: 'yes' }],
  ['SVC_S3_BUCKET', { SVC_S3_ENDPOINT: 'https://s3.example' }],
]

test.each(bad)('a bad %s is refused with a line naming it', (name, env) => {
  expect(() => loadConfig(env)).toThrow(ConfigError)
  try { loadConfig(env) } catch (e) {
    expect((e as Error).message).toContain(name)
    expect((e as Error).message).not.toContain('\n')
  }
})

test('defaults follow the operating contract', () => {
  const c = loadConfig({})
  expect(c.port).toBe(3000)
  expect(c.host).toBe('0.0.0.0')
  expect(c.baseUrl).toBe('http://localhost:3000')
  expect(c.oidcOrgClaim).toBe('urn:idp:iam:user:resourceowner:id')
  expect(c.mailFrom).toBe('notifications@localhost')
  expect(c.webhookRetryInitialMs).toBe(60_000)
  expect(c.rateRun).toEqual({ burst: 10, refillSeconds: 30 })
  expect(c.rateUnit).toEqual({ burst: 120, refillSeconds: 2 })
  expect(c.embedHandoffTtlSeconds).toBe(60)
  expect(c.embedSessionTtlSeconds).toBe(1800)
  expect(c.maxJsonBodyBytes).toBe(1_048_576)
  expect(c.databaseUrl).toBeUndefined()
  expect(c.dbPoolMax).toBe(Math.min(20, 2 * availableParallelism() + 1))
  expect([1, 2, 8, 16, 64].map((cores) => defaultPoolSize(cores))).toEqual([3, 5, 17, 20, 20])
  expect(loadConfig({ SVC_DB_POOL_MAX: '12' }).dbPoolMax).toBe(12)
  // A worker-only process gets a connection per concurrent job plus two unless the pool is set.
  expect(c.workerDbPoolMax).toBe(Math.max(c.dbPoolMax, 10))
  expect(loadConfig({ SVC_JOB_CONCURRENCY: '32' }).workerDbPoolMax).toBe(Math.max(c.dbPoolMax, 34))
  expect(loadConfig({ SVC_DB_POOL_MAX: '12', SVC_JOB_CONCURRENCY: '32' }).workerDbPoolMax).toBe(12)
  expect(c.dbConnectTimeoutMs).toBe(5_000)
  expect(loadConfig({ SVC_DB_CONNECT_TIMEOUT_MS: '250' }).dbConnectTimeoutMs).toBe(250)
  expect(c.s3).toBeUndefined()
})

test('the service process exits non-zero printing only that line', async () => {
  const proc = Bun.spawn(['bun', 'server/main.ts'], { env: { ...process.env, SVC_RATE_RUN: 'lots' }, stdout: 'pipe', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  expect(code).toBe(2)
  expect(stderr.trim()).toBe('invalid configuration: SVC_RATE_RUN must be burst/refill_seconds like 10/30, got "lots"')
})

test('an issuer without an audience stops the start: exit 2 and one line naming SVC_OIDC_AUDIENCE', async () => {
  const { SVC_OIDC_AUDIENCE: _unset, ...inherited } = process.env
  const proc = Bun.spawn(['bun', 'server/main.ts'], { env: { ...inherited, SVC_OIDC_ISSUER: 'https://idp.example' }, stdout: 'pipe', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  expect(code).toBe(2)
  expect(stderr.trim()).toBe("invalid configuration: SVC_OIDC_AUDIENCE must be set when SVC_OIDC_ISSUER is set (the aud value the issuer puts in this service's access tokens)")
  const c = loadConfig({ SVC_OIDC_ISSUER: 'https://idp.example/', SVC_OIDC_AUDIENCE: ' svc-api , https://svc.example ' })
  expect(c.oidcAudience).toEqual(['svc-api', 'https://svc.example'])
  expect(loadConfig({ SVC_OIDC_AUDIENCE: 'svc-api' }).oidcAudience).toBeUndefined()
})

test('SVC_DB_CONNECT_TIMEOUT_MS bounds a connection attempt: the client is given the setting, and a server that accepts and never answers fails the query with CONNECT_TIMEOUT', async () => {
  const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-connect-'))
  const db = await openDatabase({ databaseUrl: `postgres://svc@127.0.0.1:${silent.port}/svc`, dataDir, max: 1, connectTimeoutMs: 300 })
  try {
    expect(db.sql.options.connect_timeout).toBe(0.3) // seconds, as the client counts them (the default is 5)
    const error = await db.sql`select 1`.then(() => undefined, (e: { code?: string }) => e)
    expect(error?.code).toBe('CONNECT_TIMEOUT')
  } finally {
    await db.close().catch(() => {})
    silent.stop(true)
    rmSync(dataDir, { recursive: true, force: true })
  }
})
