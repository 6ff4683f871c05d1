/**
 * What the app is built from: createApp(deps) takes these, so tests and main.ts wire the same app.
 */
import type { Config } from './config'
import type { Sql } from './db/connect'
import type { Cursors } from './http/pagination'
import type { Authenticator } from './auth/principal'
import type { Mailer } from './mail/mailer'
import type { BlobStore } from './storage/blob-store'
import type { CaseEvents } from './events'
import type { DocumentParser } from './documents/parsing/parse-control'
import type { CacheRegistry } from './auth/credential-cache'
import type { Logger } from './observability/log'
import type { Metrics } from './observability/metrics'
import type { UploadTargetKind } from './documents/upload-targets'
import type { LinkBases } from './notifications/envelope'

/** The dependencies of every route plugin. */
export interface AppDeps {
  config: Config
  sql: Sql
  cursors: Cursors
  authenticate: Authenticator
  mailer: Mailer
  /** The service key (32 bytes); derive purpose keys with deriveKey(). */
  secretKey: Uint8Array
  /**
   * Earlier service keys (SVC_SECRET_KEY_PREVIOUS), newest first: accepted to decrypt and to verify
   * signatures (cursors, upload URLs) while data moves to `secretKey`; never used to encrypt or sign.
   */
  previousSecretKeys: Uint8Array[]
  /** The process's one logger (JSON lines; request_id, trace_id and tenant_id from the trace context). */
  log: Logger
  /** The Prometheus metric families (served on SVC_METRICS_PORT when set). */
  metrics: Metrics
  /** True when the database answers and migrations are current (for /readyz). */
  ready: () => Promise<boolean>
  /** True once the process has started to drain (readyz then answers 503). */
  draining: () => boolean
  /** Where document bytes live (local directory or S3). */
  blobs: BlobStore
  /** The per-case event log's fan-out and SSE streams; close() on drain. */
  events: CaseEvents
  /** Document parsing in isolated, bounded processes; close() on drain. */
  parser: DocumentParser
  /** Listens for a NOTIFY channel (the job runner wakes on committed jobs); null where the database delivers none (embedded). */
  listen: (channel: string, fn: () => void) => Promise<(() => Promise<void>) | null>
  /** The process's caches, for the operator surface's cache figures. */
  caches: CacheRegistry
  /** What a presigned upload URL can fill: case documents, guideline sources, uploaded invoices. */
  uploadTargets: readonly UploadTargetKind[]
  /** Bases of the links in notifications (SVC_BASE_URL, SVC_UI_BASE_URL), handed to task finishing. */
  links: LinkBases
}
