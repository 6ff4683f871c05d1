/**
 * The `deliver_notification` job: one attempt of one delivery. The send happens in `prepare`,
 * outside any transaction (no database connection is held while a peer answers); the handler then
 * records the outcome in one transaction with the job's end: delivered on 2xx; any other status,
 * timeout or connection error consumes one of 8 attempts and enqueues the next attempt after the
 * back-off; refused targets (http URL, no signing secret, a private address) dead-letter at once
 * without consuming an attempt.
 */
import type { AppDeps } from '../server/deps'
import type postgres from 'postgres'
import type { Sql, Tx } from '../server/db/connect'
import { defineJobKind, enqueue, type JobOf } from './define'
import { DeliveryJob } from '../server/notifications/outbox'
import { openUsableSecret, UndecryptableSecret, usableSecretJoin } from '../server/notifications/signing-secret'
import { allowListOf, bareHost, checkTarget, type CheckedAddress } from './ssrf'
import { liveListenerFor } from '../server/notifications/dev-listeners'
import { postWebhook, webhookCa, type SenderOptions } from './webhook-sender'
import { sendEmail, type EnvelopeView } from './email-sender'
import { workspaceTimeZone } from '../server/local-time'
import { signatureHeader } from './signing'
import { DELIVERY_MAX_ATTEMPTS, deliveryBackoffMs } from './backoff'
import { outgoingTraceparent } from '../server/observability/context'
import pkg from '../package.json' with { type: 'json' }

/** A claimed delivery job (before or after its attempt). */
export type DeliveryJobOf<Prepared = unknown> = JobOf<typeof DeliveryJob.payload, true, Prepared>

/** Why a target is refused without consuming an attempt. */
export type Refusal = 'refused_http_url' | 'refused_no_signing_secret' | 'refused_private_address'

/** What one attempt came to (the result of `prepare`). */
export type AttemptOutcome =
  | { kind: 'skip' }
  | { kind: 'refused'; reason: Refusal; at: Date; durationMs: number; channel?: string }
  | { kind: 'sent'; ok: boolean; status?: number; error?: string; at: Date; durationMs: number; secretId: string | null; channel?: string; attempt?: number }

/** Options of the delivery job kind (tests shorten the timeouts). */
export interface DeliveryKindOptions extends Pick<SenderOptions, 'connectTimeoutMs' | 'totalTimeoutMs'> {
  /**
   * Test seam: sees (and may veto by throwing) every address a send is about to connect to, after
   * the SSRF guard passed it. Tests use it to keep traffic on loopback even if the guard broke.
   */
  beforeConnect?: (target: CheckedAddress, url: URL) => void
}

interface PendingDelivery {
  id: string
  tenant_id: string
  status: string
  channel: 'email' | 'webhook'
  body: string
  event_type: string
  cycle: number
  pinned_secret_id: string | null
  webhook_url: string | null
  email_address: string | null
  cycle_attempts: number
  request_id: string | null
  traceparent: string | null
}

const caCache = new Map<string, string[] | undefined>()
const caFor = (file: string | undefined) => {
  if (!file) return undefined
  if (!caCache.has(file)) caCache.set(file, webhookCa(file))
  return caCache.get(file)
}

const listenerCas = new Map<string, string[]>()
/** A development listener's certificate as the only trusted CA of its sends (pinned; no system roots). */
const listenerCa = (pem: string) => {
  let ca = listenerCas.get(pem)
  if (!ca) listenerCas.set(pem, (ca = [pem]))
  return ca
}

/** A delivery as the batch read returns it: with its target and the secret it would sign with. */
export type LoadedDelivery = PendingDelivery & { secret_id: string | null; secret_ciphertext: Uint8Array | null }

/**
 * Reads deliveries with their target and the secret each would sign with (pinned, else active),
 * for (tenant, delivery id) pairs.
 *
 * Each pair is two primary-key probes, each a LATERAL subquery with LIMIT 1, which PostgreSQL
 * cannot flatten into a plain join. As a plain join, the prepared statement's generic plan, made
 * while the tables were small, was a hash join over a sequential scan of every delivery, kept as
 * the table grew: 12 ms a batch after a few thousand deliveries, and falling throughput.
 */
