/**
 * A short key of the service's migrations (number, name and SQL of each): the name of a cached,
 * migrated test database or cluster changes with any migration, so none is used with a stale schema.
 */
import { MIGRATIONS } from '../../sql/index'

/** 16 hex digits of a SHA-256 over every migration of sql/. */
export function migrationsKey(): string {
  // Bun's hasher: node:crypto takes ~100 ms to import on a busy machine, and the preload runs this for every run.
  return new Bun.CryptoHasher('sha256').update(JSON.stringify(MIGRATIONS.map((m) => [m.version, m.name, m.sql]))).digest('hex').slice(0, 16)
}
