/**
 * Starts the real app on a random port over a database of its own, exactly as main.ts wires it,
 * and offers the seeding the operator CLI does (workspaces, members, keys).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { loadConfig, type Config } from '../../server/config'
import { openDatabase, type Database, type Sql } from '../../server/db/connect'
import { serveControlSocket } from '../../server/control-socket'
import { migrate } from '../../server/db/migrate'
import { createApp } from '../../server/app'
import { wireDeps } from '../../server/wiring'
import type { AppDeps } from '../../server/deps'
import { createTenant } from '../../server/workspaces/tenants-store'
import { addMember } from '../../server/workspaces/users-store'
import { createApiKey } from '../../server/workspaces/api-keys-store'
import { createTestDatabase, type TestDatabase } from './database'
import { startRunner, type Runner, type RunnerOptions } from '../../jobs/runner'
import type { JobKind } from '../../jobs/types'
import { JOB_KINDS } from '../../server/job-kinds'
import { SERVER_BODY_LIMIT } from '../../server/http/body'
import { createLogger, type Level } from '../../server/observability/log'
import { serveMetrics } from '../../server/observability/metrics'
import { rememberCredential } from './log-hygiene'
import { TEST_AUDIENCE } from './oidc'
import { seedEmbeddedDataDir } from './pgdata-template'

/** A running app of a test file. */
export interface TestApp {
  url: string
  sql: Sql
  config: Config
  deps: AppDeps
  db: Database
  /** Creates a workspace (slug defaults to a random one). */
  tenant(slug?: string, fields?: { name?: string; organizationId?: string }): Promise<{ id: string; slug: string }>
  /** Mints an API key in a workspace and returns its plaintext. */
  apiKey(tenantId: string, scopes: string[], opts?: { environment?: 'live' | 'test'; expiresAt?: Date | null }): Promise<string>
  /** Adds an active member bound to `sub`. */
  member(tenantId: string, sub: string, role: string, email?: string): Promise<{ id: string }>
  /** The in-process job runner (undefined with `runner: false`). */
  runner: Runner | undefined
  /** The metrics listener's URL (`.../metrics`) when SVC_METRICS_PORT is set in `env`. */
  metricsUrl: string | undefined
  stop(): Promise<void>
}

/** Options of a test app: extra environment, and a hook to add test-only routes to the app. */
export interface StartOptions {
  env?: Record<string, string>
  extend?: (app: ReturnType<typeof createApp>) => unknown
  /**
   * The in-process job runner: on by default with a 20 ms poll, running the service's job kinds
   * (JOB_KINDS) unless `kinds` names others; options override; false for none (drive jobs with runJobsUntilIdle).
   */
  runner?: false | (RunnerOptions & { kinds?: Record<string, JobKind> })
}

/** Starts an app; call stop() in afterAll. */
export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  // Already migrated (a copy of a template, on PostgreSQL and embedded alike): migrate() below finds nothing to do.
  const database: TestDatabase = await createTestDatabase('migrated')
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'))
  const config = loadConfig({
    SVC_SECRET_KEY: randomBytes(32).toString('base64'),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    SVC_DATA_DIR: dataDir,
    PORT: '0',
    // A test that trusts the local issuer (tests/helpers/oidc.ts) expects its tokens' audience unless it names one.
    ...(options.env?.SVC_OIDC_ISSUER !== undefined ? { SVC_OIDC_AUDIENCE: TEST_AUDIENCE } : {}),
    ...options.env,
  })
  // The embedded database starts from a copy of an initialised cluster instead of running initdb.
  if (!config.databaseUrl) await seedEmbeddedDataDir(config.dataDir)
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: config.dbPoolMax, prepare: config.dbPrepare, listenUrl: config.databaseListenUrl, statementTimeoutMs: config.dbStatementTimeoutMs, poolWaitMs: config.dbPoolWaitMs, connectTimeoutMs: config.dbConnectTimeoutMs })
  await migrate(db.sql)
  // Like main.ts: on the embedded database the operator CLI reaches this process through its control socket.
  const closeControlSocket = db.embedded ? serveControlSocket(config.dataDir, db, async (d, argv) => (await import('../../server/cli')).executeCommand(d, argv)) : () => {}
  // Every line is made (and checked for credentials by the preload); only warnings and errors reach
  // the test output unless SVC_TEST_LOG_LEVEL asks for more.
  const log = createLogger({ level: config.logLevel, stdoutLevel: (process.env.SVC_TEST_LOG_LEVEL as Level | undefined) ?? 'warn' })
  const deps = wireDeps(config, db, () => false, { log })
  const metricsServer = config.metricsPort !== undefined ? serveMetrics(deps.metrics, config.metricsPort, '127.0.0.1') : undefined
  const app = createApp(deps)
  options.extend?.(app)
  app.listen({ port: config.port, hostname: '127.0.0.1', maxRequestBodySize: SERVER_BODY_LIMIT })
  const url = `http://127.0.0.1:${app.server!.port}`
  const { kinds = JOB_KINDS, ...runnerOptions } = options.runner === false ? {} : options.runner ?? {}
  const runner = options.runner === false ? undefined : startRunner(deps, kinds, { pollMs: 20, drainTimeoutMs: 5_000, ...runnerOptions })
  return {
    url,
    sql: db.sql,
    config: { ...config, baseUrl: url },
    deps,
    db,
    async tenant(slug = `t-${crypto.randomUUID().slice(0, 8)}`, fields = {}) {
      const { tenant } = await createTenant(db.sql, { slug, ...fields })
      return { id: tenant.id, slug: tenant.slug }
    },
    async apiKey(tenantId, scopes, opts = {}) {
      const key = await createApiKey(db.sql, tenantId, { name: 'test', scopes, environment: opts.environment ?? 'live', expiresAt: opts.expiresAt ?? null })
      rememberCredential(key.key)
      return key.key
    },
    async member(tenantId, sub, role, email = `${sub}@example.test`) {
      const user = await addMember(db.sql, tenantId, { email, sub, role })
      return { id: user.id }
    },
    runner,
    metricsUrl: metricsServer ? `http://127.0.0.1:${metricsServer.port}/metrics` : undefined,
    async stop() {
      metricsServer?.stop()
      await deps.events.close()
      await runner?.stop()
      await deps.parser.close()
      await app.stop(true)
      closeControlSocket()
      await db.close()
      await database.drop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** The parsed result of one HTTP call. */
export interface Reply { status: number; headers: Headers; body: any; text: string }

/** Calls the app over HTTP with an optional bearer credential and JSON body. */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; raw?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`
  let body: BodyInit | undefined = opts.raw
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(base + path, { method, headers, body })
  const text = await res.text()
  let parsed: unknown = undefined
  try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
  return { status: res.status, headers: res.headers, body: parsed, text }
}

/** Asserts the problem+json contract of a reply and returns its body. */
export function problemOf(reply: Reply) {
  if (reply.headers.get('content-type') !== 'application/problem+json') {
    throw new Error(`expected problem+json, got ${reply.headers.get('content-type')} ${reply.status}: ${reply.text}`)
  }
  if (reply.body.request_id !== reply.headers.get('x-request-id')) throw new Error('request_id differs from X-Request-Id')
  return reply.body as { type: string; title: string; status: number; detail: string; instance: string; request_id: string; errors?: { pointer: string; message: string }[]; retry_after_seconds?: number }
}