export async function readDeliveries(sql: Sql, keys: { tenantId: string; deliveryId: string }[]): Promise<LoadedDelivery[]> {
  return sql<LoadedDelivery[]>`
    select d.id, d.tenant_id, d.status, d.channel, d.body, d.event_type, d.cycle, d.pinned_secret_id, s.webhook_url, s.email_address,
           d.cycle_attempts, d.request_id, d.traceparent, usable_secret.id as secret_id, usable_secret.secret_ciphertext
    from unnest(${keys.map((k) => k.tenantId)}::uuid[], ${keys.map((k) => k.deliveryId)}::uuid[]) as k(tenant_id, id)
    join lateral (
      select d.id, d.tenant_id, d.status, d.channel, d.body, d.event_type, d.cycle, d.pinned_secret_id, d.subscription_id,
             d.cycle_attempts, d.request_id, d.traceparent
      from notification_deliveries d
      where d.tenant_id = k.tenant_id and d.id = k.id
      limit 1
    ) d on true
    join lateral (
      select s.webhook_url, s.email_address
      from task_notification_subscriptions s
      where s.tenant_id = d.tenant_id and s.id = d.subscription_id
      limit 1
    ) s on true
    ${usableSecretJoin(sql, 'd.tenant_id', 'd.pinned_secret_id')}`
}

/** Makes one attempt (see attemptOnce), noting its channel and number for the metrics and the log. */
async function attempt(job: DeliveryJobOf, deps: AppDeps, opts: DeliveryKindOptions): Promise<AttemptOutcome> {
  const outcome = await attemptOnce(job, deps, opts)
  if (outcome.kind === 'skip') return outcome
  const d = job.loaded as LoadedDelivery | undefined
  outcome.channel = d?.channel ?? 'webhook'
  if (outcome.kind === 'sent') outcome.attempt = (d?.cycle_attempts ?? 0) + 1
  return outcome
}

/** Counts and logs a recorded outcome (after its transaction: a lost job records nothing). */
function observe(deps: AppDeps, job: DeliveryJobOf, outcome: AttemptOutcome, deadLettered = false): void {
  if (outcome.kind === 'skip') return
  const channel = outcome.channel ?? 'webhook'
  const { deliveryId } = job.payload
  if (outcome.kind === 'refused') {
    deps.metrics.delivery(channel, 'refused', 1)
    deps.log.warn('delivery refused', { delivery_id: deliveryId, channel, reason: outcome.reason })
    return
  }
  const result = outcome.ok ? 'delivered' : deadLettered ? 'dead_lettered' : 'failed'
  deps.metrics.delivery(channel, result, outcome.attempt ?? 1)
  deps.log.log(result === 'dead_lettered' ? 'warn' : 'info', `delivery ${result}`, {
    delivery_id: deliveryId, channel, attempt: outcome.attempt, response_status: outcome.status, duration_ms: outcome.durationMs,
    ...(outcome.error ? { error: outcome.error } : {}),
  })
}

const reportedUndecryptable = new Set<string>()

/** Logs, once per secret and process, that a workspace's signing secret cannot be decrypted. */
function reportUndecryptable(deps: AppDeps, e: UndecryptableSecret): void {
  if (reportedUndecryptable.has(e.secretId)) return
  if (reportedUndecryptable.size > 10_000) reportedUndecryptable.clear()
  reportedUndecryptable.add(e.secretId)
  deps.log.error('webhook signing secret cannot be decrypted: SVC_SECRET_KEY (or SVC_SECRET_KEY_PREVIOUS) is not the key it was sealed with (a key rolled back after a rotation?); its webhook deliveries are dead-lettered as refused_no_signing_secret until the key is restored or the workspace rotates its secret', {
    tenant_id: e.tenantId, secret_id: e.secretId, error: String((e.cause as Error)?.message ?? e.cause),
  })
}

