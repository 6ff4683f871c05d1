/**
 * Database connection: PostgreSQL through porsager `postgres` when DATABASE_URL is set, otherwise
 * an embedded PGlite under $SVC_DATA_DIR/pg served on a loopback socket. The same SQL runs on both.
 */
import postgres from 'postgres'
import { mkdirSync, readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs'
import { join } from 'node:path'

/** The tagged-template SQL client every module uses. */
export type Sql = postgres.Sql<{}>
/** A transaction (or the pool itself) that a query can run on. */
export type Tx = postgres.TransactionSql<{}> | Sql

/** An open database: the SQL client, whether it is embedded, and how to close it. */
export interface Database {
  sql: Sql
  /**
   * The client whose `listen()` holds this process's LISTEN connection: DATABASE_LISTEN_URL's (a
   * session-mode pooler or the server itself) when set, else `sql`. LISTEN needs a session; every
   * other statement runs through `sql`, which may be a transaction-mode pooler.
   */
  listenSql: Sql
  embedded: boolean
  /** The pool's state for metrics (undefined when the client does not report it). */
  poolStats(): { size: number; inUse: number; idle: number; waiting: number } | undefined
  /**
   * Calls `fn` on each NOTIFY of `channel` (PostgreSQL: a LISTEN connection); resolves with the
   * unlisten, or null where this database delivers no notifications (embedded: see openEmbedded).
   */
  listen(channel: string, fn: () => void): Promise<(() => Promise<void>) | null>
  /**
   * Runs `fn` on a client of its own without the statement timeout or the pool wait (PostgreSQL;
   * embedded: `sql`): migrations build indexes and wait for another process's migration lock.
   */
  unbounded<T>(fn: (sql: Sql) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Options shared by both connection kinds. */
const clientOptions = {
  onnotice: () => {},
  connection: { application_name: 'svc' },
  types: {
    // numeric/decimal stays a string (money is decimal text in the API)
  },
} as const

/**
 * Splits a connection string into what porsager reads from a URL and the libpq spelling it does not:
 * `?host=/var/run/postgresql` (a Unix-socket directory, as psql accepts it). A PostgreSQL on the
 * same machine answers over its socket with a fraction of the kernel work of loopback TCP.
 */
export function connectionOptions(databaseUrl: string): { url: string; host?: string } {
  const url = new URL(databaseUrl)
  const host = url.searchParams.get('host')
  if (host === null) return { url: databaseUrl }
  if (!host.startsWith('/')) throw new Error('has a host parameter that is not an absolute Unix-socket directory (use e.g. ?host=/var/run/postgresql)')
  url.searchParams.delete('host')
  return { url: url.toString(), host }
}

/** A porsager client for a connection string, honouring the `?host=/socket/dir` spelling. */
export function postgresClient(databaseUrl: string, options: postgres.Options<{}> = {}): Sql {
  const { url, host } = connectionOptions(databaseUrl)
  return postgres(url, { ...options, ...(host ? { host } : {}) })
}

/** Opens the database the configuration names: DATABASE_URL, or the embedded PGlite in dataDir. */
export async function openDatabase(opts: {
  databaseUrl?: string
  dataDir: string
  max?: number
  /** Named prepared statements (default true); false for a transaction-mode pooler (SVC_DB_PREPARE=false). */
  prepare?: boolean
  /** LISTEN's connection string (DATABASE_LISTEN_URL); default databaseUrl. */
  listenUrl?: string
  /** Milliseconds a statement may wait for its answer (default: no limit); see below. */
  statementTimeoutMs?: number
  /** Milliseconds a statement may wait for a connection of the pool (default: no limit). */
  poolWaitMs?: number
  /** How long a connection attempt may take (SVC_DB_CONNECT_TIMEOUT_MS); default 5000. */
  connectTimeoutMs?: number
}): Promise<Database> {
  if (opts.databaseUrl) {
    // A connection attempt gives up after SVC_DB_CONNECT_TIMEOUT_MS, 5 s by default (the client's
    // default is 30): while the database is away, requests answer 503 within a few seconds instead of hanging.
    // Reconnection waits are capped at 100 ms: the client's default grows with every failed attempt,
    // counted across all connections, to 20 s, so a few seconds of outage left queries queued
    // (and requests hanging) for many seconds after the database was back.
    // A transaction-mode pooler hands each transaction (or lone statement) to any server
    // connection, so a statement prepared on one is unknown on the next: `prepare: false` sends
    // every query unnamed. A statement with parameters then takes two exchanges, each ending in its
    // own Sync (client patch part 8): parse and describe (the server names the parameters' types),
    // then parse, bind and execute with those types. Nothing is pipelined (`max_pipeline: 0`): a
    // PgBouncer before 1.21 releases the server connection at the first ReadyForQuery, and the
    // answers to a statement sent behind it went to no client (the pool locked up for good).
    // Array types are looked up on each new connection (`fetch_types`, the client's default, kept
    // deliberately): the service binds JS arrays (`= any(${ids}::uuid[])`) and reads array columns,
    // which the client serialises and parses only for the array types it has looked up. The lookup
    // runs from the connection's first ReadyForQuery; its failure (a backend terminated under it)
    // is the connection's failure, never an unhandled rejection (client patch part 6).
    // Every statement has a deadline (`query_timeout`, patch part 7): an answer that never comes (a
    // pooler that dropped it, a half-open socket) fails the statement as QUERY_TIMEOUT (503) and
    // replaces its connection, instead of holding a request, a connection and SIGTERM's drain for
    // ever; a statement that finds no free connection within the pool wait fails as POOL_TIMEOUT.
    const pooled = opts.prepare === false
    const common = {
      ...clientOptions, idle_timeout: 30, connect_timeout: (opts.connectTimeoutMs ?? 5_000) / 1000, backoff: (retries: number) => Math.min(0.01 * 2 ** retries, 0.1),
      prepare: opts.prepare ?? true, fetch_types: true, ...(pooled ? { max_pipeline: 0 } : {}),
    }
    const bounds = {
      query_timeout: opts.statementTimeoutMs ? opts.statementTimeoutMs / 1000 : null,
      pool_timeout: opts.poolWaitMs ? opts.poolWaitMs / 1000 : null,
    }
    const sql = postgresClient(opts.databaseUrl, { ...common, ...bounds, max: opts.max ?? 10 })
    const listenSql = opts.listenUrl ? postgresClient(opts.listenUrl, { ...common, ...bounds, max: 1 }) : sql
    const databaseUrl = opts.databaseUrl
    const stats = () => (sql as unknown as { stats?: { size: number; inUse: number; idle: number; waiting: number } }).stats
    return {
      sql,
      listenSql,
      embedded: false,
      poolStats: stats,
      listen: async (channel, fn) => (await listenSql.listen(channel, fn)).unlisten,
      async unbounded(fn) {
        const own = postgresClient(databaseUrl, { ...common, max: 1 })
        try {
          return await fn(own)
        } finally {
          await own.end({ timeout: 5 })
        }
      },
      async close() {
        await Promise.all([sql.end({ timeout: 5 }), listenSql !== sql ? listenSql.end({ timeout: 5 }) : undefined])
      },
    }
  }
  return openEmbedded(opts.dataDir)
}

interface EmbeddedLock { pid: number; port: number }

/** The embedded database is open in another live process (PGlite is one session: never shared). */
export class EmbeddedDatabaseInUse extends Error {
  constructor(readonly pid: number) {
    super(`the embedded database in this data directory is in use by process ${pid}; stop it, or set DATABASE_URL to use PostgreSQL`)
  }
}

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true } catch { return false }
}

/**
 * The embedded database's buffer cache. PostgreSQL's default (128 MB) is what initdb writes, and
 * PGlite touches all of it at start: 275 MB resident for an idle embedded database against 150 MB
 * at 16 MB. Pages beyond it come from the operating system's file cache (the data directory is
 * real files), so a single-box deployment loses little; a larger database belongs on PostgreSQL.
 */
const EMBEDDED_SHARED_BUFFERS = '16MB'

/**
 * Opens the embedded database. PGlite is a single session, so exactly one process owns it (its
 * socket admits that process's one connection only); another process of the same data directory
 * gets EmbeddedDatabaseInUse (the CLI then talks to the owner's control socket instead).
 */
async function openEmbedded(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true })
  const lockPath = join(dataDir, 'pg.lock')
  if (existsSync(lockPath)) {
    let lock: EmbeddedLock | undefined
    try { lock = JSON.parse(readFileSync(lockPath, 'utf8')) as EmbeddedLock } catch { /* unreadable: stale */ }
    if (lock && lock.pid !== process.pid && alive(lock.pid)) throw new EmbeddedDatabaseInUse(lock.pid)
  }
  const { PGlite } = await import('@electric-sql/pglite')
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket')
  const { pgliteAssetOptions } = await import('./pglite-assets')
  const pgDir = join(dataDir, 'pg')
  const fresh = !existsSync(join(pgDir, 'PG_VERSION'))
  const db = await PGlite.create({
    dataDir: pgDir,
    ...(await pgliteAssetOptions(fresh)),
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
  })
  // The inflated WebAssembly and file bundle (15 MB) and, on a first start, the unpacked data
  // directory (40 MB, twice) are garbage now; a process this quiet may not collect them for long.
  Bun.gc(true)
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 1 })
  await server.start()
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port
  writeFileSync(lockPath, JSON.stringify({ pid: process.pid, port } satisfies EmbeddedLock))
  const sql = postgres({ ...clientOptions, host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1 })
  return {
    sql,
    listenSql: sql,
    embedded: true,
    poolStats: () => (sql as unknown as { stats?: { size: number; inUse: number; idle: number; waiting: number } }).stats,
    // PGlite's own listeners do not see NOTIFYs sent through the socket server's session, and a
    // LISTEN there would reach the one client connection: none is delivered (null), and the
    // embedded runner wakes on jobs enqueued in its own process and polls.
    listen: async () => null,
    unbounded: (fn) => fn(sql),
    async close() {
      await sql.end({ timeout: 5 })
      await server.stop()
      await db.close()
      rmSync(lockPath, { force: true })
    },
  }
}
