/**
 * Webhook delivery throughput: deliveries per second from finished tasks to a local HTTPS receiver
 * through the whole path (outbox row, job claim, SSRF check, signing, POST, attempt record), as a
 * ratio to a bare loop that signs and POSTs the same bodies with the same concurrency and the same
 * HTTPS client, measured in the same run. Target (issue 30): 0.8 or more.
 *
 * A third side, the database-bound baseline (as api.bench's bare server runs the service's own SQL):
 * a hand-written loop that claims, reads and finishes the same delivery jobs with the service's own
 * statements (jobs/claim.ts, readDeliveries, recordTogether) around the same sign-and-POST, with
 * none of the runner around them (no engine, trace context, metrics or log line). Its ratio says what
 * the service's own machinery costs; the bare loop's ratio says what the database work costs too.
 *
 *   bun tests/bench/deliveries.bench.ts                       (embedded database)
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/deliveries.bench.ts
 *   BENCH_DELIVERIES=400 BENCH_ROUNDS=5 BENCH_CONCURRENCY=8 (the defaults)
 *   BENCH_VACUUM=0: no vacuum between rounds (see settleTables), to watch the tables age
 *   BENCH_RECEIVER_DELAY_MS=20: the receiver holds each answer that long, as a peer across a network
 *     does (default 0: answered at once, so every side is bound by the CPU of these cores, which the
 *     database, the worker and the receiver share; with a delay the bare loop is paced by the
 *     network, and the ratio says whether the service keeps that pace)
 */
import { readdirSync, readFileSync } from 'node:fs'
import { startApp } from '../helpers/app'
import { createSubscription } from '../../server/notifications/subscriptions'
import { rotateSecret } from '../../server/notifications/signing-secret'
import { finishTask } from '../../server/notifications/finish'
import { startRunner } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'
import { postWebhook } from '../../jobs/webhook-sender'
import { signatureHeader } from '../../jobs/signing'
import { renderEnvelope } from '../../server/notifications/envelope'
import { median } from './load'
import { DELIVERY_JOB_KIND } from '../../server/notifications/outbox'
import { claimDueJobs, deleteHeldJobs } from '../../jobs/claim'
import { readDeliveries, recordTogether, type AttemptOutcome, type DeliveryJobOf, type LoadedDelivery } from '../../jobs/deliver'

const total = Number(process.env.BENCH_DELIVERIES ?? 400)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'
const receiverDelayMs = Number(process.env.BENCH_RECEIVER_DELAY_MS ?? 0)

// The receiver runs in its own process, like a real peer.
const sink = Bun.spawn(['bun', 'tests/bench/https-sink.ts'], { stdout: 'pipe', stderr: 'inherit', env: { ...process.env, SINK_DELAY_MS: String(receiverDelayMs) } })
const firstLine = new TextDecoder().decode((await sink.stdout.getReader().read()).value).trim()
const [sinkPort, caFile] = firstLine.split(' ') as [string, string]
const receiver = { host: '127.0.0.2', url: (path: string) => `https://127.0.0.2:${sinkPort}${path}` }
const app = await startApp({
  runner: false,
  env: { SVC_WEBHOOK_CA_FILE: caFile, SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: receiver.host, SVC_JOB_CONCURRENCY: String(concurrency) },
})
const tenant = await app.tenant()
const { secret } = await app.sql.begin((tx) => rotateSecret(tx, app.deps.secretKey, tenant.id))
const ca = [await Bun.file(caFile).text()]

/** The bare loop: `concurrency` workers each signing and POSTing bodies until `bodies` is drained. */
async function bareLoop(bodies: string[]): Promise<number> {
  const queue = [...bodies]
  const url = new URL(receiver.url('/bare'))
  const before = otherCpu()
  const started = performance.now()
  const cpu0 = process.cpuUsage()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let body = queue.pop(); body !== undefined; body = queue.pop()) {
      const r = await postWebhook(url, { address: receiver.host, family: 4 }, body, { 'svc-signature': signatureHeader(secret, body), 'svc-delivery-id': 'bare', 'svc-event-type': 'task.completed' }, { extraCa: ca })
      if (r.status !== 204) throw new Error(`bare POST failed: ${JSON.stringify(r)}`)
    }
  }))
  const elapsed = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  cpuPerBare.push((cpu.user + cpu.system) / bodies.length)
  recordOthers('bare', before, bodies.length)
  return bodies.length / elapsed
}

