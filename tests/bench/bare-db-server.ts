/**
 * The database-bound baseline of api.bench (issue 30): a bare Bun.serve running bareDbHandler (the
 * service's own SQL for the two benchmarked routes, bare-db-handler.ts) through a client opened
 * exactly as the service opens its own (openDatabase with loadConfig's pool size, prepare,
 * timeouts), and nothing else. The workspace is BARE_TENANT_ID. Prints its port on the first line.
 */
import { loadConfig } from '../../server/config'
import { openDatabase } from '../../server/db/connect'
import { bareDbHandler } from './bare-db-handler'

const config = loadConfig(process.env)
const db = await openDatabase({
  databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: config.dbPoolMax, prepare: config.dbPrepare,
  statementTimeoutMs: config.dbStatementTimeoutMs, poolWaitMs: config.dbPoolWaitMs, connectTimeoutMs: config.dbConnectTimeoutMs,
})

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  development: false, // as the service's listener
  fetch: bareDbHandler(db.sql, process.env.BARE_TENANT_ID!),
})
console.log(server.port)
process.on('SIGTERM', () => { void server.stop(true); void db.close().then(() => process.exit(0)) })
