/**
 * The service: configuration, database, migrations, the HTTP listener and the job runner.
 * `--worker` runs the job runner alone. SIGTERM/SIGINT drain: readiness fails, the listener stops,
 * in-flight work finishes, the database closes; within SVC_DB_STATEMENT_TIMEOUT_MS +
 * SVC_DB_POOL_WAIT_MS + 30 s, else the process exits 1. Loaded by main.ts only when the process serves.
 */
import { ConfigError, loadConfig, type Config } from './config'
import { EmbeddedDatabaseInUse, openDatabase, type Database } from './db/connect'
import { serveControlSocket } from './control-socket'
import { migrate } from './db/migrate'
import { autovacuumGaps, autovacuumWarning } from './db/upkeep'
import { createApp } from './app'
import { wireDeps } from './wiring'
import { startRunner } from '../jobs/runner'
import { JOB_KINDS } from './job-kinds'
import { SERVER_BODY_LIMIT } from './http/body'
import { createLogger, flushLogs } from './observability/log'
import { serveMetrics } from './observability/metrics'
import { keepServingOnUnhandledRejection } from './observability/last-resort'

/** Starts the service (or, with --worker, the job runner alone) and drains it on SIGTERM/SIGINT. */
export async function start() {
  let config: Config
  try {
    config = loadConfig()
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message)
      process.exit(2)
    }
    throw e
  }
  const workerOnly = process.argv.includes('--worker')
  const logger = createLogger({ level: config.logLevel })
  const log = (level: 'info' | 'warn' | 'error', message: string, extra: Record<string, unknown> = {}) => logger.log(level, message, extra)
  const unhandledRejections = keepServingOnUnhandledRejection(logger)
  if (config.webhookUnsafeAllowAddresses.length > 0) {
    log('warn', 'SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES is set: webhook targets at these addresses bypass the private-address refusal; never use this in production', { addresses: config.webhookUnsafeAllowAddresses })
  }
  let db: Database
  try {
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: workerOnly ? config.workerDbPoolMax : config.dbPoolMax, prepare: config.dbPrepare, listenUrl: config.databaseListenUrl, statementTimeoutMs: config.dbStatementTimeoutMs, poolWaitMs: config.dbPoolWaitMs, connectTimeoutMs: config.dbConnectTimeoutMs })
  } catch (e) {
    if (!(e instanceof EmbeddedDatabaseInUse)) throw e
    // PGlite is one session: a second service or worker process cannot share it. `bun run start`
    // already runs the job workers; separate worker processes need PostgreSQL.
    console.error(`${e.message}${workerOnly ? ' (bun run start already runs the job workers)' : ''}`)
    process.exit(2)
  }
  const closeControlSocket = db.embedded ? serveControlSocket(config.dataDir, db, async (d, argv) => (await import('./cli')).executeCommand(d, argv)) : () => {}
  const applied = await db.unbounded(migrate)
  if (applied.length) log('info', 'migrations applied', { versions: applied })
  if (!db.embedded) {
    const gaps = await autovacuumGaps(db.sql).catch(() => [])
    const warning = autovacuumWarning(gaps)
    if (warning) log('warn', warning, { autovacuum_off_for: gaps })
  }

  let draining = false
  const deps = wireDeps(config, db, () => draining, { log: logger })
  deps.metrics.setCollectors({ unhandledRejections })
  const metricsServer = config.metricsPort !== undefined ? serveMetrics(deps.metrics, config.metricsPort, config.metricsHost) : undefined
  if (metricsServer) log('info', 'metrics listening', { url: `http://${config.metricsHost}:${metricsServer.port}/metrics` })
  const server = workerOnly
    ? undefined
    : createApp(deps).listen({ port: config.port, hostname: config.host, maxRequestBodySize: SERVER_BODY_LIMIT, reusePort: config.reusePort })
  if (server) log('info', 'listening', { url: `http://${config.host}:${server.server!.port}`, database: db.embedded ? 'embedded' : 'postgresql' })
  else log('info', 'worker started', { database: db.embedded ? 'embedded' : 'postgresql' })
  const runner = startRunner(deps, JOB_KINDS)
  deps.parser.warm()
  log('info', 'job runner started', { worker_id: runner.workerId, concurrency: config.jobConcurrency })

  const shutdown = async (signal: string) => {
    if (draining) return
    draining = true
    log('info', 'draining', { signal })
    // The drain's bound: requests and job statements end within the statement deadline and the pool
    // wait, jobs within the runner's drain timeout (20 s); past this something is stuck, and a
    // process that ignores SIGTERM is worse than one that exits with in-flight work handed back.
    const bound = config.dbStatementTimeoutMs + config.dbPoolWaitMs + 30_000
    setTimeout(() => {
      log('error', 'drain exceeded its bound; exiting', { bound_ms: bound })
      flushLogs()
      process.exit(1)
    }, bound).unref()
    await deps.events.close() // SSE streams end cleanly (clients resume with Last-Event-ID elsewhere)
    await server?.stop()
    await runner.stop()
    await deps.parser.close()
    log('info', 'job runner drained', { worker_id: runner.workerId })
    closeControlSocket()
    metricsServer?.stop()
    await db.close()
    flushLogs()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}