/**
 * CPU seconds used so far by the local PostgreSQL server's processes and by the receiver, from one
 * pass over /proc (Linux, PostgreSQL on this machine; NaN elsewhere): what the two sides of the
 * ratio cost beyond this process, on the same cores. Read outside the timed windows.
 */
function otherCpu(): { postgres: number; receiver: number } {
  const ticks = { postgres: 0, receiver: 0 }
  try {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
        const which = Number(name) === sink.pid ? 'receiver' : comm === 'postgres' ? 'postgres' : undefined
        if (!which) continue
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        ticks[which] += Number(fields[11]) + Number(fields[12])
      } catch { /* the process ended meanwhile */ }
    }
  } catch { return { postgres: Number.NaN, receiver: Number.NaN } }
  return { postgres: ticks.postgres / 100, receiver: ticks.receiver / 100 }
}
/** Pushes PostgreSQL's and the receiver's CPU per unit since `before` onto one side's figures, us. */
const recordOthers = (side: 'bare' | 'bareDb' | 'service', before: { postgres: number; receiver: number }, units: number) => {
  const now = otherCpu()
  others.postgres[side].push((now.postgres - before.postgres) * 1e6 / units)
  others.receiver[side].push((now.receiver - before.receiver) * 1e6 / units)
}
/** PostgreSQL's and the receiver's CPU per delivery, us, for each side of each measured round. */
const others = { postgres: { bare: [] as number[], bareDb: [] as number[], service: [] as number[] }, receiver: { bare: [] as number[], bareDb: [] as number[], service: [] as number[] } }

/** Worker CPU (this process: the runner, its database client and the HTTPS client) per delivery, us. */
const cpuPerDelivery: number[] = []
/** The bare loop's CPU per POST, us (signing and the HTTPS client alone). */
const cpuPerBare: number[] = []
/** The database-bound baseline's CPU per delivery, us (its statements, signing and the HTTPS client). */
const cpuPerBareDb: number[] = []

/**
 * Deliveries recorded so far, counted in this process where the runner reports each one: the
 * delivery kind calls `metrics.delivery` once a delivery's finish has committed (never for a
 * finish that failed or a job another worker took over), so the count is the committed work. The
 * end of a round is seen here without a query: a poll of the database every few milliseconds was
 * CPU on both the worker and PostgreSQL that only the service side of the ratio paid for.
 */
let recorded = 0
let waiter: { target: number; resolve: () => void } | undefined
const countDelivery = app.deps.metrics.delivery.bind(app.deps.metrics)
app.deps.metrics.delivery = (channel, outcome, attempt) => {
  countDelivery(channel, outcome, attempt)
  recorded++
  if (waiter && recorded >= waiter.target) { waiter.resolve(); waiter = undefined }
}
/** The runner's claims (`metrics.jobClaim`): how many brought jobs and how many found none. */
const claims = { jobs: 0, empty: 0 }
const countClaim = app.deps.metrics.jobClaim.bind(app.deps.metrics)
app.deps.metrics.jobClaim = (result) => { claims[result]++; countClaim(result) }

/** Resolves once `target` deliveries have been recorded in all. */
const recordedReach = (target: number) => recorded >= target ? Promise.resolve() : new Promise<void>((resolve) => { waiter = { target, resolve } })

/**
 * The service path: `n` finished tasks with one subscription each, committed in one transaction
 * and delivered by the job runner that is already running (woken by the commit's NOTIFY), as a
 * service's worker is. Timed from the commit to the last delivery's recorded finish (see
 * `recorded`); afterwards, untimed, the database is checked: no delivery job left, every delivery
 * delivered.
 */
async function servicePath(n: number): Promise<number> {
  let started = 0
  let cpu0 = process.cpuUsage()
  let before = { postgres: 0, receiver: 0 }
  const target = recorded + n
  await settleTables()
  await finishTasks(n, () => {
    before = otherCpu()
    started = performance.now()
    cpu0 = process.cpuUsage()
  })
  await recordedReach(target)
  const elapsed = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  cpuPerDelivery.push((cpu.user + cpu.system) / n)
  recordOthers('service', before, n)
  await checkAllDelivered()
  return n / elapsed
}

/**
 * The outbox phase of a round, untimed: `n` finished tasks with one webhook subscription each, in
 * one transaction; `beforeCommit` runs last inside it (the service side starts its clock there).
 */
