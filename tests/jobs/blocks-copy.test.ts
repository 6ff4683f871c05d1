/**
 * A document's blocks written by `COPY ... FROM STDIN` (PostgreSQL) when the connection is
 * terminated under the write: the write loop waits for the stream's 'drain' between chunks, and a
 * destroyed stream emits none. Before the fix the transaction failed but replaceBlocks itself never
 * ended (it held every block of the document in memory for the life of the process) and the
 * stream's failure surfaced as an unhandled rejection ("unhandled promise rejection; the process
 * keeps serving" in the service's log). Now it fails with the connection's error, nothing is stored,
 * and the pool serves on.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { replaceBlocks } from '../../server/documents/store'
import { blockId, type Block } from '../../server/documents/blocks'
import { postgresClient } from '../../server/db/connect'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000)

let started: TestApp | undefined
// The embedded database takes no COPY: the one test is skipped there, so no app is started for it.
beforeAll(async () => { if (process.env.DATABASE_URL) started = await startApp({ runner: false }) }, 120_000)
afterAll(() => started?.stop(), 120_000)

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => 'timed out' as const)])

test.skipIf(!process.env.DATABASE_URL)(skipTitle('a blocks COPY whose backend is terminated mid-write fails (never waits for ever), stores nothing, leaves no unhandled rejection', NEEDS_POSTGRES && 'needs PostgreSQL (DATABASE_URL): the embedded database takes no COPY from a client'), async () => {
  const app = started!
  const tenant = await app.tenant()
  const key = await app.apiKey(tenant.id, ['scenarios:write', 'scenarios:read'])
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(res.status).toBe(201)
    return (await res.json()) as { id: string }
  }
  const scenario = await call('/v1/scenarios', { name: 'COPY under termination' })
  const document = await call(`/v1/scenarios/${scenario.id}/documents`, { filename: 'rent-roll.txt', content_type: 'text/plain', size_bytes: 10 })
  // 20,000 blocks of about 1 KB: chunks of megabytes, so the loop waits for 'drain' between them.
  const text = 'Unit 12B, tenant since 2019, rent 1,450.00 a month. '.repeat(20)
  const blocks: Block[] = Array.from({ length: 20_000 }, (_, i) => ({
    id: blockId(document.id, i), position: i, page: 1 + Math.floor(i / 100), kind: 'paragraph', text: `${i}: ${text}`,
    charStart: 0, charEnd: text.length, source: 'text', confidence: null, cells: null, sheet: null,
  }))

  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  const admin = postgresClient(app.config.databaseUrl!, { max: 1, onnotice: () => {} })
  try {
    // The server stops reading the COPY at row 5,000 (a test trigger sleeps there), so the client's
    // socket fills and the write loop waits for 'drain' when the backend is terminated.
    await app.sql.unsafe(`
      create function pg_temp_slow_block() returns trigger language plpgsql as $$
      begin
        if new.position = 5000 then perform pg_sleep(30); end if;
        return new;
      end $$`)
    await app.sql.unsafe('create trigger slow_block before insert on document_blocks for each row execute function pg_temp_slow_block()')
    let written: Promise<string> | undefined
    const transaction = app.sql.begin((tx) => {
      const writing = replaceBlocks(tx, tenant.id, document.id, blocks)
      written = writing.then(() => 'written', (e: { code?: string; message?: string }) => `failed: ${e.code ?? e.message}`)
      return writing
    }).then(() => 'committed', (e: { code?: string }) => `rolled back: ${e.code}`)
    // Terminate the backend while its COPY is running.
    let pid: number | undefined
    for (let i = 0; i < 1_000 && pid === undefined; i++) {
      const [row] = await admin<{ pid: number }[]>`select pid from pg_stat_activity where state = 'active' and query like 'copy document_blocks%' and wait_event = 'PgSleep'`
      pid = row?.pid
      if (pid === undefined) await Bun.sleep(10)
    }
    expect(pid, 'the COPY was seen waiting at row 5,000').toBeDefined()
    await admin`select pg_terminate_backend(${pid!})`
    expect(await within(transaction, 10_000)).toMatch(/^rolled back/)
    // The write itself ends, with the connection's failure (before the fix: still waiting for 'drain').
    expect(await within(written!, 10_000)).toMatch(/^failed: /)
    await Bun.sleep(100) // an unhandled rejection is reported after the turn it happened in
    expect(unhandled.map(String)).toEqual([])
    // Nothing was stored, and the pool serves on.
    const [stored] = await app.sql<{ n: number }[]>`select count(*)::int as n from document_blocks where tenant_id = ${tenant.id} and document_id = ${document.id}`
    expect(stored!.n).toBe(0)
  } finally {
    await app.sql.unsafe('drop trigger if exists slow_block on document_blocks')
    await app.sql.unsafe('drop function if exists pg_temp_slow_block()')
    process.off('unhandledRejection', onUnhandled)
    await admin.end({ timeout: 1 })
  }
})