/** Makes one attempt of the delivery a job names; never throws for a peer's failure. */
async function attemptOnce(job: DeliveryJobOf, deps: AppDeps, opts: DeliveryKindOptions): Promise<AttemptOutcome> {
  const { deliveryId, cycle } = job.payload
  // Read at claim time with the rest of the batch (a claimed delivery does not change meanwhile), or now.
  const d = (job.loaded as LoadedDelivery | undefined) ?? (await readDeliveries(deps.sql, [{ tenantId: job.tenantId, deliveryId }]))[0]
  job.loaded = d
  if (!d || d.status !== 'pending' || (cycle !== undefined && d.cycle !== cycle)) return { kind: 'skip' }
  const at = new Date()
  const started = performance.now()
  const took = () => Math.round(performance.now() - started)

  if (d.channel === 'email') {
    // The workspace's zone as it stands at sending (the email shows times in it; the envelope keeps UTC).
    const error = await sendEmail(deps.mailer, d.email_address!, JSON.parse(d.body) as EnvelopeView, await workspaceTimeZone(deps.sql, d.tenant_id))
    return { kind: 'sent', ok: error === undefined, ...(error ? { error } : {}), at, durationMs: took(), secretId: null }
  }

  let url: URL
  try { url = new URL(d.webhook_url!) } catch { return { kind: 'refused', reason: 'refused_http_url', at, durationMs: took() } }
  if (url.protocol !== 'https:') return { kind: 'refused', reason: 'refused_http_url', at, durationMs: took() }
  let secret
  try {
    secret = openUsableSecret([deps.secretKey, ...deps.previousSecretKeys], d.tenant_id, d)
  } catch (e) {
    if (!(e instanceof UndecryptableSecret)) throw e
    // Not usable: the spec's no-signing-secret refusal (dead-lettered at once), and the key problem
    // named once per secret in this process's log rather than on every delivery.
    reportUndecryptable(deps, e)
    secret = null
  }
  if (!secret) return { kind: 'refused', reason: 'refused_no_signing_secret', at, durationMs: took() }
  let checked = await checkTarget(url.hostname, allowListOf(deps.config.webhookUnsafeAllowAddresses))
  let extraCa = caFor(deps.config.webhookCaFile)
  if (!checked.ok && checked.refused) {
    // The one exemption a command arranges: a live `svc listen` of this workspace at exactly this URL.
    const listener = await liveListenerFor(deps.sql, d.tenant_id, d.webhook_url!)
    if (!listener) return { kind: 'refused', reason: 'refused_private_address', at, durationMs: took() }
    deps.log.warn('webhook to a development listener (svc listen): loopback allowed for this URL only', { tenant_id: d.tenant_id, delivery_id: d.id, listener_id: listener.id, origin: url.origin })
    checked = { ok: true, target: { address: bareHost(url.hostname), family: url.hostname.startsWith('[') ? 6 : 4 } }
    extraCa = listenerCa(listener.certificatePem)
  }
  if (!checked.ok) return { kind: 'sent', ok: false, error: checked.error, at, durationMs: took(), secretId: secret.id }
  opts.beforeConnect?.(checked.target, url)
  const result = await postWebhook(url, checked.target, d.body, {
    'svc-signature': signatureHeader(secret.secret, d.body),
    'svc-delivery-id': d.id,
    'svc-event-type': d.event_type,
    // The trace of the request that ended the task, a span of this attempt's own.
    traceparent: outgoingTraceparent(d.traceparent),
  }, { connectTimeoutMs: opts.connectTimeoutMs, totalTimeoutMs: opts.totalTimeoutMs, extraCa, userAgent: `underwriting-case-service/${pkg.version} (webhooks)` })
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300
  return {
    kind: 'sent', ok,
    ...(result.status !== undefined ? { status: result.status } : {}),
    ...(result.error ? { error: result.error } : {}),
    at, durationMs: result.durationMs, secretId: secret.id,
  }
}