async function finishTasks(n: number, beforeCommit: () => void = () => {}): Promise<void> {
  await app.sql.begin(async (tx) => {
    for (let i = 0; i < n; i++) {
      const taskId = crypto.randomUUID()
      await createSubscription(tx, tenant.id, { taskKind: 'evaluation_run', taskId, channel: 'webhook', webhook: { url: receiver.url('/svc') } })
      await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'evaluation_run', taskId, resourcePath: `/v1/scenarios/s/evaluations/${taskId}`, result: 'succeeded' })
    }
    beforeCommit()
  })
}

/**
 * Vacuums and analyzes the tables a round writes, untimed, before each side's round: what
 * autovacuum does between bursts in a deployment (this machine's PostgreSQL runs with autovacuum
 * off, its CI configuration), so every round starts from the same state. Before migrations 032
 * and 033, without it, both database sides lost three quarters of their rate over ten rounds to
 * two generic plans made on near-empty tables (docs/operations.md, the job queue); now
 * `BENCH_VACUUM=0` shows the rate holding without it.
 */
async function settleTables(): Promise<void> {
  if (process.env.BENCH_VACUUM === '0') return
  for (const table of ['jobs', 'notification_deliveries', 'notification_delivery_attempts', 'task_notification_subscriptions', 'task_outcomes']) {
    await app.sql.unsafe(`vacuum (analyze) ${table}`)
  }
}

/** Untimed, after a round: no delivery job left, every delivery delivered. */
async function checkAllDelivered(): Promise<void> {
  const [left] = await app.sql`select count(*)::int as n from jobs where kind = ${DELIVERY_JOB_KIND}`
  if (left!.n !== 0) throw new Error(`${left!.n} delivery jobs left after every delivery was recorded`)
  const [failed] = await app.sql`select count(*)::int as n from notification_deliveries where status <> 'delivered'`
  if (failed!.n !== 0) throw new Error(`${failed!.n} deliveries not delivered`)
}

/**
 * The database-bound baseline: `n` deliveries enqueued as the service path's are (untimed, the
 * runner stopped so that it leaves them alone), then delivered by a hand-written loop running the
 * service's own statements: claims of up to twice the concurrency kept one ahead of the senders
 * (jobs/claim.ts, then readDeliveries for the claim), `concurrency` senders signing and POSTing
 * with the same client as the bare loop, and the outcomes that end while a finish runs recorded
 * by the next one (recordTogether joined to deleteHeldJobs: one statement at a time). Timed from
 * the first claim to the last finish's commit.
 */
async function bareDbLoop(n: number): Promise<number> {
  await runner.stop()
  await finishTasks(n)
  await settleTables()
  const { sql } = app.deps
  const workerId = `bench-bare:${crypto.randomUUID().slice(0, 8)}`
  const queue: DeliveryJobOf<AttemptOutcome>[] = []
  let claiming: Promise<void> | undefined
  let claimedAll = false
  /** One claim with its batch read, at a time; the senders start it when the queue runs low. */
  const claim = () => claiming ??= (async () => {
    const rows = await claimDueJobs(sql, workerId, 60_000, 2 * concurrency)
    if (rows.length === 0) claimedAll = true
    const loaded = await readDeliveries(sql, rows.map((r) => ({ tenantId: r.tenant_id!, deliveryId: r.payload.deliveryId })))
    const byId = new Map(loaded.map((d) => [d.id, d]))
    for (const r of rows) queue.push({ id: r.id, kind: r.kind, tenantId: r.tenant_id, payload: r.payload, attempts: r.attempts, loaded: byId.get(r.payload.deliveryId) } as DeliveryJobOf<AttemptOutcome>)
  })().finally(() => { claiming = undefined })
  const ended: DeliveryJobOf<AttemptOutcome>[] = []
  let finishing: Promise<void> | undefined
  let finished = 0
  /** Records every ended outcome, one recordTogether at a time (those ending meanwhile go in the next). */
  const finish = () => finishing ??= (async () => {
    while (ended.length > 0) {
      const batch = ended.splice(0)
      const done = await recordTogether(sql, batch, deleteHeldJobs(sql, workerId, batch.map((j) => j.id)))
      finished += done.size
    }
  })().finally(() => { finishing = undefined })

  const before = otherCpu()
  const started = performance.now()
  const cpu0 = process.cpuUsage()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (;;) {
      if (queue.length < concurrency && !claimedAll) void claim()
      while (queue.length === 0 && !claimedAll) await claim()
      const job = queue.shift()
      if (!job) return
      const d = job.loaded as LoadedDelivery
      const at = new Date()
      const r = await postWebhook(new URL(d.webhook_url!), { address: receiver.host, family: 4 }, d.body, { 'svc-signature': signatureHeader(secret, d.body), 'svc-delivery-id': d.id, 'svc-event-type': d.event_type }, { extraCa: ca })
      if (r.status !== 204) throw new Error(`database-bound POST failed: ${JSON.stringify(r)}`)
      job.prepared = { kind: 'sent', ok: true, status: r.status, at, durationMs: r.durationMs, secretId: d.secret_id }
      ended.push(job)
      void finish()
    }
  }))
  // An outcome pushed just as a finish's loop ended (before its promise cleared) waits for the next one.
  while (finishing || ended.length > 0) await (finishing ?? finish())
  const elapsed = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  cpuPerBareDb.push((cpu.user + cpu.system) / n)
  recordOthers('bareDb', before, n)
  if (finished !== n) throw new Error(`database-bound baseline finished ${finished} of ${n} deliveries`)
  await checkAllDelivered()
  runner = startRunner(app.deps, JOB_KINDS, { concurrency, log: () => {} })
  return n / elapsed
}

