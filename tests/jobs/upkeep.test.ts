/**
 * PostgreSQL's upkeep of the job queue's tables (server/db/upkeep.ts): where autovacuum will not
 * run for them is found (the whole server, or a queue table's own storage option), and a service
 * process says so in a warning at start, naming where; with autovacuum on everywhere it says nothing.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { postgresClient } from '../../server/db/connect'
import { autovacuumGaps, autovacuumWarning, QUEUE_TABLES } from '../../server/db/upkeep'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { spawnService } from '../helpers/service-process'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000)

const postgres = Boolean(process.env.DATABASE_URL)

describe.skipIf(!postgres)(skipTitle('autovacuum for the job queue (PostgreSQL)', NEEDS_POSTGRES), () => {
  let db: TestDatabase
  let sql: ReturnType<typeof postgresClient>
  let serverOff: boolean

  if (postgres) beforeAll(async () => {
    db = await createTestDatabase('migrated')
    sql = postgresClient(db.url!, { max: 2, onnotice: () => {} })
    const [row] = await sql`select setting from pg_settings where name = 'autovacuum'`
    serverOff = row!.setting === 'off'
  })
  if (postgres) afterAll(async () => {
    await sql?.end()
    await db?.drop()
  })

  test('finds the server setting and each queue table with autovacuum turned off', async () => {
    const server = serverOff ? ['server'] : []
    expect(await autovacuumGaps(sql)).toEqual(server)
    await sql`alter table jobs set (autovacuum_enabled = false)`
    await sql`alter table notification_delivery_attempts set (autovacuum_enabled = off, fillfactor = 90)`
    expect(await autovacuumGaps(sql)).toEqual([...server, 'jobs', 'notification_delivery_attempts'])
    // Turned on explicitly, or another option alone, is no gap.
    await sql`alter table jobs set (autovacuum_enabled = true)`
    await sql`alter table notification_delivery_attempts reset (autovacuum_enabled)`
    expect(await autovacuumGaps(sql)).toEqual(server)
    await sql`alter table jobs reset (autovacuum_enabled)`
    await sql`alter table notification_delivery_attempts reset (fillfactor)`
    expect(QUEUE_TABLES).toContain('jobs')
    expect(autovacuumWarning([])).toBeUndefined()
  })

  test('a service process warns at start, naming where autovacuum is off', async () => {
    await sql`alter table notification_deliveries set (autovacuum_enabled = false)`
    const env = { DATABASE_URL: db.url, SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-upkeep-')), SVC_SECRET_KEY: Buffer.alloc(32, 3).toString('base64') }
    const service = await spawnService(['bun', 'server/main.ts'], env)
    try {
      const warning = service.output().split('\n').filter((l) => l.includes('autovacuum_off_for')).map((l) => JSON.parse(l))
      expect(warning).toHaveLength(1)
      expect(warning[0].level).toBe('warn')
      expect(warning[0].message).toBe(autovacuumWarning(['notification_deliveries']))
      expect(warning[0].autovacuum_off_for).toEqual([...(serverOff ? ['server'] : []), 'notification_deliveries'])
    } finally {
      await service.stop()
    }
    await sql`alter table notification_deliveries reset (autovacuum_enabled)`
    if (serverOff) return // this server's autovacuum is off for everyone (its configuration): the quiet start cannot be shown here
    const quiet = await spawnService(['bun', 'server/main.ts'], env)
    try {
      expect(quiet.output()).not.toContain('autovacuum_off_for')
    } finally {
      await quiet.stop()
    }
  })
})
