/**
 * Typed job kinds (defineJobKind): a claimed job whose stored payload no longer fits its kind's
 * schema (a field renamed by a later deploy), or whose workspace breaks the kind's tenant-scoped
 * rule, ends dead at once with the failing fields recorded, and none of it runs (no prepare, no
 * handler, no onGiveUp); a job that fits runs with its typed payload. Also for a real kind of the
 * service's registry.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { Type } from '@sinclair/typebox'
import type { TestApp } from '../helpers/app'
import { startApp } from '../helpers/app'
import { enqueueJob } from '../../jobs/queue'
import { defineJobKind, enqueue, kindTable } from '../../jobs/define'
import { runJobsUntilIdle, type RunnerOptions } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'
import { EVALUATION_RUN, EvaluationRunJob } from '../../server/evaluation/run'
import { Int } from '../../schemas/common'
import { MISFIT_REASON } from '../../jobs/define'
import { call } from '../helpers/app'
import { seedTask } from '../helpers/tasks'
import { envelopesOf } from '../helpers/underwriting-pack'

setDefaultTimeout(60_000)

let app: TestApp
const quiet: RunnerOptions['log'] = () => {}
const ran: string[] = []

/** A tenant-scoped kind whose every step notes that it ran. */
const probe = defineJobKind({
  name: 'payload_probe',
  payload: Type.Object({ caseId: Type.String(), round: Int() }),
  tenantScoped: true,
  maxAttempts: 1,
  prepare: async (job) => { ran.push(`prepare ${job.payload.caseId}`); return job.payload.round * 2 },
  handler: async (tx, job) => {
    ran.push(`handler ${job.payload.caseId}`)
    await tx`insert into payload_effects (job_id, note) values (${job.id}, ${`${job.tenantId}:${job.payload.caseId}:${job.prepared}`})`
  },
  onGiveUp: async (_tx, job) => { ran.push(`onGiveUp ${job.id}`) },
})
const kinds = kindTable([probe])

beforeAll(async () => {
  app = await startApp({ runner: false })
  await app.sql`create table payload_effects (job_id uuid not null, note text not null)`
}, 120_000)
afterAll(() => app.stop(), 120_000)

const jobRow = async (id: string) => (await app.sql<{ dead_at: Date | null; last_error: string | null }[]>`select dead_at, last_error from jobs where id = ${id}`)[0]
const effects = async (id: string) => (await app.sql`select note from payload_effects where job_id = ${id}`).map((r) => r.note as string)

/** Compile-time half of the contract: enqueue takes exactly the kind's payload (checked by tsc, never called). */
export function typedEnqueueRejectsAStalePayload(tx: Parameters<typeof enqueue>[0]) {
  // @ts-expect-error a payload with a renamed field does not compile
  void enqueue(tx, probe, { tenantId: 't', payload: { scenarioId: 'x', round: 1 } })
  // @ts-expect-error a tenant-scoped kind needs a workspace
  void enqueue(tx, probe, { tenantId: null, payload: { caseId: 'x', round: 1 } })
}