const sample = renderEnvelope({
  deliveryId: crypto.randomUUID(), eventType: 'task.completed', taskKind: 'evaluation_run', taskId: crypto.randomUUID(), tenantId: tenant.id,
  occurredAt: new Date(), outcome: { status: 'succeeded', summary: 'evaluation completed, review answers and decision', errorCode: null },
  links: { resource: `${app.deps.config.baseUrl}/v1/scenarios/s/evaluations/e`, ui: '' },
})
const bodies = Array.from({ length: total }, () => sample.replace(/"delivery_id":"[^"]+"/, `"delivery_id":"${crypto.randomUUID()}"`))

console.log(`deliveries.bench: ${total} deliveries per round, ${rounds} alternating rounds, concurrency ${concurrency}, ${database}, receiver answers ${receiverDelayMs > 0 ? `after ${receiverDelayMs} ms` : 'at once'}`)
// One runner for the whole run, started (its kinds armed, its LISTEN open) before anything is timed.
let runner = startRunner(app.deps, JOB_KINDS, { concurrency, log: () => {} })
await bareLoop(bodies.slice(0, Math.min(100, total))) // warm-up
await bareDbLoop(Math.min(100, total))
await servicePath(Math.min(100, total))
// The machine may be shared: alternate the two measurements, so a slow spell lands on both sides
// of a round's ratio, and quote the median ratio of the rounds, printing every round.
const ratios: number[] = []
const dbRatios: number[] = []
for (let round = 1; round <= rounds; round++) {
  const bare = await bareLoop(bodies)
  const bareDb = await bareDbLoop(total)
  const service = await servicePath(total)
  ratios.push(service / bare)
  dbRatios.push(service / bareDb)
  console.log(`round ${round}: bare sign+POST loop ${bare.toFixed(0)}/s, database-bound loop ${bareDb.toFixed(0)}/s, service (outbox+runner) ${service.toFixed(0)}/s, ratio ${(service / bare).toFixed(2)} (of the database-bound loop ${(service / bareDb).toFixed(2)})`)
}
const list = (xs: number[]) => xs.map((r) => r.toFixed(2)).join(' ')
console.log(`ratio ${median(ratios).toFixed(2)} median of [${list(ratios)}] (target >= 0.8)`)
console.log(`ratio to the database-bound loop (the service's own SQL, no runner) ${median(dbRatios).toFixed(2)} median of [${list(dbRatios)}]`)
const mid = (xs: number[]) => median(xs.slice(1)).toFixed(0)
console.log(`worker CPU per delivery ${mid(cpuPerDelivery)} us (bare sign+POST ${mid(cpuPerBare)} us, database-bound loop ${mid(cpuPerBareDb)} us), medians over the measured rounds`)
console.log(`PostgreSQL CPU per delivery ${mid(others.postgres.service)} us (bare ${mid(others.postgres.bare)} us, database-bound ${mid(others.postgres.bareDb)} us); receiver CPU per delivery ${mid(others.receiver.service)} us (bare ${mid(others.receiver.bare)} us, database-bound ${mid(others.receiver.bareDb)} us), medians over the measured rounds (from /proc; PostgreSQL on this machine)`)
console.log(`runner claims over the whole run: ${claims.jobs + claims.empty} (${claims.empty} empty) for ${recorded} deliveries`)

await runner.stop()
await app.stop()
sink.kill()
