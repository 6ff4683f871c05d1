// The PostgreSQL client's behaviour when its connections close under it (patches/postgres@3.4.9.patch,
// the parts after the queue fix). Each test fails on the unpatched client: (1) a transaction's
// `rollback` went to its closed connection and `socket.write` on null was an uncaught TypeError (the
// process ended), and the connection was lost to the pool for good; (2) the ErrorResponse read
// before a close (57P01) failed the next session's first query; (3) while the database refused
// connections, waiting queries failed one per connection attempt and backoff, so a burst waited
// for many seconds; (4) a COPY FROM STDIN refused after its stream ended never finished. Real PostgreSQL (a cluster this file owns), nothing mocked.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import postgres from 'postgres'
import { startOwnCluster, type OwnCluster } from '../helpers/own-cluster'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let cluster: OwnCluster
let admin: postgres.Sql
const client = (max: number) => postgres(cluster.url, { max, onnotice: () => {}, backoff: () => 0.1 })
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => 'timed out' as const)])

beforeAll(async () => {
  cluster = await startOwnCluster()
  admin = client(1)
})
afterAll(async () => {
  await admin?.end({ timeout: 1 })
  await cluster?.destroy()
})

test('a transaction whose connection is terminated fails as closed; the pool still serves and ends', async () => {
  const sql = client(1)
  const outcome = await sql.begin(async (tx) => {
    const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`
    const sleeping = tx`select pg_sleep(5)`
    setTimeout(() => void admin`select pg_terminate_backend(${row!.pid})`.catch(() => {}), 100)
    await sleeping
  }).then(() => 'committed', (e: { code?: string }) => e.code)
  expect(['CONNECTION_CLOSED', '57P01']).toContain(outcome!)
  await Bun.sleep(100) // the scope's rollback ran here: unpatched, an uncaught TypeError
  // Unpatched, the one connection was left in the full queue without a socket: this waited forever.
  expect(await within(sql<{ x: number }[]>`select 1 as x`.then((r) => r[0]!.x), 3_000)).toBe(1)
  expect(await within(sql.end({ timeout: 2 }).then(() => 'ended'), 3_000)).toBe('ended')
})

test('the first query after a terminated one runs (nothing of the lost session carries over)', async () => {
  const sql = client(1)
  const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`
  const sleeping = sql`select pg_sleep(5)`.then(() => 'done', (e: { code?: string }) => e.code)
  await Bun.sleep(150)
  await admin`select pg_terminate_backend(${row!.pid})`
  expect(['CONNECTION_CLOSED', '57P01']).toContain((await sleeping)!)
  // Unpatched: rejected with the stale 57P01 "terminating connection due to administrator command".
  expect((await sql<{ x: number }[]>`select 1 as x`)[0]!.x).toBe(1)
  await sql.end({ timeout: 2 })
})

test('while the database refuses connections, every waiting query fails at once; all work again once it is back', async () => {
  const sql = client(2)
  expect((await sql`select 1 as x`)[0]!.x).toBe(1)
  await cluster.stopFast()
  // Counts event-loop turns: failures that share a turn were failed by one connection attempt.
  let turn = 0
  const turns = setInterval(() => turn++, 1)
  try {
    const failedIn = new Set<number>()
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => sql`select ${i}::int as i`.catch((e) => {
      failedIn.add(turn)
      throw e
    })))
    expect(results.filter((r) => r.status === 'fulfilled')).toEqual([])
    // Unpatched: one query per connection attempt and 100 ms backoff, so ~200 turns for 200 queries
    // (about 10 s); patched, each of the pool's 2 connections fails what waits in one go. A count,
    // not a time: the same on a loaded machine.
    expect(failedIn.size).toBeLessThanOrEqual(4)
  } finally {
    clearInterval(turns)
    await cluster.start()
  }
  const back = await Promise.all(Array.from({ length: 20 }, (_, i) => sql<{ i: number }[]>`select ${i}::int as i`))
  expect(back.map((r) => r[0]!.i)).toEqual(Array.from({ length: 20 }, (_, i) => i))
  await sql.end({ timeout: 2 })
})

test('a COPY FROM STDIN the server refuses after its stream ended fails the stream; the connection serves on', async () => {
  // Part 9: the refusal arrived after end() and the stream waited for a CommandComplete that never
  // came (a document's blocks job hung with its lease heartbeated for ever).
  const sql = client(1)
  await sql`create table if not exists copy_refused (a int, b text)`
  const outcome = await within(sql.begin(async (tx) => {
    const stream = await tx`copy copy_refused (a, b) from stdin`.writable()
    const done = new Promise<void>((resolve, reject) => { stream.on('finish', resolve); stream.on('error', reject) })
    stream.write('1\tfine\n2\tnot\u0000valid\n')
    stream.end()
    await done
  }).then(() => 'committed', (e: { code?: string }) => e.code ?? 'failed'), 5_000)
  expect(outcome).toBe('22021') // character_not_in_repertoire: the NUL byte
  expect(await within(sql<{ n: number }[]>`select count(*)::int as n from copy_refused`.then((r) => r[0]!.n), 3_000)).toBe(0)
  await sql`drop table copy_refused`
  await sql.end({ timeout: 2 })
})
