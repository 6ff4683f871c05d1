/**
 * A short key of the service's migrations (number, name and SQL of each): the name of a cached,
 * migrated test database or cluster changes with any migration, so none is used with a stale schema.
 */
import { createHash } from 'node:crypto'
import { MIGRATIONS } from '../../sql/index'

/** 16 hex digits of a SHA-256 over every migration of sql/. */
export function migrationsKey(): string {
  return createHash('sha256').update(JSON.stringify(MIGRATIONS.map((m) => [m.version, m.name, m.sql]))).digest('hex').slice(0, 16)
}
