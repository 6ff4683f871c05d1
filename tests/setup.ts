// Preloaded by bunfig.toml: HTTP test files start an app and a database in beforeAll, which can
// take several seconds on a busy two-core machine.
import { setDefaultTimeout } from 'bun:test'

setDefaultTimeout(60_000)
