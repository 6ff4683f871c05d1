// Migrations: every sql/NNN_*.sql file is listed, applied once, and concurrent starts do not race.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { readdirSync } from 'node:fs'
import { postgresClient } from '../../server/db/connect'
import { MIGRATIONS } from '../../sql/index'
import { migrate, migrationsCurrent, LATEST_MIGRATION } from '../../server/db/migrate'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { listBlocks } from '../../server/documents/store'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): two processes migrating at once apply each migration exactly once: it needs two independent connections')

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let database: TestDatabase
beforeAll(async () => { database = await createTestDatabase() })
afterAll(() => database.drop())

test('every numbered file in sql/ is in the migration list, in order, once', () => {
  const files = readdirSync('sql').filter((f) => /^\d{3}_.*\.sql$/.test(f)).sort()
  expect(MIGRATIONS.map((m) => `${m.name}.sql`)).toEqual(files)
  expect(MIGRATIONS.map((m) => m.version)).toEqual(files.map((f) => Number(f.slice(0, 3))))
})

test.skipIf(!process.env.DATABASE_URL)(skipTitle('two processes migrating at once apply each migration exactly once', NEEDS_POSTGRES), async () => {
  const a = postgresClient(database.url!, { max: 1, onnotice: () => {} })
  const b = postgresClient(database.url!, { max: 1, onnotice: () => {} })
  try {
    const [ra, rb] = await Promise.all([migrate(a), migrate(b)])
    expect([...ra, ...rb].sort((x, y) => x - y)).toEqual(MIGRATIONS.map((m) => m.version))
    const rows = await a`select version from schema_migrations order by version`
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version))
    expect(await migrationsCurrent(a)).toBe(true)
    expect(await migrate(a)).toEqual([])
    expect(LATEST_MIGRATION).toBe(MIGRATIONS[MIGRATIONS.length - 1]!.version)
  } finally {
    await a.end()
    await b.end()
  }
})

test.skipIf(!process.env.DATABASE_URL)(skipTitle('029 moves the blocks of existing documents into chunks, unchanged, and drops the old table', NEEDS_POSTGRES), async () => {
  const db = await createTestDatabase()
  const sql = postgresClient(db.url!, { max: 1, onnotice: () => {} })
  try {
    await sql`create table schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())`
    for (const m of MIGRATIONS.filter((m) => m.version < 29)) {
      await sql.begin(async (tx) => { await tx.unsafe(m.sql); await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})` })
    }
    // Two documents' blocks as the old table held them (their documents stand without a case: keys
    // to cases are not what is tested).
    const tenant = crypto.randomUUID()
    const docs = [crypto.randomUUID(), crypto.randomUUID()]
    const rows = docs.flatMap((d, n) => Array.from({ length: n === 0 ? 600 : 3 }, (_, i) => ({
      tenant_id: tenant, document_id: d, position: i, id: crypto.randomUUID(), page: 1 + Math.floor(i / 50), kind: i % 7 === 0 ? 'table_row' : 'paragraph',
      text: `Row ${i}\t"q" \\ 🏠\nnext`, char_start: i * 20, char_end: i * 20 + 15, source: i % 2 ? 'ocr' : 'text', confidence: i % 2 ? 42.5 : null,
      cells: i % 7 === 0 ? [{ column: 'Rent', value: `${i}.00` }] : null, sheet: i % 7 === 0 ? 'Roll' : null,
    })))
    await sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`
      for (const d of docs) await tx`insert into documents (tenant_id, id, scenario_id, filename, content_type, size_bytes) values (${tenant}, ${d}, ${crypto.randomUUID()}, 'a.txt', 'text/plain', 1)`
      for (const r of rows) {
        await tx`insert into document_blocks (tenant_id, document_id, position, id, page, kind, text, char_start, char_end, source, confidence, cells, sheet)
          values (${r.tenant_id}, ${r.document_id}, ${r.position}, ${r.id}, ${r.page}, ${r.kind}, ${r.text}, ${r.char_start}, ${r.char_end}, ${r.source}, ${r.confidence}, ${r.cells ? tx.json(r.cells) : null}, ${r.sheet})`
      }
    })
    expect(await migrate(sql)).toEqual(MIGRATIONS.filter((m) => m.version >= 29).map((m) => m.version))
    expect((await sql`select to_regclass('document_blocks') as t`)[0]!.t).toBeNull()
    const chunks = await sql<{ document_id: string; first_position: number; last_position: number; min_page: number; max_page: number }[]>`
      select document_id, first_position, last_position, min_page, max_page from document_block_chunks order by document_id = ${docs[0]!} desc, first_position`
    expect([...chunks]).toEqual([
      { document_id: docs[0]!, first_position: 0, last_position: 255, min_page: 1, max_page: 6 },
      { document_id: docs[0]!, first_position: 256, last_position: 511, min_page: 6, max_page: 11 },
      { document_id: docs[0]!, first_position: 512, last_position: 599, min_page: 11, max_page: 12 },
      { document_id: docs[1]!, first_position: 0, last_position: 2, min_page: 1, max_page: 1 },
    ])
    for (const d of docs) {
      const read = await listBlocks(sql, tenant, d, undefined, { after: null, fetch: 1_000 } as never)
      expect(read.map((b) => ({ ...b }))).toEqual(rows.filter((r) => r.document_id === d).map(({ tenant_id: _, document_id: __, ...r }) => r))
    }
  } finally {
    await sql.end()
    await db.drop()
  }
})
