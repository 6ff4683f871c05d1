/**
 * Wires configuration and an open database into the app's dependencies; main.ts and the tests
 * share it so both run the same service.
 */
import type { Config } from './config'
import type { Database } from './db/connect'
import type { AppDeps } from './deps'
import { migrationsCurrent } from './db/migrate'
import { Cursors } from './http/pagination'
import { createAuthenticator } from './auth/principal'
import { CacheRegistry, listenForCredentialChanges } from './auth/credential-cache'
import { createEmbedSessionResolver } from './embed/sessions'
import { createTokenVerifier } from './auth/oidc'
import { deriveKey, loadSecretKey } from './secret-key'
import { createMailer } from './mail/mailer'
import { createBlobStore } from './storage'
import { createCaseEvents } from './events'
import { configureLinkBases } from './notifications/envelope'
import { createParserPool } from './documents/parsing/parser-pool'

/** Builds AppDeps; `draining` reports whether the process has begun to shut down. */
export function wireDeps(config: Config, db: Database, draining: () => boolean = () => false): AppDeps {
  const secretKey = loadSecretKey(config.secretKey, config.dataDir, (line) => console.warn(JSON.stringify({ level: 'warn', message: line })))
  configureLinkBases({ baseUrl: config.baseUrl, uiBaseUrl: config.uiBaseUrl })
  if (!db.embedded) {
    listenForCredentialChanges(db.sql).catch((e) => console.warn(JSON.stringify({ level: 'warn', message: 'credential change notifications unavailable; cached credentials lapse after 5 s', error: String(e) })))
  }
  const verifyToken = config.oidcIssuer ? createTokenVerifier(config.oidcIssuer, config.oidcAudience ?? [], config.oidcOrgClaim) : undefined
  const caches = new CacheRegistry()
  return {
    caches,
    config,
    sql: db.sql,
    cursors: new Cursors(deriveKey(secretKey, 'cursor')),
    mailer: createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir }),
    secretKey,
    authenticate: createAuthenticator({ sql: db.sql, verifyToken, operatorSubjects: config.operatorSubjects, resolveEmbedSession: createEmbedSessionResolver(db.sql), caches }),
    ready: () => migrationsCurrent(db.sql),
    draining,
    blobs: createBlobStore(config, secretKey),
    events: createCaseEvents({ sql: db.sql, embedded: db.embedded }),
    listen: (channel, fn) => db.listen(channel, fn),
    parser: createParserPool(config.parse, (level, message, extra = {}) =>
      console.log(JSON.stringify({ level, time: new Date().toISOString(), message, ...extra }))),
  }
}
