/**
 * Entry point: configuration, database, migrations, the HTTP listener and the job runner.
 * `--worker` runs the job runner alone. SIGTERM/SIGINT drain: readiness fails, the listener stops,
 * in-flight work finishes, the database closes.
 */
import { ConfigError, loadConfig, type Config } from './config'
import { EmbeddedDatabaseInUse, openDatabase, type Database } from './db/connect'
import { serveControlSocket } from './control-socket'
import { migrate } from './db/migrate'
import { createApp } from './app'
import { wireDeps } from './wiring'
import { startRunner } from '../jobs/runner'
import { JOB_KINDS } from './job-kinds'
import { SERVER_BODY_LIMIT } from './http/body'
import { createLogger, flushLogs } from './observability/log'
import { serveMetrics } from './observability/metrics'

async function start() {
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
  if (config.webhookUnsafeAllowAddresses.length > 0) {
    log('warn', 'SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES is set: webhook targets at these addresses bypass the private-address refusal; never use this in production', { addresses: config.webhookUnsafeAllowAddresses })
  }
  let db: Database
  try {
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: config.dbPoolMax, prepare: config.dbPrepare, listenUrl: config.databaseListenUrl, connectTimeoutMs: config.dbConnectTimeoutMs })
  } catch (e) {
    if (!(e instanceof EmbeddedDatabaseInUse)) throw e
    // PGlite is one session: a second service or worker process cannot share it. `bun run start`
    // already runs the job workers; separate worker processes need PostgreSQL.
    console.error(`${e.message}${workerOnly ? ' (bun run start already runs the job workers)' : ''}`)
    process.exit(2)
  }
  const closeControlSocket = db.embedded ? serveControlSocket(config.dataDir, db, async (d, argv) => (await import('./cli')).executeCommand(d, argv)) : () => {}
  const applied = await migrate(db.sql)
  if (applied.length) log('info', 'migrations applied', { versions: applied })

  let draining = false
  const deps = wireDeps(config, db, () => draining, { log: logger })
  const metricsServer = config.metricsPort !== undefined ? serveMetrics(deps.metrics, config.metricsPort, config.metricsHost) : undefined
  if (metricsServer) log('info', 'metrics listening', { url: `http://${config.metricsHost}:${metricsServer.port}/metrics` })
  const server = workerOnly
    ? undefined
    : createApp(deps).listen({ port: config.port, hostname: config.host, maxRequestBodySize: SERVER_BODY_LIMIT })
  if (server) log('info', 'listening', { url: `http://${config.host}:${server.server!.port}`, database: db.embedded ? 'embedded' : 'postgresql' })
  else log('info', 'worker started', { database: db.embedded ? 'embedded' : 'postgresql' })
  const runner = startRunner(deps, JOB_KINDS)
  deps.parser.warm()
  log('info', 'job runner started', { worker_id: runner.workerId, concurrency: config.jobConcurrency })

  const shutdown = async (signal: string) => {
    if (draining) return
    draining = true
    log('info', 'draining', { signal })
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

const [first] = process.argv.slice(2)
if (first === '--parse-worker') {
  // The compiled binary is also its own document parser process (see documents/parsing/parser-pool.ts).
  const { serveParseRequests } = await import('./documents/parsing/parser-process')
  serveParseRequests()
} else if (first !== undefined && !first.startsWith('--')) {
  // The compiled binary is also the operator CLI: `svc migrate`, `svc tenant create ...`.
  const { runCli } = await import('./cli')
  process.exit(await runCli(process.argv.slice(2)))
} else {
  await start()
}
