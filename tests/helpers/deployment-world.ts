/**
 * A many-process deployment's surroundings for the tests that run one (PostgreSQL only): a migrated
 * database of the test's own behind PgBouncer in transaction mode (SVC_DB_PREPARE=false; LISTEN
 * through DATABASE_LISTEN_URL, straight to the server), S3-compatible storage (s3rver), an HTTPS
 * webhook receiver, one workspace key and one shared SVC_SECRET_KEY; API processes and workers are
 * started on demand, and a request helper spreads calls over the API processes that are up.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
// @ts-expect-error s3rver ships no type declarations (a test-only peer)
import S3rver from 's3rver'
import { createTestDatabase } from './database'
import { startPgBouncer, pgbouncerBinary, type PgBouncer } from './pgbouncer'
import { startReceiver, testPki, type Receiver } from './https-receiver'
import { spawnService, type ServiceProcess } from './service-process'
import { spawnWorker, type WorkerProcess } from './worker-process'
import { rememberCredential } from './log-hygiene'
import { postgresClient, type Sql } from '../../server/db/connect'
import { migrate } from '../../server/db/migrate'
import { createTenant } from '../../server/workspaces/tenants-store'
import { createApiKey } from '../../server/workspaces/api-keys-store'

/** Whether a deployment can run here: PostgreSQL (DATABASE_URL) and pgbouncer; CI has both. */
export const deploymentEnabled = Boolean(process.env.DATABASE_URL) && pgbouncerBinary() !== undefined

/** Document and evaluation states that end them. */
export const TERMINAL_DOCS = ['ready', 'ready_degraded', 'failed', 'unsupported_pending']
export const TERMINAL_EVALS = ['succeeded', 'failed', 'canceled']

/** A running deployment's surroundings and processes. */
export interface DeploymentWorld {
  /** The environment every process of the deployment starts with. */
  env: Record<string, string>
  /** The workspace's API key (scenarios, notifications and question sets, read and write). */
  key: string
  /** A direct connection to the deployment's database, for checks. */
  sql: Sql
  bouncer: PgBouncer
  receiver: Receiver
  /** API processes and workers started so far; a test sets a slot to undefined when it kills one. */
  apis: (ServiceProcess | undefined)[]
  workers: (WorkerProcess | undefined)[]
  /** A fresh data directory, removed at stop(). */
  dataDir(): string
  /** Starts an API process with the deployment's environment (and `extra`); not added to `apis`. */
  startApi(extra?: Record<string, string>): Promise<ServiceProcess>
  /** Starts a worker with the deployment's environment; not added to `workers`. */
  startWorker(): Promise<WorkerProcess>
  /** The API processes in `apis` that are up. */
  liveApis(): ServiceProcess[]
  /** Calls a live API process; a refused or reset connection or a 503 is tried again on another (bounded). */
  api(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any }>
  /** Kills every process and removes everything the world made. */
  stop(): Promise<void>
}

/** Starts the surroundings; no API process or worker is started yet. */
export async function startDeploymentWorld(): Promise<DeploymentWorld> {
  const database = await createTestDatabase()
  const direct = database.url!
  const sql = postgresClient(direct, { max: 3, onnotice: () => {} })
  await migrate(sql)
  const tenant = await createTenant(sql, { slug: `deploy-${crypto.randomUUID().slice(0, 8)}` })
  const key = (await createApiKey(sql, tenant.tenant.id, { name: 'deploy', scopes: ['scenarios:write', 'scenarios:read', 'notifications:write', 'question_sets:write', 'question_sets:read'], environment: 'live', expiresAt: null })).key
  rememberCredential(key)
  const bouncer = await startPgBouncer(direct, { poolMode: 'transaction', poolSize: 12 })
  const s3Dir = mkdtempSync(join(tmpdir(), 'svc-deploy-s3-'))
  const s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'documents', configs: [] }] } as never) as { run(): Promise<unknown>; close(): Promise<void> }
  const addr = await s3.run() as unknown as { port: number }
  const receiver = await startReceiver()
  // Every third delivery's first request fails: the retry must carry the same delivery id and bytes.
  receiver.respond((r) => (r.nth === 1 && parseInt((r.deliveryId ?? '0').slice(-2), 16) % 3 === 0 ? { status: 503 } : { status: 204 }))
  const env: Record<string, string> = {
    DATABASE_URL: bouncer.url(direct),
    DATABASE_LISTEN_URL: direct,
    SVC_DB_PREPARE: 'false',
    SVC_DB_POOL_MAX: '4',
    SVC_SECRET_KEY: randomBytes(32).toString('base64'),
    SVC_S3_ENDPOINT: `http://127.0.0.1:${addr.port}`, SVC_S3_BUCKET: 'documents', SVC_S3_REGION: 'us-east-1', SVC_S3_ACCESS_KEY_ID: 'S3RVER', SVC_S3_SECRET_ACCESS_KEY: 'S3RVER',
    SVC_WEBHOOK_CA_FILE: testPki().caFile,
    SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: receiver.host,
    SVC_WEBHOOK_RETRY_INITIAL_MS: '200',
    SVC_JOB_LEASE_MS: '3000',
    SVC_JOB_POLL_MS: '100',
    SVC_PARSE_WORKERS: '1',
    SVC_ACCESS_LOG: '0',
    SVC_RATE_UNIT: '100000/1', SVC_RATE_RUN: '100000/1', // the pooling run evaluates as fast as it can
  }
  const dataDirs: string[] = []
  const apis: (ServiceProcess | undefined)[] = []
  const workers: (WorkerProcess | undefined)[] = []
  const dataDir = () => { const d = mkdtempSync(join(tmpdir(), 'svc-deploy-')); dataDirs.push(d); return d }
  const liveApis = () => apis.filter((a): a is ServiceProcess => a !== undefined && a.proc.exitCode === null && a.proc.signalCode === null)
  let rr = 0
  return {
    env, key, sql, bouncer, receiver, apis, workers, dataDir, liveApis,
    startApi: (extra = {}) => spawnService(['bun', 'server/main.ts'], { ...env, SVC_DATA_DIR: dataDir(), ...extra }),
    startWorker: () => spawnWorker({ ...env, SVC_DATA_DIR: dataDir() }),
    async api(method, path, opts = {}) {
      for (let attempt = 0; ; attempt++) {
        const live = liveApis()
        const base = live[rr++ % Math.max(1, live.length)]?.url
        try {
          if (!base) throw new Error('no API process is up')
          const res = await fetch(base + path, {
            method,
            headers: { authorization: `Bearer ${key}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
            body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
          })
          const text = await res.text()
          if (res.status === 503 && attempt < 100) { await Bun.sleep(100); continue }
          return { status: res.status, body: text ? JSON.parse(text) : undefined }
        } catch (e) {
          if (attempt >= 100) throw e
          await Bun.sleep(100)
        }
      }
    },
    async stop() {
      for (const p of [...apis, ...workers]) p?.proc.kill('SIGKILL')
      await Promise.all([...apis, ...workers].map((p) => p?.proc.exited))
      await sql.end({ timeout: 5 })
      await bouncer.stop()
      await receiver.stop()
      await s3.close()
      await database.drop()
      for (const d of [...dataDirs, s3Dir]) rmSync(d, { recursive: true, force: true })
    },
  }
}

/** Polls `check` every 200 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(200)
  }
}
