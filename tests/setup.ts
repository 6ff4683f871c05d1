// Preloaded by bunfig.toml: HTTP test files start an app and a database in beforeAll, which can
// take several seconds on a busy two-core machine.
// It also watches every log line of the run for credentials (tests/helpers/log-hygiene.ts): the
// preload's afterAll runs once after the last file and fails the run on any.
import { afterAll, setDefaultTimeout } from 'bun:test'
import { logViolations, watchLogs } from './helpers/log-hygiene'

setDefaultTimeout(60_000)
watchLogs()

// On the embedded database every test app starts from a copy of one initialised, migrated cluster
// (tests/helpers/pgdata-template.ts). It is made here, once per PGlite version and set of
// migrations (15-60 s the first time on this machine, then found), so that no test file runs
// initdb and no hook's timeout includes making it.
if (!process.env.DATABASE_URL) await (await import('./helpers/pgdata-template')).pgdataTemplate('migrated')

afterAll(() => {
  const found = logViolations()
  if (found.length > 0) throw new Error(`${found.length} log line(s) carried a credential:\n${found.slice(0, 10).join('\n')}`)
})
