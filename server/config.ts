/**
 * Configuration: every environment variable of the operating contract, read and validated in one
 * place. A bad value stops the start with one line naming the variable (ConfigError).
 */
import { availableParallelism } from 'node:os'
import { resolve } from 'node:path'
import { connectionOptions } from './db/connect'

/** A rate class as `burst/refill_seconds`: `burst` tokens, one token back every `refillSeconds`. */
export interface RateClass { burst: number; refillSeconds: number }

/** S3-compatible object storage settings; present only when every `SVC_S3_*` variable is set. */
export interface S3Config { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string }

/** The validated configuration of one process. */
export interface Config {
  port: number
  host: string
  /**
   * SO_REUSEPORT on the listener (SVC_REUSE_PORT=1): several API processes bind the same PORT and
   * the kernel spreads new connections over them (Linux). See docs/operations.md.
   */
  reusePort: boolean
  databaseUrl: string | undefined
  /** Connections of this process's PostgreSQL pool (SVC_DB_POOL_MAX; default 2 x CPU cores + 1, at most 20). */
  dbPoolMax: number
  /** How long a statement may wait for its answer (SVC_DB_STATEMENT_TIMEOUT_MS); then it fails as unavailable (503) and its connection is replaced. */
  dbStatementTimeoutMs: number
  /** How long a statement may wait for a connection of the pool (SVC_DB_POOL_WAIT_MS); then 503. */
  dbPoolWaitMs: number
  /**
   * Connections of a worker-only process (`--worker`): SVC_DB_POOL_MAX when set, else enough for
   * its job concurrency (see workerPoolSize).
   */
  workerDbPoolMax: number
  /** How long one PostgreSQL connection attempt may take before it fails (SVC_DB_CONNECT_TIMEOUT_MS, default 5000). */
  dbConnectTimeoutMs: number
  dataDir: string
  baseUrl: string
  uiBaseUrl: string | undefined
  oidcIssuer: string | undefined
  /**
   * The audiences a user access token must name in `aud` (SVC_OIDC_AUDIENCE, comma-separated; at
   * least one); set exactly when `oidcIssuer` is (required with it).
   */
  oidcAudience: readonly string[] | undefined
  oidcOrgClaim: string
  operatorSubjects: ReadonlySet<string>
  smtpUrl: string | undefined
  mailFrom: string
  webhookRetryInitialMs: number
  webhookCaFile: string | undefined
  webhookUnsafeAllowAddresses: readonly string[]
  /** Job runner: jobs run at once per process (SVC_JOB_CONCURRENCY), idle poll (SVC_JOB_POLL_MS), lease (SVC_JOB_LEASE_MS). */
  jobConcurrency: number
  /**
   * Jobs a runner keeps claimed beyond its running ones (SVC_JOB_PREFETCH; unset: the runner's concurrency):
   * a freed slot starts one without a claim round trip, and one claim serves many jobs. Larger
   * suits many short jobs; prefetched jobs wait for this runner while another may be idle. While a
   * backlog of short jobs empties the slots faster than a claim returns, the queue deepens on its
   * own (up to 4x the concurrency) and falls back to this once a claim finds the backlog gone.
   */
  jobPrefetch: number | undefined
  jobPollMs: number
  jobLeaseMs: number
  rateRun: RateClass
  rateUnit: RateClass
  modelUrl: string | undefined
  modelName: string | undefined
  modelApiKey: string | undefined
  /** One model call's time limit (SVC_MODEL_TIMEOUT_MS). */
  modelTimeoutMs: number
  /** Retries of a model call after a vendor error (SVC_MODEL_MAX_RETRIES). */
  modelMaxRetries: number
  /** Model price per 1,000 input / output tokens in micro-units (SVC_MODEL_PRICE_INPUT_MICRO / _OUTPUT_MICRO). */
  modelPriceInputMicro: number
  modelPriceOutputMicro: number
  /** Automatic checks of the model endpoint before a generation run stalls (SVC_GENERATION_OUTAGE_CHECKS). */
  generationOutageChecks: number
  /** First wait between those checks, doubling (SVC_GENERATION_CHECK_INTERVAL_MS). */
  generationCheckIntervalMs: number
  /** Largest chunk of guideline text one generation step reads (SVC_GENERATION_CHUNK_CHARS). */
  generationChunkChars: number
  secretKey: Uint8Array | undefined
  s3: S3Config | undefined
  embedHandoffTtlSeconds: number
  embedSessionTtlSeconds: number
  exampleHost: boolean
  /** Largest JSON request body accepted, in bytes (413 above). */
  maxJsonBodyBytes: number
  /** Largest document upload accepted, in bytes (413 above). */
  maxUploadBytes: number
  /** How long a download waits for the document store's next bytes before it gives up (SVC_DOWNLOAD_STALL_MS): 503 before any byte, a cut body after. */
  downloadStallMs: number
  /** How document parsing is isolated and bounded (SVC_PARSE_*). */
  parse: ParseConfig
  /** Lowest level logged (SVC_LOG_LEVEL: debug, info, warn, error; default info). */
  logLevel: 'debug' | 'info' | 'warn' | 'error'
  /** One access line per request (SVC_ACCESS_LOG, default on). */
  accessLog: boolean
  /** The read front: API-key reads of one case answered ahead of the framework (SVC_READ_FRONT, default on; server/resources/read-front.ts). */
  readFront: boolean
  /** The metrics listener's port (SVC_METRICS_PORT; unset: no listener, 0: any free port) and interface (SVC_METRICS_HOST, default HOST). */
  metricsPort: number | undefined
  metricsHost: string
  /** Named prepared statements (SVC_DB_PREPARE, default on); off for a transaction-mode pooler. */
  dbPrepare: boolean
  /** Where LISTEN connects (DATABASE_LISTEN_URL: session-mode pooler or the server itself); default DATABASE_URL. */
  databaseListenUrl: string | undefined
  /** Earlier service keys (SVC_SECRET_KEY_PREVIOUS, comma-separated): accepted to decrypt and verify while `svc secret-key reencrypt` moves data to the current key. */
  previousSecretKeys: Uint8Array[]
}

