/**
 * A document's blocks written when the connection is terminated under the write (PostgreSQL). The
 * write must end with the connection's failure, store nothing, raise no unhandled rejection, and
 * leave the pool serving. (Blocks were written by `COPY ... FROM STDIN` until they were stored as
 * chunks: then a destroyed stream left the write loop waiting for a 'drain' that never came, holding
 * every block of the document, and its failure surfaced as an unhandled rejection.)
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { replaceBlocks } from '../../server/documents/store'
import { blockId, type Block } from '../../server/documents/blocks'
import { postgresClient } from '../../server/db/connect'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000)

let started: TestApp | undefined
// The embedded database has one connection and no backend to terminate: the one test is skipped there.
beforeAll(async () => { if (process.env.DATABASE_URL) started = await startApp({ runner: false }) }, 120_000)
afterAll(() => started?.stop(), 120_000)

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => 'timed out' as const)])

test.skipIf(!process.env.DATABASE_URL)(skipTitle('a blocks write whose backend is terminated mid-write fails (never waits for ever), stores nothing, leaves no unhandled rejection', NEEDS_POSTGRES && 'needs PostgreSQL (DATABASE_URL): it terminates the backend that writes'), async () => {
  const app = started!
  const tenant = await app.tenant()
  const key = await app.apiKey(tenant.id, ['scenarios:write', 'scenarios:read'])
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(res.status).toBe(201)
    return (await res.json()) as { id: string }
  }
  const scenario = await call('/v1/scenarios', { name: 'Blocks write under termination' })
  const document = await call(`/v1/scenarios/${scenario.id}/documents`, { filename: 'rent-roll.txt', content_type: 'text/plain', size_bytes: 10 })
  // 20,000 blocks of about 1 KB: 20 MB of chunks, more than one insert statement carries.
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
    // The server stops at the chunk that starts at or after position 5,000 (a test trigger sleeps
    // there), and the backend is terminated while it sleeps.
    await app.sql.unsafe(`
      create function pg_temp_slow_block() returns trigger language plpgsql as $$
      begin
        if new.first_position >= 5000 then perform pg_sleep(30); end if;
        return new;
      end $$`)
    await app.sql.unsafe('create trigger slow_block before insert on document_block_chunks for each row execute function pg_temp_slow_block()')
    let written: Promise<string> | undefined
    const transaction = app.sql.begin((tx) => {
      const writing = replaceBlocks(tx, tenant.id, document.id, blocks)
      written = writing.then(() => 'written', (e: { code?: string; message?: string }) => `failed: ${e.code ?? e.message}`)
      return writing
    }).then(() => 'committed', (e: { code?: string }) => `rolled back: ${e.code}`)
    // Terminate the backend while its insert is running.
    let pid: number | undefined
    for (let i = 0; i < 1_000 && pid === undefined; i++) {
      const [row] = await admin<{ pid: number }[]>`select pid from pg_stat_activity where state = 'active' and query like '%insert into document_block_chunks%' and wait_event = 'PgSleep' and pid <> pg_backend_pid()`
      pid = row?.pid
      if (pid === undefined) await Bun.sleep(10)
    }
    expect(pid, 'the insert was seen waiting at position 5,000').toBeDefined()
    await admin`select pg_terminate_backend(${pid!})`
    expect(await within(transaction, 10_000)).toMatch(/^rolled back/)
    // The write itself ends, with the connection's failure.
    expect(await within(written!, 10_000)).toMatch(/^failed: /)
    await Bun.sleep(100) // an unhandled rejection is reported after the turn it happened in
    expect(unhandled.map(String)).toEqual([])
    // Nothing was stored, and the pool serves on.
    const [stored] = await app.sql<{ n: number }[]>`select count(*)::int as n from document_block_chunks where tenant_id = ${tenant.id} and document_id = ${document.id}`
    expect(stored!.n).toBe(0)
  } finally {
    await app.sql.unsafe('drop trigger if exists slow_block on document_block_chunks')
    await app.sql.unsafe('drop function if exists pg_temp_slow_block()')
    process.off('unhandledRejection', onUnhandled)
    await admin.end({ timeout: 1 })
  }
})