describe('typed job payloads', () => {
  test('a job that fits its schema runs, with its typed payload and prepared value', async () => {
    const tenant = await app.tenant()
    ran.length = 0
    const id = await app.sql.begin((tx) => enqueue(tx, probe, { tenantId: tenant.id, payload: { caseId: 'c-1', round: 4 } }))
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(1)
    expect(ran).toEqual(['prepare c-1', 'handler c-1'])
    expect(await effects(id)).toEqual([`${tenant.id}:c-1:8`])
    expect(await jobRow(id)).toBeUndefined()
  })

  test('a stored payload that no longer matches the schema ends dead with the fields named; nothing of it runs', async () => {
    const tenant = await app.tenant()
    ran.length = 0
    // As an older deploy wrote it: `caseId` was then `scenarioId`, and `round` a string.
    const id = await app.sql.begin((tx) => enqueueJob(tx, { kind: 'payload_probe', tenantId: tenant.id, payload: { scenarioId: 'c-2', round: '4' } }))
    await runJobsUntilIdle(app.deps, kinds, { log: quiet })
    expect(ran).toEqual([])
    expect(await effects(id)).toEqual([])
    const row = await jobRow(id)
    expect(row?.dead_at).toBeInstanceOf(Date)
    expect(row?.last_error).toContain('payload does not fit job kind payload_probe')
    expect(row?.last_error).toContain('payload.caseId')
    expect(row?.last_error).toContain('payload.round')
    // Dead is final: another pass claims nothing.
    expect(await runJobsUntilIdle(app.deps, kinds, { log: quiet })).toBe(0)
  })

  test('a tenant-scoped job without a workspace ends dead with the reason', async () => {
    ran.length = 0
    const id = await app.sql.begin((tx) => enqueueJob(tx, { kind: 'payload_probe', tenantId: null, payload: { caseId: 'c-3', round: 1 } }))
    await runJobsUntilIdle(app.deps, kinds, { log: quiet })
    expect(ran).toEqual([])
    const row = await jobRow(id)
    expect(row?.dead_at).toBeInstanceOf(Date)
    expect(row?.last_error).toContain('tenant_id')
  })

  test('a job of the service registry (evaluation_run) with a renamed payload field ends dead, the valid jobs beside it still run', async () => {
    const tenant = await app.tenant()
    ran.length = 0
    const stale = await app.sql.begin((tx) => enqueueJob(tx, { kind: EVALUATION_RUN, tenantId: tenant.id, payload: { caseId: crypto.randomUUID(), evaluationId: crypto.randomUUID() } }))
    // A valid probe claimed in the same batch is not held back by the dead one.
    const fine = await app.sql.begin((tx) => enqueue(tx, probe, { tenantId: tenant.id, payload: { caseId: 'c-4', round: 1 } }))
    expect(EvaluationRunJob.name).toBe(EVALUATION_RUN)
    await runJobsUntilIdle(app.deps, { ...JOB_KINDS, ...kinds }, { log: quiet })
    const row = await jobRow(stale)
    expect(row?.dead_at).toBeInstanceOf(Date)
    expect(row?.last_error).toContain('payload does not fit job kind evaluation_run')
    expect(row?.last_error).toContain('payload.scenarioId')
    expect(await effects(fine)).toEqual([`${tenant.id}:c-4:2`])
  })

  test('a misfit job ends its task failed with an internal reason and notifies its subscribers; the task is never left queued', async () => {
    const tenant = await app.tenant()
    const key = await app.apiKey(tenant.id, ['scenarios:read', 'notifications:write'])
    const task = await seedTask(app.sql, tenant.id, 'evaluation_run')
    await app.sql`update evaluations set status = 'queued' where tenant_id = ${tenant.id} and id = ${task.id}`
    const sub = await call(app.url, 'POST', '/v1/task-notification-subscriptions', { token: key, body: { task_kind: 'evaluation_run', task_id: task.id, channel: 'email', email: { address: 'uw@example.test' } } })
    expect(sub.status).toBe(201)
    // As an older deploy wrote it: the case id under another name; the evaluation id still there.
    const stale = await app.sql.begin((tx) => enqueueJob(tx, { kind: EVALUATION_RUN, tenantId: tenant.id, payload: { caseId: crypto.randomUUID(), evaluationId: task.id } }))
    await runJobsUntilIdle(app.deps, JOB_KINDS, { log: quiet })
    const row = await jobRow(stale)
    expect(row?.dead_at).toBeInstanceOf(Date)
    expect(row?.last_error).toContain('payload.scenarioId')
    const evaluation = await call(app.url, 'GET', task.path, { token: key })
    expect(evaluation.body.status).toBe('failed')
    expect(JSON.stringify(evaluation.body)).toContain(MISFIT_REASON)
    // The payload's details stay in the job's record; the customer sees the internal reason only.
    expect(JSON.stringify(evaluation.body)).not.toContain('scenarioId')
    const [outcome] = await app.sql`select status, event_type, summary from task_outcomes where tenant_id = ${tenant.id} and task_kind = 'evaluation_run' and task_id = ${task.id}`
    expect(outcome).toMatchObject({ status: 'failed', event_type: 'task.failed' })
    const envelopes = await envelopesOf(app, key, 'evaluation_run', task.id)
    expect(envelopes.map((e) => e.event_type ?? e.type)).toContain('task.failed')
  })

  test('a misfit job whose task cannot be found from what is left of its payload is dead, and nothing else changes', async () => {
    const tenant = await app.tenant()
    const task = await seedTask(app.sql, tenant.id, 'evaluation_run')
    await app.sql`update evaluations set status = 'queued' where tenant_id = ${tenant.id} and id = ${task.id}`
    const stale = await app.sql.begin((tx) => enqueueJob(tx, { kind: EVALUATION_RUN, tenantId: tenant.id, payload: { scenario: 'x', evaluation: task.id } }))
    await runJobsUntilIdle(app.deps, JOB_KINDS, { log: quiet })
    expect((await jobRow(stale))?.dead_at).toBeInstanceOf(Date)
    const [e] = await app.sql`select status from evaluations where tenant_id = ${tenant.id} and id = ${task.id}`
    expect(e!.status).toBe('queued')
  })
})