/** Document parsing: worker processes and the limits each document is read within. */
export interface ParseConfig {
  /** Parser processes per service process (SVC_PARSE_WORKERS; default the CPU cores, at most 8). */
  workers: number
  /**
   * Keep one parser process started while idle (SVC_PARSE_WARM; default off): the first document
   * after a quiet spell is then read without starting a process (a few hundred ms), at the cost of
   * that process's memory (about 55 MB) for as long as the service runs.
   */
  warm: boolean
  /** A parser process killed above this resident memory, in MiB (SVC_PARSE_MEMORY_MB). */
  memoryMb: number
  /** Wall-clock limit of one document's parse (SVC_PARSE_TIMEOUT_MS). */
  timeoutMs: number
  /** Pages read of one document; later pages are left out and the document degraded (SVC_PARSE_MAX_PAGES). */
  maxPages: number
  /** Most bytes one zip part or PDF stream may inflate to, and a DOCX's parts in sum, in MiB (SVC_PARSE_MAX_INFLATED_MB). */
  maxInflatedMb: number
  /** Blocks kept of one document (SVC_PARSE_MAX_BLOCKS). */
  maxBlocks: number
  /** Characters of block text kept of one document (SVC_PARSE_MAX_CHARS). */
  maxChars: number
  /** Largest image (width x height) OCR reads or renders a page to (SVC_OCR_MAX_PIXELS). */
  ocrMaxPixels: number
  /** One page's OCR time limit (SVC_OCR_PAGE_TIMEOUT_MS). */
  ocrPageTimeoutMs: number
  /** Pages recognised by OCR per document (SVC_OCR_MAX_PAGES). */
  ocrMaxPages: number
  /** Which Tesseract reads pages (SVC_OCR_ENGINE): auto (the native command when installed), native, wasm. */
  ocrEngine: 'auto' | 'native' | 'wasm'
  /** Pages recognised at once by this process's parser processes together (SVC_OCR_CONCURRENCY; default the CPU count). */
  ocrConcurrency: number
  /** Documents in OCR at once, each in its own parser process beside the SVC_PARSE_WORKERS text lane (SVC_OCR_DOCUMENTS; default twice SVC_OCR_CONCURRENCY, at least 4). */
  ocrDocuments: number
  /** Attachments kept of one email (SVC_EMAIL_MAX_ATTACHMENTS), their MiB in sum (SVC_EMAIL_MAX_ATTACHMENT_MB), emails inside emails (SVC_EMAIL_MAX_DEPTH). */
  emailMaxAttachments: number
  emailMaxAttachmentMb: number
  emailMaxDepth: number
}

