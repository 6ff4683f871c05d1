/**
 * The delivery batch read keeps probing by primary key however its prepared statement was planned,
 * and so does the delete that finishes a worker's jobs. (Every lookup of a row by its key, the
 * attempt's foreign-key check included, is held the same way by key-plans.test.ts.)
 * A generic plan is made once per connection, often while the tables are still small; a plain join
 * of the batch keys was then planned as a hash join over a sequential scan of every delivery and
 * kept as the table grew (the delivery benchmark fell from ~400 to ~200 deliveries/s in a minute).
 * PostgreSQL only: the counters read here are PostgreSQL's statistics views.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { postgresClient, type Sql } from '../../server/db/connect'
import { createSubscription } from '../../server/notifications/subscriptions'
import { rotateSecret } from '../../server/notifications/signing-secret'
import { finishTask } from '../../server/notifications/finish'
import { deliveryJobKind } from '../../jobs/deliver'
import type { ClaimedJob } from '../../jobs/types'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
import { createTestDatabase } from '../helpers/database'
import { deleteHeldJobs } from '../../jobs/claim'
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): the batch read of deliveries never scans: it reads PostgreSQL statistics views')

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let client: Sql | undefined

beforeAll(async () => {
  app = await startApp({ runner: false })
  // One session that plans every statement generically, as a long-lived pool connection ends up doing.
  if (app.config.databaseUrl) client = postgresClient(app.config.databaseUrl, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: 'force_generic_plan' } })
})
afterAll(async () => {
  await client?.end()
  await app?.stop()
})

/**
 * Runs one batch read in a transaction of `sql` and reads this session's own scan counts of the
 * delivery tables (pg_stat_xact_user_tables: this session only, so the app's writes do not count).
 */
async function scansOfOneRead(sql: Sql, jobs: ClaimedJob[], deps: TestApp['deps']) {
  return sql.begin(async (tx) => {
    await deliveryJobKind().load!(tx as unknown as Sql, jobs, deps)
    const rows = await tx<{ relname: string; seq_scan: string; idx_scan: string }[]>`
      select relname, seq_scan, idx_scan from pg_stat_xact_user_tables
      where relname in ('notification_deliveries', 'task_notification_subscriptions') order by relname`
    return rows.map((r) => ({ table: r.relname, seq: Number(r.seq_scan), idx: Number(r.idx_scan) }))
  })
}

test.skipIf(!process.env.DATABASE_URL)(skipTitle('the batch read of deliveries never scans the delivery tables, even planned while they were tiny', NEEDS_POSTGRES && 'needs PostgreSQL (DATABASE_URL): it reads the statistics views'), async () => {
  const tenant = await app.tenant()
  await app.sql.begin((tx) => rotateSecret(tx, app.deps.secretKey, tenant.id))
  const finishOne = async () => {
    const taskId = crypto.randomUUID()
    return app.sql.begin(async (tx) => {
      await createSubscription(tx, tenant.id, { taskKind: 'evaluation_run', taskId, channel: 'webhook', webhook: { url: 'https://hooks.example.com/svc' } })
      await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'evaluation_run', taskId, resourcePath: `/v1/scenarios/s/evaluations/${taskId}`, result: 'succeeded' })
    })
  }
  for (let i = 0; i < 3; i++) await finishOne()
  const jobs = await app.sql<{ id: string; tenant_id: string; payload: { deliveryId: string } }[]>`select id, tenant_id, payload from jobs where kind = 'deliver_notification'`
  expect(jobs.length).toBe(3)
  const claimed = (): ClaimedJob[] => jobs.map((j) => ({ id: j.id, kind: 'deliver_notification', tenantId: j.tenant_id, payload: j.payload, attempts: 1 }))
  // Planned now, while both tables hold three rows...
  for (let i = 0; i < 3; i++) {
    const batch = claimed()
    const scans = await scansOfOneRead(client!, batch, app.deps)
    for (const job of batch) expect((job.loaded as { webhook_url: string }).webhook_url).toBe('https://hooks.example.com/svc')
    expect(scans.map((s) => s.seq)).toEqual([0, 0])
  }
  // ...and still probing by key once they have grown under the cached plan.
  for (let i = 0; i < 200; i++) await finishOne()
  const batch = claimed()
  const scans = await scansOfOneRead(client!, batch, app.deps)
  expect(batch.every((j) => j.loaded !== undefined)).toBe(true)
  expect(scans.map((s) => [s.table, s.seq])).toEqual([['notification_deliveries', 0], ['task_notification_subscriptions', 0]])
  // (the session's not yet flushed counts of the earlier reads are included: at least this read's 3 each)
  expect(scans.every((s) => s.idx >= 3)).toBe(true)
})


test.skipIf(!process.env.DATABASE_URL)(skipTitle('the delete finishing a worker\'s jobs finds them by key even when planned on a nearly empty queue', NEEDS_POSTGRES && 'needs PostgreSQL (DATABASE_URL): it reads the statistics views'), async () => {
  // As a prepared statement its generic plan, made while `jobs` held a few rows, was a sequential
  // scan and stayed one as the table filled with dead rows (sql/033).
  const db = await createTestDatabase('migrated')
  const session = postgresClient(db.url!, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: 'force_generic_plan' } })
  try {
    const worker = 'plans-test'
    const hold = async (tx: Sql, by: string, n: number) => (await tx<{ id: string }[]>`
      insert into jobs (id, kind, payload, locked_by, locked_until)
      select gen_random_uuid(), 'plans_probe', '{}'::jsonb, ${by}, now() + interval '1 minute' from generate_series(1, ${n})
      returning id`).map((r) => r.id)
    const scans = await session.begin(async (t) => {
      const tx = t as unknown as Sql
      // Planned while the queue holds a few jobs (another worker's; the calls find none of them),
      // the state in which the prepared statement's generic plan was a sequential scan...
      const others = await hold(tx, 'another-worker', 20)
      for (let i = 0; i < 6; i++) expect(await deleteHeldJobs(tx, worker, [crypto.randomUUID(), others[i]!])).toHaveLength(0)
      // ...then used on a batch of this worker's.
      const ids = await hold(tx, worker, 5)
      const done = await deleteHeldJobs(tx, worker, ids)
      expect(done.map((r) => r.id).sort()).toEqual([...ids].sort())
      const [row] = await tx<{ seq_scan: string; idx_scan: string }[]>`select seq_scan, idx_scan from pg_stat_xact_user_tables where relname = 'jobs'`
      return { seq: Number(row!.seq_scan), idx: Number(row!.idx_scan) }
    })
    expect(scans.seq).toBe(0)
    expect(scans.idx).toBeGreaterThanOrEqual(7)
  } finally {
    await session.end()
    await db.drop()
  }
})