/**
 * Records one attempt's outcome on the delivery, in the job's transaction. A delivered or refused
 * outcome is one statement (update the pending delivery of this cycle, insert the history row from
 * it); a failure also decides between the next attempt and the dead letter.
 */
async function record(tx: Tx, job: DeliveryJobOf, deps: AppDeps, outcome: AttemptOutcome): Promise<boolean> {
  if (outcome.kind === 'skip') return false
  const { deliveryId, cycle } = job.payload
  const tenantId = job.tenantId
  const attemptId = Bun.randomUUIDv7()
  const ofThisCycle = cycle !== undefined ? tx`and cycle = ${cycle}` : tx``
  const history = (d: string, counted: boolean, status: number | null, error: string | null) => tx`
    insert into notification_delivery_attempts (tenant_id, delivery_id, id, cycle, counted, attempted_at, duration_ms, response_status, error)
    select tenant_id, id, ${attemptId}, cycle, ${counted}, ${outcome.at}, ${outcome.durationMs}, ${status}, ${error} from ${tx(d)}`

  if (outcome.kind === 'refused') {
    await tx`
      with d as (
        update notification_deliveries
        set status = 'dead_lettered', dead_lettered_at = now(), dead_letter_reason = ${outcome.reason}, next_attempt_at = null,
            last_attempt_at = ${outcome.at}, updated_at = now()
        where tenant_id = ${tenantId} and id = ${deliveryId} and status = 'pending' ${ofThisCycle}
        returning tenant_id, id, cycle)
      ${history('d', false, null, outcome.reason)}`
    return false
  }
  if (outcome.ok) {
    await tx`
      with d as (
        update notification_deliveries
        set status = 'delivered', attempts = attempts + 1, cycle_attempts = cycle_attempts + 1, delivered_at = now(), next_attempt_at = null,
            pinned_secret_id = coalesce(pinned_secret_id, ${outcome.secretId}::uuid), last_attempt_at = ${outcome.at}, updated_at = now()
        where tenant_id = ${tenantId} and id = ${deliveryId} and status = 'pending' ${ofThisCycle}
        returning tenant_id, id, cycle)
      ${history('d', true, outcome.status ?? null, null)}`
    return false
  }

  const [d] = await tx<{ cycle: number; cycle_attempts: number }[]>`
    select cycle, cycle_attempts from notification_deliveries
    where tenant_id = ${tenantId} and id = ${deliveryId} and status = 'pending' ${ofThisCycle} for update`
  if (!d) return false
  const used = d.cycle_attempts + 1
  const exhausted = used >= DELIVERY_MAX_ATTEMPTS
  const next = exhausted ? null : new Date(Date.now() + deliveryBackoffMs(used, deps.config.webhookRetryInitialMs))
  await tx`
    with d as (
      update notification_deliveries
      set attempts = attempts + 1, cycle_attempts = ${used}, next_attempt_at = ${next},
          ${exhausted ? tx`status = 'dead_lettered', dead_lettered_at = now(), dead_letter_reason = 'attempts_exhausted',` : tx``}
          pinned_secret_id = coalesce(pinned_secret_id, ${outcome.secretId}::uuid), last_attempt_at = ${outcome.at}, updated_at = now()
      where tenant_id = ${tenantId} and id = ${deliveryId}
      returning tenant_id, id, cycle)
    ${history('d', true, outcome.status ?? null, outcome.error ?? null)}`
  if (next) await enqueue(tx, DeliveryJob, { tenantId, payload: { deliveryId, cycle: d.cycle }, runAt: next })
  if (outcome.kind === 'sent') outcome.attempt = used
  return exhausted
}

/**
 * The fast finish of the common outcomes (delivered, refused) of one job: deleting the job,
 * updating the delivery of this cycle and adding its history row in one statement (the path of a
 * job whose batch, recordTogether, failed). A failure (which may enqueue the next attempt) takes
 * the transactional path of `record`.
 */
