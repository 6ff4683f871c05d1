/**
 * A database of a test file's own: with DATABASE_URL set, a fresh PostgreSQL database created
 * beside it and dropped at the end; otherwise the embedded PGlite in the app's data directory.
 */
import { postgresClient } from '../../server/db/connect'

/** A test database: its URL (undefined for embedded) and how to drop it. */
export interface TestDatabase { url: string | undefined; drop(): Promise<void> }

/** Creates a fresh database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = process.env.DATABASE_URL
  if (!admin) return { url: undefined, drop: async () => {} }
  const name = `svc_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`
  const sql = postgresClient(admin, { max: 1, onnotice: () => {} })
  await sql.unsafe(`create database ${name}`)
  await sql.end()
  const url = new URL(admin)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const sql = postgresClient(admin, { max: 1, onnotice: () => {} })
      await sql.unsafe(`drop database if exists ${name} with (force)`).catch(() => {})
      await sql.end()
    },
  }
}