/** Raised for an invalid environment value; its message is the one line printed at start. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>

const fail = (name: string, why: string): never => {
  throw new ConfigError(`invalid configuration: ${name} ${why}`)
}

const str = (env: Env, name: string): string | undefined => {
  const v = env[name]
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}

const int = (env: Env, name: string, dflt: number, min: number, max: number): number => {
  const v = str(env, name)
  if (v === undefined) return dflt
  if (!/^\d+$/.test(v)) return fail(name, `must be a whole number, got "${v}"`)
  const n = Number(v)
  if (n < min || n > max) return fail(name, `must be between ${min} and ${max}, got ${n}`)
  return n
}

const url = (env: Env, name: string, protocols: string[]): string | undefined => {
  const v = str(env, name)
  if (v === undefined) return undefined
  let u: URL
  try { u = new URL(v) } catch { return fail(name, `must be an absolute URL`) }
  if (!protocols.includes(u.protocol)) return fail(name, `must use ${protocols.join(' or ')}`)
  return v.replace(/\/+$/, '')
}

const rate = (env: Env, name: string, dflt: RateClass): RateClass => {
  const v = str(env, name)
  if (v === undefined) return dflt
  const m = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(v)
  if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) return fail(name, `must be burst/refill_seconds like 10/30, got "${v}"`)
  return { burst: Number(m[1]), refillSeconds: Number(m[2]) }
}

const oneOf = <T extends string>(env: Env, name: string, values: readonly T[], dflt: T): T => {
  const v = str(env, name)
  if (v === undefined) return dflt
  if (!(values as readonly string[]).includes(v)) return fail(name, `must be one of ${values.join(', ')}, got "${v}"`)
  return v as T
}

const bool = (env: Env, name: string, dflt = false): boolean => {
  const v = str(env, name)
  if (v === undefined) return dflt
  if (v === '0' || v === 'false') return false
  if (v === '1' || v === 'true') return true
  return fail(name, `must be 1 or 0, got "${v}"`)
}

/** A comma-separated list of token audiences; undefined when unset. */
const audiences = (env: Env, name: string): string[] | undefined => {
  const v = str(env, name)
  if (v === undefined) return undefined
  const list = v.split(',').map((a) => a.trim())
  if (list.some((a) => a === '')) return fail(name, `must list audiences separated by commas, without empty entries, got "${v}"`)
  return [...new Set(list)]
}

const ipLiteral = (name: string, v: string): string => {
  // IPv4 dotted quad or an IPv6 literal (URL parsing validates the IPv6 syntax for us).
  if (/^(\d{1,3})(\.\d{1,3}){3}$/.test(v) && v.split('.').every((p) => Number(p) <= 255)) return v
  try { if (v.includes(':') && new URL(`http://[${v}]/`)) return v } catch { /* fall through */ }
  return fail(name, `must list IP literals, got "${v}"`)
}

/**
 * The default pool: PostgreSQL's rule of thumb for active connections, twice the cores plus one,
 * at most 20 (a few processes on large hosts stay under PostgreSQL's default 100 connections).
 * The service holds a connection only for a statement or a short transaction (parsing, model calls
 * and webhook sends run outside any), so more connections add contention, not throughput: on a
 * 2-core host 5 connections serve ~15% more reads per second than 10.
 */