async function recordInOneStatement(sql: Sql, job: DeliveryJobOf, outcome: AttemptOutcome, done: postgres.PendingQuery<postgres.Row[]>): Promise<'finished' | 'lost' | 'fallback'> {
  if (outcome.kind === 'sent' && !outcome.ok) return 'fallback'
  const { deliveryId, cycle } = job.payload
  const ofThisCycle = cycle !== undefined ? sql`and cycle = ${cycle}` : sql``
  const update = outcome.kind === 'skip'
    ? sql`select tenant_id, id, cycle from notification_deliveries where false`
    : outcome.kind === 'refused'
      ? sql`
        update notification_deliveries
        set status = 'dead_lettered', dead_lettered_at = now(), dead_letter_reason = ${outcome.reason}, next_attempt_at = null,
            last_attempt_at = ${outcome.at}, updated_at = now()
        where tenant_id = ${job.tenantId} and id = ${deliveryId} and status = 'pending' ${ofThisCycle} and exists (select 1 from done)
        returning tenant_id, id, cycle`
      : sql`
        update notification_deliveries
        set status = 'delivered', attempts = attempts + 1, cycle_attempts = cycle_attempts + 1, delivered_at = now(), next_attempt_at = null,
            pinned_secret_id = coalesce(pinned_secret_id, ${outcome.secretId}::uuid), last_attempt_at = ${outcome.at}, updated_at = now()
        where tenant_id = ${job.tenantId} and id = ${deliveryId} and status = 'pending' ${ofThisCycle} and exists (select 1 from done)
        returning tenant_id, id, cycle`
  const counted = outcome.kind === 'sent'
  const [row] = await sql<{ owned: number }[]>`
    with done as (${done}),
    d as (${update}),
    history as (
      insert into notification_delivery_attempts (tenant_id, delivery_id, id, cycle, counted, attempted_at, duration_ms, response_status, error)
      select tenant_id, id, ${Bun.randomUUIDv7()}, cycle, ${counted}, ${outcome.kind === 'skip' ? null : outcome.at}, ${outcome.kind === 'skip' ? 0 : outcome.durationMs},
             ${outcome.kind === 'sent' ? outcome.status ?? null : null}, ${outcome.kind === 'refused' ? outcome.reason : null}
      from d
      returning 1)
    select (select count(*) from done)::int as owned`
  return row!.owned > 0 ? 'finished' : 'lost'
}

/** Whether an outcome finishes with the others of its tick (delivered, refused, skipped); a failure takes `record`. */
const finishesTogether = (outcome: AttemptOutcome | undefined) => outcome !== undefined && !(outcome.kind === 'sent' && !outcome.ok)

/**
 * The batched finish of the common outcomes (delivered, refused, skipped) of the jobs that ended in
 * one tick: ONE statement deletes the jobs this worker still holds (`done`), updates their pending
 * deliveries of this cycle and adds one history row per attempt, each write joined to its job's row
 * in `done`; one commit for the batch instead of one per delivery. A job another worker took over
 * writes nothing; a crash before the commit leaves every job of the batch claimed, to run again.
 * Returns the ids of the jobs finished.
 */
