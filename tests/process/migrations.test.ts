// Migrations: every sql/NNN_*.sql file is listed, applied once, and concurrent starts do not race.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { readdirSync } from 'node:fs'
import { postgresClient } from '../../server/db/connect'
import { MIGRATIONS } from '../../sql/index'
import { migrate, migrationsCurrent, LATEST_MIGRATION } from '../../server/db/migrate'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
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
