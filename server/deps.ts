/**
 * What the app is built from: createApp(deps) takes these, so tests and main.ts wire the same app.
 */
import type { Config } from './config'
import type { Sql } from './db/connect'
import type { Cursors } from './http/pagination'
import type { Authenticator } from './auth/principal'

/** The dependencies of every route plugin. */
export interface AppDeps {
  config: Config
  sql: Sql
  cursors: Cursors
  authenticate: Authenticator
  /** True when the database answers and migrations are current (for /readyz). */
  ready: () => Promise<boolean>
  /** True once the process has started to drain (readyz then answers 503). */
  draining: () => boolean
}