export async function recordTogether(sql: Sql, jobs: DeliveryJobOf<AttemptOutcome>[], done: postgres.PendingQuery<postgres.Row[]>): Promise<ReadonlySet<string>> {
  const sent = jobs.filter((j) => j.prepared.kind !== 'skip')
  const col = <T>(f: (j: DeliveryJobOf<AttemptOutcome>, o: Exclude<AttemptOutcome, { kind: 'skip' }>) => T) =>
    sent.map((j) => f(j, j.prepared as Exclude<AttemptOutcome, { kind: 'skip' }>))
  const rows = await sql<{ id: string }[]>`
    with o as (
      select * from unnest(
        ${col((j) => j.id)}::uuid[], ${col((j) => j.tenantId)}::uuid[], ${col((j) => j.payload.deliveryId)}::uuid[],
        ${col((j) => j.payload.cycle ?? null)}::int[], ${col((_, o) => (o.kind === 'refused' ? o.reason : null))}::text[],
        ${col((_, o) => (o.kind === 'sent' ? o.secretId : null))}::uuid[], ${col((_, o) => o.at.toISOString())}::timestamptz[],
        ${col((_, o) => o.durationMs)}::int[], ${col((_, o) => (o.kind === 'sent' ? o.status ?? null : null))}::int[],
        ${col(() => Bun.randomUUIDv7())}::uuid[]
      ) as o(job_id, tenant_id, delivery_id, cycle, refusal, secret_id, at, duration_ms, response_status, attempt_id)),
    done as (${done}),
    d as (
      update notification_deliveries nd
      set status = case when o.refusal is null then 'delivered' else 'dead_lettered' end,
          attempts = nd.attempts + (o.refusal is null)::int, cycle_attempts = nd.cycle_attempts + (o.refusal is null)::int,
          delivered_at = case when o.refusal is null then now() else nd.delivered_at end,
          dead_lettered_at = case when o.refusal is null then nd.dead_lettered_at else now() end,
          dead_letter_reason = coalesce(o.refusal, nd.dead_letter_reason), next_attempt_at = null,
          pinned_secret_id = case when o.refusal is null then coalesce(nd.pinned_secret_id, o.secret_id) else nd.pinned_secret_id end,
          last_attempt_at = o.at, updated_at = now()
      from o join done on done.id = o.job_id
      where nd.tenant_id = o.tenant_id and nd.id = o.delivery_id and nd.status = 'pending' and (o.cycle is null or nd.cycle = o.cycle)
      returning nd.tenant_id, nd.id, nd.cycle, o.attempt_id, o.refusal, o.at, o.duration_ms, o.response_status),
    history as (
      insert into notification_delivery_attempts (tenant_id, delivery_id, id, cycle, counted, attempted_at, duration_ms, response_status, error)
      select tenant_id, id, attempt_id, cycle, refusal is null, at, duration_ms, response_status, refusal from d
      returning 1)
    select id from done`
  return new Set(rows.map((r) => r.id))
}

/**
 * The delivery job kind. A run that fails for an internal reason (not the peer's) is retried as a
 * job; after 10 such runs the delivery is dead-lettered with reason internal_error.
 */
export function deliveryJobKind(opts: DeliveryKindOptions = {}) {
  return defineJobKind({
    ...DeliveryJob,
    maxAttempts: 10,
    async load(sql, jobs) {
      const rows = await readDeliveries(sql, jobs.map((j) => ({ tenantId: j.tenantId, deliveryId: j.payload.deliveryId })))
      const byId = new Map(rows.map((r) => [r.id, r]))
      for (const j of jobs) j.loaded = byId.get(j.payload.deliveryId)
    },
    prepare: (job, deps) => attempt(job, deps, opts),
    finishTogether: {
      accepts: (job) => finishesTogether(job.prepared),
      async run(sql, jobs, deps, done) {
        const finished = await recordTogether(sql, jobs, done)
        for (const job of jobs) if (finished.has(job.id)) observe(deps, job, job.prepared)
        return finished
      },
    },
    async finishInOneStatement(sql, job, deps, done) {
      const result = await recordInOneStatement(sql, job, job.prepared, done)
      if (result === 'finished') observe(deps, job, job.prepared)
      return result
    },
    async handler(tx, job, deps) {
      const outcome = job.prepared
      const deadLettered = await record(tx, job, deps, outcome)
      // Counted inside the job's transaction: one that then fails to commit is retried and counted
      // again (the metric counts attempts made, like the send itself, which happened either way).
      observe(deps, job, outcome, deadLettered)
    },
    async onGiveUp(tx, job) {
      await tx`
        update notification_deliveries
        set status = 'dead_lettered', dead_lettered_at = now(), dead_letter_reason = 'internal_error', next_attempt_at = null, updated_at = now()
        where tenant_id = ${job.tenantId} and id = ${job.payload.deliveryId} and status = 'pending'`
    },
  })
}
