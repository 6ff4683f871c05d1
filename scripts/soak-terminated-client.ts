/**
 * A soak of the patched PostgreSQL client (patches/postgres@3.4.9.patch) while its backends are
 * terminated: W workers run statements of five shapes (a one-statement insert with pg_notify, an
 * array lookup, a transaction, a plain select, an update that finds nothing) through one pool set up
 * opened by the service's own openDatabase (server/db/connect.ts), each statement checking that the answer it got
 * is its own, while every MINMS..MINMS+SPANMS milliseconds every backend of the soak's database is
 * terminated. Prints one line: answers that were right, outages (errors the service answers 503),
 * and others (a wrong answer, or an error that would be a 500), then up to ten of the others.
 *
 * It found patch part 10 (about 1 in 200,000 statements failed as "prepared statement ... does
 * not exist"). Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres [W=20] [MINMS=50]
 * [SPANMS=100] [DUR=90000] bun scripts/soak-terminated-client.ts
 * With POOLED=1 the statements go through a PgBouncer of the soak's own in transaction mode, the
 * client set up as the service sets it up for one (SVC_DB_PREPARE=false: unnamed statements, nothing
 * pipelined), and the backends behind it are terminated.
 * It creates and drops the database `svc_client_soak` on that server.
 */
import { openDatabase, postgresClient } from '../server/db/connect'
import { isDependencyOutage } from '../server/http/dependency-errors'
import { startPgBouncer } from '../tests/helpers/pgbouncer'

const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DB = 'svc_client_soak'
const workersWanted = Number(process.env.W ?? 20)
const minMs = Number(process.env.MINMS ?? 50)
const spanMs = Number(process.env.SPANMS ?? 100)
const durationMs = Number(process.env.DUR ?? 90_000)
const pooled = process.env.POOLED === '1'

const admin = postgresClient(base, { max: 1, onnotice: () => {} })
await admin.unsafe(`drop database if exists ${DB}`)
await admin.unsafe(`create database ${DB}`)
const url = new URL(base)
url.pathname = `/${DB}`
const setup = postgresClient(url.toString(), { max: 1, onnotice: () => {} })
await setup.unsafe('create table t (id text primary key, n int)')
await setup.end()

// Opened by the service's own openDatabase: directly (prepared statements, pipelining) or through a
// transaction-mode pooler (unnamed statements, no pipelining, LISTEN straight to the server);
// statement deadline and pool wait as the terminate test sets them.
const bouncer = pooled ? await startPgBouncer(url.toString(), { poolMode: 'transaction', poolSize: 12 }) : undefined
const db = await openDatabase({
  databaseUrl: bouncer ? bouncer.url(url.toString()) : url.toString(),
  ...(bouncer ? { prepare: false, listenUrl: url.toString() } : {}),
  dataDir: '', max: 10, statementTimeoutMs: 3_000, poolWaitMs: 3_000,
})
const { sql } = db
await db.listen('soak', () => {}).catch(() => undefined)

const counts = { right: 0, outage: 0, other: 0 }
const others: string[] = []
let running = true

/** One statement of shape `i % 5` that knows its own answer: true when the answer is its own. */
async function statement(token: string, i: number): Promise<boolean> {
  switch (i % 5) {
    case 0: {
      const [row] = await sql`with work as (insert into t (id, n) select ${token}, ${i} where true) select ${token}::text || ',x' as body, pg_notify('soak', ${token}) as more`
      return row?.body === `${token},x`
    }
    case 1: {
      const rows = await sql`select id, n from t where id = any(${[token, 'none']}::text[]) limit 5`
      return rows.every((r) => r.id === token)
    }
    case 2: {
      const id = await sql.begin(async (tx) => {
        await tx`insert into t (id, n) values (${token}, 1)`
        const [x] = await tx`select id from t where id = ${token}`
        return x?.id
      })
      return id === token
    }
    case 3: {
      const [row] = await sql`select ${token}::text as tok, now() as at`
      return row?.tok === token
    }
    default: {
      const updated = await sql`update t set n = n + 1 where id = ${token} returning id`
      const [row] = await sql`select ${token}::text as tok`
      return updated.length === 0 && row?.tok === token
    }
  }
}

async function worker(w: number): Promise<void> {
  for (let i = 0; running; i++) {
    const token = `${w}-${i}-${Math.random().toString(36).slice(2)}`
    try {
      if (await statement(token, i)) counts.right++
      else { counts.other++; others.push(`shape ${i % 5}: another statement's answer (token ${token})`) }
    } catch (e) {
      const err = e as { code?: string; message?: string; stack?: string }
      if (isDependencyOutage(e)) counts.outage++
      else { counts.other++; others.push(`shape ${i % 5}: ${err.code} ${err.message}\n${err.stack}`) }
    }
  }
}

const workers = Array.from({ length: workersWanted }, (_, w) => worker(w))
const until = Date.now() + durationMs
let terminated = 0
while (Date.now() < until) {
  await Bun.sleep(minMs + Math.random() * spanMs)
  terminated += (await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${DB} and pid <> pg_backend_pid()`.catch(() => [])).length
}
running = false
await Promise.race([Promise.all(workers), Bun.sleep(10_000)])
console.log(JSON.stringify({ ...counts, backends_terminated: terminated, pooled }))
for (const o of others.slice(0, 10)) console.log(o)
await db.close().catch(() => undefined)
await bouncer?.stop()
await admin.unsafe(`drop database if exists ${DB} with (force)`).catch(() => undefined)
await admin.end({ timeout: 1 }).catch(() => undefined)
process.exit(counts.other === 0 ? 0 : 1)
