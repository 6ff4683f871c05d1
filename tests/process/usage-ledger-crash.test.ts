/**
 * The usage ledger under kill -9: a burst of evaluations runs in a worker process that is killed
 * with SIGKILL twice while evaluations are mid-flight (some succeeded, some running); a fresh
 * worker finishes the rest after the lease. Afterwards every succeeded evaluation has exactly one
 * `evaluations_succeeded` usage event and nothing else has one: the event is written in the same
 * transaction as the evaluation's end, and a re-run of a job adds nothing. PostgreSQL only (worker
 * processes need it); skipped with a message on the embedded database.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { runJobsUntilIdle } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'
import { spawnWorker, workerEnv, type WorkerProcess } from '../helpers/worker-process'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(180_000)

const postgres = Boolean(process.env.DATABASE_URL)
if (!postgres) console.warn('usage-ledger-crash: skipped on the embedded database (worker processes need PostgreSQL; set DATABASE_URL)')

/** Enough questions that one evaluation takes a while (the built-in engine, no documents). */
const QUESTIONS = Array.from({ length: 120 }, (_, i) => ({ key: `q_${i}`, text: `What is the value number ${i}?`, criticality: 'minor', answer_type: 'text' }))
const BURST = 40

describe.skipIf(!postgres)(skipTitle('usage ledger: kill -9 during a burst of evaluations (PostgreSQL)', NEEDS_POSTGRES), () => {
  let app: TestApp
  let key: string
  let tenantId: string
  const workers: WorkerProcess[] = []

  if (postgres) beforeAll(async () => {
    app = await startApp({ runner: false, env: { SVC_RATE_RUN: '1000/1' } })
    const t = await app.tenant()
    tenantId = t.id
    key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:write'])
  })
  if (postgres) afterAll(async () => {
    for (const w of workers) if (w.proc.exitCode === null && w.proc.signalCode === null) await w.kill('SIGKILL')
    await app?.stop()
  })

  const counts = async () => {
    const rows = await app.sql<{ status: string; n: number }[]>`select status, count(*)::int as n from evaluations where tenant_id = ${tenantId} group by status`
    return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>
  }

  test('each succeeded evaluation has exactly one usage event', async () => {
    const set = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'Crash set' } })
    const version = await call(app.url, 'POST', `/v1/question-sets/${set.body.id}/versions`, { token: key, body: { questions: QUESTIONS } })
    expect((await call(app.url, 'POST', `/v1/question-sets/${set.body.id}/versions/${version.body.id}/publish`, { token: key })).status).toBe(202)
    await runJobsUntilIdle(app.deps, JOB_KINDS)
    const ids: string[] = []
    for (let i = 0; i < BURST; i++) {
      const sc = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `Case ${i}` } })
      const ev = await call(app.url, 'POST', `/v1/scenarios/${sc.body.id}/evaluate`, { token: key, body: { question_set_id: set.body.id } })
      expect(ev.status).toBe(202)
      ids.push(ev.body.id)
    }

    const env = workerEnv(app, { SVC_DATA_DIR: app.config.dataDir, SVC_JOB_LEASE_MS: '1000', SVC_JOB_POLL_MS: '50', SVC_JOB_CONCURRENCY: '4' })
    let midFlight = 0
    for (const threshold of [BURST / 4, BURST / 2]) {
      const worker = await spawnWorker(env)
      workers.push(worker)
      const deadline = Date.now() + 60_000
      while (((await counts()).succeeded ?? 0) < threshold) {
        if (Date.now() > deadline) throw new Error(`no progress: ${JSON.stringify(await counts())}\n${worker.output()}`)
        await Bun.sleep(5)
      }
      midFlight += (await counts()).running ?? 0
      await worker.kill('SIGKILL')
    }
    const before = await counts()
    expect(before.succeeded ?? 0).toBeLessThan(BURST) // the kills landed inside the burst

    const last = await spawnWorker(env)
    workers.push(last)
    const deadline = Date.now() + 120_000
    for (;;) {
      const c = await counts()
      if ((c.succeeded ?? 0) + (c.failed ?? 0) + (c.canceled ?? 0) === BURST) break
      if (Date.now() > deadline) throw new Error(`not all terminal: ${JSON.stringify(c)}\n${last.output()}`)
      await Bun.sleep(50)
    }
    await last.kill('SIGTERM')

    const succeeded = (await app.sql<{ id: string }[]>`select id from evaluations where tenant_id = ${tenantId} and status = 'succeeded'`).map((r) => r.id)
    expect(succeeded.length).toBe(BURST) // the built-in engine never fails these
    const events = await app.sql<{ source_id: string; n: number; q: string }[]>`
      select source_id, count(*)::int as n, sum(quantity)::text as q from usage_events
      where tenant_id = ${tenantId} and meter = 'evaluations_succeeded' group by source_id`
    expect(events.length).toBe(succeeded.length)
    expect(new Set(events.map((e) => e.source_id))).toEqual(new Set(succeeded))
    for (const e of events) expect([e.n, e.q]).toEqual([1, '1'])
    expect(new Set(ids)).toEqual(new Set(succeeded))
    // At least one evaluation was mid-flight at a kill, so its job ran again under the next worker.
    expect(midFlight).toBeGreaterThan(0)
    const reruns = await app.sql`select 1 from jobs where kind = 'evaluation_run' and tenant_id = ${tenantId}`
    expect(reruns.length).toBe(0) // every job finished (none left dead or waiting)
  })
})