export function defaultPoolSize(cores = availableParallelism()): number {
  return Math.min(20, 2 * cores + 1)
}

/**
 * The default pool of a worker-only process: one connection per concurrently running job plus two
 * (the claim and the heartbeat or a batched finish), never fewer than the default pool. A worker
 * with 8 jobs at once on 5 connections had its jobs queue for connections between round trips.
 */
export function workerPoolSize(jobConcurrency: number, cores = availableParallelism()): number {
  return Math.max(defaultPoolSize(cores), jobConcurrency + 2)
}

/** Reads and validates the process configuration from an environment (process.env by default). */
export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 3000, 0, 65535)
  const host = str(env, 'HOST') ?? '0.0.0.0'
  const dataDir = resolve(str(env, 'SVC_DATA_DIR') ?? './data')
  const secret = str(env, 'SVC_SECRET_KEY')
  let secretKey: Uint8Array | undefined
  if (secret !== undefined) {
    secretKey = new Uint8Array(Buffer.from(secret, 'base64'))
    if (secretKey.length !== 32) fail('SVC_SECRET_KEY', 'must be 32 bytes encoded as base64')
  }
  const s3Names = ['SVC_S3_ENDPOINT', 'SVC_S3_BUCKET', 'SVC_S3_REGION', 'SVC_S3_ACCESS_KEY_ID', 'SVC_S3_SECRET_ACCESS_KEY'] as const
  const s3Set = s3Names.filter((n) => str(env, n) !== undefined)
  if (s3Set.length > 0 && s3Set.length < s3Names.length) {
    fail(s3Names.find((n) => str(env, n) === undefined)!, 'must be set when any SVC_S3_* variable is set')
  }
  const s3 = s3Set.length === s3Names.length
    ? {
        endpoint: url(env, 'SVC_S3_ENDPOINT', ['http:', 'https:'])!,
        bucket: str(env, 'SVC_S3_BUCKET')!,
        region: str(env, 'SVC_S3_REGION')!,
        accessKeyId: str(env, 'SVC_S3_ACCESS_KEY_ID')!,
        secretAccessKey: str(env, 'SVC_S3_SECRET_ACCESS_KEY')!,
      }
    : undefined
  const previousSecretKeys = (str(env, 'SVC_SECRET_KEY_PREVIOUS') ?? '').split(',').map((k) => k.trim()).filter(Boolean).map((k) => {
    const key = new Uint8Array(Buffer.from(k, 'base64'))
    if (key.length !== 32) fail('SVC_SECRET_KEY_PREVIOUS', 'must list 32-byte keys encoded as base64, separated by commas')
    return key
  })
  if (previousSecretKeys.length > 0 && secretKey === undefined) fail('SVC_SECRET_KEY_PREVIOUS', 'needs SVC_SECRET_KEY (the key data is moved to)')
  const metricsPort = str(env, 'SVC_METRICS_PORT') === undefined ? undefined : int(env, 'SVC_METRICS_PORT', 0, 0, 65535)
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) fail('SVC_METRICS_PORT', 'must differ from PORT (metrics are never served on the public listener)')
  const databaseListenUrl = str(env, 'DATABASE_LISTEN_URL')
  if (databaseListenUrl !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(databaseListenUrl)) fail('DATABASE_LISTEN_URL', 'must be a postgres:// connection string')
    try { connectionOptions(databaseListenUrl) } catch (e) { fail('DATABASE_LISTEN_URL', (e as Error).message) }
  }
  const databaseUrl = str(env, 'DATABASE_URL')
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) fail('DATABASE_URL', 'must be a postgres:// connection string')
  if (databaseUrl !== undefined) {
    try { connectionOptions(databaseUrl) } catch (e) { fail('DATABASE_URL', (e as Error).message) }
  }
  const oidcIssuer = url(env, 'SVC_OIDC_ISSUER', ['http:', 'https:'])
  const oidcAudience = audiences(env, 'SVC_OIDC_AUDIENCE')
  if (oidcIssuer !== undefined && oidcAudience === undefined) {
    fail('SVC_OIDC_AUDIENCE', "must be set when SVC_OIDC_ISSUER is set (the aud value the issuer puts in this service's access tokens)")
  }
  const mailFrom = str(env, 'SVC_MAIL_FROM') ?? 'notifications@localhost'
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(mailFrom) && !/^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(mailFrom)) fail('SVC_MAIL_FROM', 'must be an email address')
  return {
    port,
    host,
    reusePort: bool(env, 'SVC_REUSE_PORT'),
    databaseUrl,
    dbPoolMax: int(env, 'SVC_DB_POOL_MAX', defaultPoolSize(), 1, 500),
    dbStatementTimeoutMs: int(env, 'SVC_DB_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    dbPoolWaitMs: int(env, 'SVC_DB_POOL_WAIT_MS', 10_000, 100, 3_600_000),
    workerDbPoolMax: int(env, 'SVC_DB_POOL_MAX', workerPoolSize(int(env, 'SVC_JOB_CONCURRENCY', 8, 1, 256)), 1, 500),
    dbConnectTimeoutMs: int(env, 'SVC_DB_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
    dataDir,
    baseUrl: url(env, 'SVC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`,
    uiBaseUrl: url(env, 'SVC_UI_BASE_URL', ['http:', 'https:']),
    oidcIssuer,
    oidcAudience: oidcIssuer !== undefined ? oidcAudience : undefined,
    oidcOrgClaim: str(env, 'SVC_OIDC_ORG_CLAIM') ?? 'urn:idp:iam:user:resourceowner:id',
    operatorSubjects: new Set((str(env, 'SVC_OPERATOR_SUBJECTS') ?? '').split(',').map((s) => s.trim()).filter(Boolean)),
    smtpUrl: url(env, 'SVC_SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom,
    webhookRetryInitialMs: int(env, 'SVC_WEBHOOK_RETRY_INITIAL_MS', 60_000, 1, 86_400_000),
    webhookCaFile: str(env, 'SVC_WEBHOOK_CA_FILE'),
    webhookUnsafeAllowAddresses: (str(env, 'SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES') ?? '').split(',').map((s) => s.trim()).filter(Boolean)
      .map((a) => ipLiteral('SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES', a)),
    jobConcurrency: int(env, 'SVC_JOB_CONCURRENCY', 8, 1, 256),
    jobPrefetch: str(env, 'SVC_JOB_PREFETCH') === undefined ? undefined : int(env, 'SVC_JOB_PREFETCH', 8, 1, 10_000),
    jobPollMs: int(env, 'SVC_JOB_POLL_MS', 500, 1, 60_000),
    jobLeaseMs: int(env, 'SVC_JOB_LEASE_MS', 60_000, 100, 3_600_000),
    rateRun: rate(env, 'SVC_RATE_RUN', { burst: 10, refillSeconds: 30 }),
    rateUnit: rate(env, 'SVC_RATE_UNIT', { burst: 120, refillSeconds: 2 }),
    modelUrl: url(env, 'SVC_MODEL_URL', ['http:', 'https:']),
    modelName: str(env, 'SVC_MODEL_NAME'),
    modelApiKey: str(env, 'SVC_MODEL_API_KEY'),
    modelTimeoutMs: int(env, 'SVC_MODEL_TIMEOUT_MS', 60_000, 100, 600_000),
    modelMaxRetries: int(env, 'SVC_MODEL_MAX_RETRIES', 3, 0, 10),
    modelPriceInputMicro: int(env, 'SVC_MODEL_PRICE_INPUT_MICRO', 0, 0, 1_000_000_000),
    modelPriceOutputMicro: int(env, 'SVC_MODEL_PRICE_OUTPUT_MICRO', 0, 0, 1_000_000_000),
    generationOutageChecks: int(env, 'SVC_GENERATION_OUTAGE_CHECKS', 5, 1, 100),
    generationCheckIntervalMs: int(env, 'SVC_GENERATION_CHECK_INTERVAL_MS', 30_000, 1, 3_600_000),
    generationChunkChars: int(env, 'SVC_GENERATION_CHUNK_CHARS', 6000, 100, 200_000),
    secretKey,
    s3,
    embedHandoffTtlSeconds: int(env, 'SVC_EMBED_HANDOFF_TTL_S', 60, 1, 3600),
    embedSessionTtlSeconds: int(env, 'SVC_EMBED_SESSION_TTL_S', 1800, 1, 86_400),
    exampleHost: bool(env, 'SVC_EXAMPLE_HOST'),
    maxJsonBodyBytes: int(env, 'SVC_MAX_JSON_BODY_BYTES', 1_048_576, 1_048_576, 64 * 1_048_576),
    maxUploadBytes: int(env, 'SVC_MAX_UPLOAD_BYTES', 50 * 1_048_576, 1, 5 * 1024 * 1_048_576),
    downloadStallMs: int(env, 'SVC_DOWNLOAD_STALL_MS', 15_000, 100, 600_000),
    parse: {
      workers: int(env, 'SVC_PARSE_WORKERS', Math.min(8, availableParallelism()), 1, 64),
      warm: bool(env, 'SVC_PARSE_WARM'),
      memoryMb: int(env, 'SVC_PARSE_MEMORY_MB', 1024, 64, 65_536),
      timeoutMs: int(env, 'SVC_PARSE_TIMEOUT_MS', 120_000, 100, 3_600_000),
      maxPages: int(env, 'SVC_PARSE_MAX_PAGES', 2000, 1, 1_000_000),
      maxInflatedMb: int(env, 'SVC_PARSE_MAX_INFLATED_MB', 128, 1, 16_384),
      maxBlocks: int(env, 'SVC_PARSE_MAX_BLOCKS', 20_000, 1, 10_000_000),
      maxChars: int(env, 'SVC_PARSE_MAX_CHARS', 10_000_000, 1000, 1_000_000_000),
      ocrMaxPixels: int(env, 'SVC_OCR_MAX_PIXELS', 40_000_000, 10_000, 1_000_000_000),
      ocrPageTimeoutMs: int(env, 'SVC_OCR_PAGE_TIMEOUT_MS', 30_000, 100, 600_000),
      ocrMaxPages: int(env, 'SVC_OCR_MAX_PAGES', 300, 0, 100_000),
      ocrEngine: oneOf(env, 'SVC_OCR_ENGINE', ['auto', 'native', 'wasm'] as const, 'auto'),
      ocrConcurrency: int(env, 'SVC_OCR_CONCURRENCY', availableParallelism(), 1, 256),
      ocrDocuments: int(env, 'SVC_OCR_DOCUMENTS', Math.max(4, 2 * int(env, 'SVC_OCR_CONCURRENCY', availableParallelism(), 1, 256)), 1, 256),
      emailMaxAttachments: int(env, 'SVC_EMAIL_MAX_ATTACHMENTS', 50, 0, 10_000),
      emailMaxAttachmentMb: int(env, 'SVC_EMAIL_MAX_ATTACHMENT_MB', 50, 1, 5120),
      emailMaxDepth: int(env, 'SVC_EMAIL_MAX_DEPTH', 3, 1, 20),
    },
    logLevel: oneOf(env, 'SVC_LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    accessLog: bool(env, 'SVC_ACCESS_LOG', true),
    readFront: bool(env, 'SVC_READ_FRONT', true),
    metricsPort,
    metricsHost: str(env, 'SVC_METRICS_HOST') ?? host,
    dbPrepare: bool(env, 'SVC_DB_PREPARE', true),
    databaseListenUrl,
    previousSecretKeys,
  }
}
