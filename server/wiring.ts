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
import { linkBases } from './notifications/envelope'
import { createParserPool } from './documents/parsing/parser-pool'
import { createLogger, setDefaultLogger, type Logger } from './observability/log'
import { createMetrics, type Metrics } from './observability/metrics'
import { queueDepth } from '../jobs/queue'
import { documentUploadTarget } from './documents/upload-targets'
import { guidelineUploadTarget } from './authoring/guidelines'
import { invoiceUploadTarget } from './billing/invoice-upload'

/** What a caller may supply instead of the defaults (tests: a quieter logger). */
export interface WireOptions { log?: Logger; metrics?: Metrics }

/** Builds AppDeps; `draining` reports whether the process has begun to shut down. */
export function wireDeps(config: Config, db: Database, draining: () => boolean = () => false, opts: WireOptions = {}): AppDeps {
  const log = opts.log ?? createLogger({ level: config.logLevel })
  setDefaultLogger(log)
  // Metrics are recorded only when they are served (SVC_METRICS_PORT): off, every helper is a no-op.
  const metrics = opts.metrics ?? createMetrics(config.metricsPort !== undefined)
  metrics.setCollectors({ queue: () => queueDepth(db.sql), pool: () => db.poolStats() })
  const secretKey = loadSecretKey(config.secretKey, config.dataDir, (line) => log.warn(line))
  const previousSecretKeys = config.previousSecretKeys
  if (!db.embedded) {
    listenForCredentialChanges(db.listenSql).catch((e) => log.warn('credential change notifications unavailable; cached credentials lapse after 5 s', { error: String(e) }))
  }
  const verifyToken = config.oidcIssuer ? createTokenVerifier(config.oidcIssuer, config.oidcAudience ?? [], config.oidcOrgClaim) : undefined
  const caches = new CacheRegistry()
  const events = createCaseEvents({ sql: db.sql, listenSql: db.listenSql, embedded: db.embedded })
  metrics.setCollectors({ sseStreams: () => events.streams.size })
  return {
    caches,
    uploadTargets: [documentUploadTarget, guidelineUploadTarget, invoiceUploadTarget],
    links: linkBases(config),
    config,
    sql: db.sql,
    cursors: new Cursors(deriveKey(secretKey, 'cursor'), previousSecretKeys.map((k) => deriveKey(k, 'cursor'))),
    mailer: createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir }),
    secretKey,
    previousSecretKeys,
    log,
    metrics,
    authenticate: createAuthenticator({ sql: db.sql, verifyToken, operatorSubjects: config.operatorSubjects, resolveEmbedSession: createEmbedSessionResolver(db.sql), caches }),
    ready: () => migrationsCurrent(db.sql),
    draining,
    blobs: createBlobStore(config, secretKey),
    events,
    listen: (channel, fn) => db.listen(channel, fn),
    parser: createParserPool(config.parse, (level, message, extra = {}) => log.log(level, message, extra)),
  }
}
