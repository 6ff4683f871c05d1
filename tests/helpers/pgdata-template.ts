/**
 * Initialised embedded-database clusters for tests, made once and copied into each test's data
 * directory, so no test file runs PGlite's initdb (about 15 s of CPU and ~1 GB of memory each on a
 * quiet machine, up to a minute on a busy one; a copy of the 40 MB cluster takes under a second).
 * The production build does the same with its own template (scripts/build.ts, server/db/pgdata-template.ts).
 *
 * Two templates, both under the OS tmp dir:
 * - `bare`: the cluster as initdb leaves it, keyed by PGlite's version. For a service process a
 *   test starts on a fresh data directory: it still applies every migration itself, as a new
 *   deployment does.
 * - `migrated`: the bare cluster with every migration of sql/ applied, keyed by PGlite's version
 *   and a hash of the migrations (number, name and SQL), so a changed or added migration makes a new
 *   one and never meets a stale schema. For `startApp`, whose migrate() then finds nothing to do
 *   (applying them took ~2-4 s per test file). Migrations on an empty database create and backfill
 *   nothing that depends on when they ran. Tests of migrating itself use fresh databases
 *   (tests/process/migrations.test.ts, cli.test.ts).
 * The test workers of one run (or of runs side by side) race for a template through an exclusive
 * lock file, and a finished cluster appears by an atomic rename, so a half-made one is never copied.
 * The preload (tests/setup.ts) makes them before the first test file of an embedded run, outside
 * any hook's timeout.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrationsKey } from './migrations-key'

/** Which cluster: as initdb leaves it, or with every migration applied. */
export type TemplateKind = 'bare' | 'migrated'

/** How long a lock may be held before a waiter takes it over (its maker died without a trace). */
const STALE_LOCK_MS = 5 * 60_000

const pgliteVersion = (): string =>
  (JSON.parse(readFileSync(join(import.meta.dir, '../../node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }).version

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true } catch { return false }
}

/** The lock's holder is gone (a dead process) or it has been held far longer than initdb takes. */
function staleLock(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'))
    if (Number.isInteger(pid) && pid > 0 && !alive(pid)) return true
    return Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS
  } catch {
    return false // gone already: the next round sees the template or takes the lock
  }
}

/**
 * Makes a template in a scratch directory beside `path` and renames it into place: bare, PGlite's
 * initdb; migrated, a copy of the bare one opened as the service opens it and migrated.
 */
async function makeTemplate(kind: TemplateKind, path: string): Promise<void> {
  const scratch = mkdtempSync(`${path}.making-`)
  try {
    if (kind === 'bare') {
      const { PGlite } = await import('@electric-sql/pglite')
      const db = await PGlite.create({ dataDir: join(scratch, 'pg') })
      await db.exec('checkpoint')
      await db.close()
    } else {
      cpSync(await pgdataTemplate('bare'), join(scratch, 'pg'), { recursive: true })
      // Imported here: the preload checks for the template before every run, and only its maker needs them.
      const { openDatabase } = await import('../../server/db/connect')
      const { migrate } = await import('../../server/db/migrate')
      const db = await openDatabase({ dataDir: scratch })
      try {
        await migrate(db.sql)
        await db.sql`checkpoint`
      } finally {
        await db.close()
      }
    }
    renameSync(join(scratch, 'pg'), path)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** The template's directory: PGlite's version, and for a migrated one the migrations' hash. */
function templatePath(kind: TemplateKind): string {
  const version = pgliteVersion()
  if (kind === 'bare') return join(tmpdir(), `svc-test-pgdata-${version}`)
  return join(tmpdir(), `svc-test-pgdata-${version}-migrated-${migrationsKey()}`)
}

const ready = new Map<TemplateKind, Promise<string>>()

/**
 * The path of an initialised cluster of `kind`, made by the first caller of any process (the others
 * wait for it); later calls of this process reuse the answer.
 */
export function pgdataTemplate(kind: TemplateKind = 'migrated'): Promise<string> {
  const known = ready.get(kind)
  if (known) return known
  const made = (async () => {
    const path = templatePath(kind)
    const lock = `${path}.lock`
    for (;;) {
      if (existsSync(join(path, 'PG_VERSION'))) return path
      let fd: number | undefined
      try { fd = openSync(lock, 'wx') } catch { /* another process makes it */ }
      if (fd !== undefined) {
        try {
          writeFileSync(fd, String(process.pid))
          closeSync(fd)
          // Checked again under the lock: the maker before us may have finished in between.
          if (!existsSync(join(path, 'PG_VERSION'))) {
            rmSync(path, { recursive: true, force: true })
            await makeTemplate(kind, path)
          }
          return path
        } finally {
          rmSync(lock, { force: true })
        }
      }
      if (staleLock(lock)) rmSync(lock, { force: true })
      else await Bun.sleep(200)
    }
  })()
  ready.set(kind, made)
  made.catch(() => ready.delete(kind))
  return made
}

/**
 * Puts an initialised embedded cluster into `dataDir` (as `pg/`, where the service opens it) unless
 * one is there, so the service or a test app opening that data directory starts without initdb
 * (and, from the migrated template, without migrating).
 * Only for a data directory whose service runs embedded (no DATABASE_URL). Returns `dataDir`.
 */
export async function seedEmbeddedDataDir(dataDir: string, kind: TemplateKind = 'migrated'): Promise<string> {
  const pg = join(dataDir, 'pg')
  if (existsSync(join(pg, 'PG_VERSION'))) return dataDir
  const template = await pgdataTemplate(kind)
  mkdirSync(dataDir, { recursive: true })
  cpSync(template, pg, { recursive: true })
  return dataDir
}
