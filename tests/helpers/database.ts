/**
 * A database of a test file's own: with DATABASE_URL set, a fresh PostgreSQL database created
 * beside it and dropped at the end; otherwise the embedded PGlite in the app's data directory.
 *
 * On PostgreSQL a `migrated` database is a copy (CREATE DATABASE ... TEMPLATE) of one database
 * migrated once per set of migrations (`svc_test_tpl_<migrations key>`, tests/helpers/migrations-key.ts),
 * so a test app's migrate() finds nothing to do instead of applying every migration (1.3-1.8 s a
 * file on the 2-core machine). The first test process to need it makes it under an advisory lock,
 * under a scratch name renamed into place once migrated, so a half-made one is never copied. A
 * `bare` database is empty, as a new deployment's is.
 */
import { postgresClient } from '../../server/db/connect'
import { migrate } from '../../server/db/migrate'
import { migrationsKey } from './migrations-key'

/** A test database: its URL (undefined for embedded) and how to drop it. */
export interface TestDatabase { url: string | undefined; drop(): Promise<void> }

/** Advisory lock (on the admin database) serialising the making of the migrated template. */
const TEMPLATE_LOCK = 720_002

const withDatabase = (admin: string, name: string) => {
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.toString()
}

/** Makes the migrated template database unless it exists; returns its name. */
async function migratedTemplate(admin: string): Promise<string> {
  const name = `svc_test_tpl_${migrationsKey()}`
  const sql = postgresClient(admin, { max: 1, onnotice: () => {} })
  try {
    if ((await sql`select 1 from pg_database where datname = ${name}`).length > 0) return name
    await sql`select pg_advisory_lock(${TEMPLATE_LOCK})`
    try {
      if ((await sql`select 1 from pg_database where datname = ${name}`).length > 0) return name
      const scratch = `${name}_making`
      await sql.unsafe(`drop database if exists ${scratch} with (force)`)
      await sql.unsafe(`create database ${scratch}`)
      const db = postgresClient(withDatabase(admin, scratch), { max: 1, onnotice: () => {} })
      try {
        await migrate(db)
      } finally {
        await db.end()
      }
      await sql.unsafe(`alter database ${scratch} rename to ${name}`)
      return name
    } finally {
      await sql`select pg_advisory_unlock(${TEMPLATE_LOCK})`
    }
  } finally {
    await sql.end()
  }
}

/**
 * Creates a fresh database for one test file: `bare` (empty, the default) or `migrated` (every
 * migration applied; PostgreSQL only, the embedded database has its own template).
 */
export async function createTestDatabase(kind: 'bare' | 'migrated' = 'bare'): Promise<TestDatabase> {
  const admin = process.env.DATABASE_URL
  if (!admin) return { url: undefined, drop: async () => {} }
  const template = kind === 'migrated' ? await migratedTemplate(admin) : undefined
  const name = `svc_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`
  const sql = postgresClient(admin, { max: 1, onnotice: () => {} })
  await sql.unsafe(`create database ${name}${template ? ` template ${template}` : ''}`)
  await sql.end()
  return {
    url: withDatabase(admin, name),
    async drop() {
      const sql = postgresClient(admin, { max: 1, onnotice: () => {} })
      await sql.unsafe(`drop database if exists ${name} with (force)`).catch(() => {})
      await sql.end()
    },
  }
}
