/**
 * The migration list. Each file is imported as text so `bun build --compile` embeds it; a test
 * checks that every sql/NNN_*.sql file is listed here.
 */
import m001 from './001_foundation.sql' with { type: 'text' }

/** One migration: its number, its name and its SQL. */
export interface Migration { version: number; name: string; sql: string }

/** Every migration of this build, in order. */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: '001_foundation', sql: m001 },
]
