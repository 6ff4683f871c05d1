/**
 * Migrations: the numbered files of sql/, applied in order, each in its own transaction, recorded in
 * schema_migrations, serialised across processes by a transaction-scoped advisory lock.
 */
import type { Sql } from './connect'
import { MIGRATIONS } from '../../sql/index'

/** Arbitrary constant naming the migration lock among the database's advisory locks. */
const MIGRATION_LOCK = 720_001

/** The newest migration version this build knows. */
export const LATEST_MIGRATION = Math.max(...MIGRATIONS.map((m) => m.version))

/** Applies every migration not yet recorded; returns the versions applied by this call. */
export async function migrate(sql: Sql): Promise<number[]> {
  await sql`
    create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`.catch(async (e) => {
    // Two processes racing on the very first create: the loser sees a duplicate type; re-check.
    if (!(await sql`select to_regclass('schema_migrations') as t`)[0]?.t) throw e
  })
  const applied: number[] = []
  for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`
      const [done] = await tx`select 1 from schema_migrations where version = ${m.version}`
      if (done) return
      await tx.unsafe(m.sql)
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`
      applied.push(m.version)
    })
  }
  return applied
}

/** True when the database answers and every known migration is recorded. */
export async function migrationsCurrent(sql: Sql): Promise<boolean> {
  const [row] = await sql`select coalesce(max(version), 0)::int as v from schema_migrations`
  return row!.v >= LATEST_MIGRATION
}
