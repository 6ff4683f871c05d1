/**
 * finishTask and the outcome table: every row of the spec's "Outcome values emitted" table, the
 * envelope rendered once per active subscription in the caller's transaction (nothing when it
 * rolls back), task.stalled not consuming the subscription, links from SVC_BASE_URL / SVC_UI_BASE_URL.
 * The runner is off here: jobs are driven with runJobsUntilIdle.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestApp } from '../helpers/app'
import { finishTask, OUTCOME_TABLE, TASK_KINDS, type TaskKind, type TaskResult } from '../../server/notifications/finish'
import { runJobsUntilIdle } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'
import { outcomeOf } from '../../server/notifications/outcomes'
import { startNotifyApp, subscribe } from './support'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

/** The spec's table, verbatim (kind, event_type, status, error_code, summary shape). */
const SPEC: [TaskKind, string, string, string | null, string][] = [
  ['generation_run', 'task.completed', 'succeeded', null, 'question generation completed, look at drafted questions'],
  ['generation_run', 'task.failed', 'failed', 'generation_failed', 'generation failed: <reason>'],
  ['generation_run', 'task.failed', 'failed', 'generation_canceled', 'generation was canceled'],
  ['generation_run', 'task.stalled', 'failed', 'generation_vendor_outage', 'on hold after <attempts> automatic checks; choose Resume'],
  ['diff_run', 'task.completed', 'succeeded', null, 're-upload diff ready for review'],
  ['diff_run', 'task.failed', 'failed', 'diff_failed', 'diff failed: <reason>'],
  ['document_ingestion', 'task.completed', 'succeeded', null, 'ingestion completed, or completed with a degraded parse (some content may be incomplete)'],
  ['document_ingestion', 'task.failed', 'failed', 'document_ingestion_failed', 'ingestion failed: <reason>'],
  ['document_ingestion', 'task.failed', 'failed', 'unsupported_pending', 'format not yet supported for automatic ingestion'],
  ['guideline_ingestion', 'task.completed', 'succeeded', null, 'processing completed, or completed with a degraded parse'],
  ['guideline_ingestion', 'task.failed', 'failed', 'guideline_ingestion_failed', 'processing failed: <reason>'],
  ['guideline_ingestion', 'task.failed', 'failed', 'unsupported_pending', 'format not yet supported for automatic processing'],
  ['structure_task', 'task.completed', 'succeeded', null, 'structuring completed, look at the proposal'],
  ['structure_task', 'task.failed', 'failed', 'structure_task_failed', 'structuring failed: <reason>'],
  ['question_set_publish', 'task.completed', 'succeeded', null, 'version is published'],
  ['question_set_publish', 'task.failed', 'failed', 'question_set_publish_failed', 'version could not be published'],
  ['evaluation_run', 'task.completed', 'succeeded', null, 'evaluation completed, review answers and decision'],
  ['evaluation_run', 'task.failed', 'failed', 'evaluation_failed', 'evaluation failed'],
  ['evaluation_run', 'task.failed', 'failed', 'evaluation_canceled', 'evaluation was canceled'],
  ['report_generated', 'task.completed', 'succeeded', null, 'findings report is ready to download'],
  ['report_generated', 'task.failed', 'failed', 'report_failed', 'report could not be generated'],
  ['directive_review', 'task.completed', 'succeeded', null, 'a supersession from a directive needs review (or a confirmed supersession has no analog in the latest directive re-derive)'],
  // Additive beyond the spec's table ("the list grows"): billing reconciliation (docs/billing.md).
  ['billing_reconciliation', 'task.completed', 'succeeded', null, 'billing reconciliation completed, review the findings'],
  ['billing_reconciliation', 'task.failed', 'failed', 'billing_reconciliation_failed', 'billing reconciliation failed: <reason>'],
]

/** The spec's "a, or b" summaries are two rows of ours: the default and a variant. */
function specSummaries(summary: string): string[] {
  const alternatives: Record<string, string[]> = {
    'ingestion completed, or completed with a degraded parse (some content may be incomplete)': ['ingestion completed', 'ingestion completed with a degraded parse (some content may be incomplete)'],
    'processing completed, or completed with a degraded parse': ['processing completed', 'processing completed with a degraded parse'],
    'a supersession from a directive needs review (or a confirmed supersession has no analog in the latest directive re-derive)': ['a supersession from a directive needs review', 'a confirmed supersession has no analog in the latest directive re-derive'],
  }
  return alternatives[summary] ?? [summary]
}

let app: TestApp
let tenant: { id: string }
let key: string

beforeAll(async () => {
  app = await startNotifyApp({ runner: false, env: { SVC_BASE_URL: 'https://api.example.test', SVC_UI_BASE_URL: 'https://app.example.test/' } })
  tenant = await app.tenant()
  key = await app.apiKey(tenant.id, ['notifications:write'])
}, 120_000)
afterAll(() => app.stop(), 120_000)

const bodiesOf = async (ids: string[]) =>
  (await app.sql`select id, body from notification_deliveries where id = any(${ids}::uuid[]) order by id`).map((r) => JSON.parse(r.body as string))

describe('the outcome table', () => {
  test('covers every row of the spec table and nothing else', () => {
    const ours = new Set(OUTCOME_TABLE.map((r) => JSON.stringify([r.kind, r.eventType, r.status, r.errorCode, r.summary])))
    const expected = new Set(SPEC.flatMap(([k, e, s, c, summary]) => specSummaries(summary).map((x) => JSON.stringify([k, e, s, c, x]))))
    expect([...ours].sort()).toEqual([...expected].sort())
    expect(new Set(OUTCOME_TABLE.map((r) => r.kind))).toEqual(new Set(TASK_KINDS))
  })

  test('canceled is task.failed with its own code; stalled exists only for generation runs; directive_review cannot fail', () => {
    expect(outcomeOf('generation_run', 'canceled')).toMatchObject({ eventType: 'task.failed', status: 'failed', errorCode: 'generation_canceled' })
    expect(outcomeOf('evaluation_run', 'canceled')).toMatchObject({ eventType: 'task.failed', errorCode: 'evaluation_canceled' })
    expect(() => outcomeOf('diff_run', 'canceled')).toThrow()
    expect(() => outcomeOf('evaluation_run', 'stalled')).toThrow()
    expect(() => outcomeOf('directive_review', 'failed')).toThrow()
    expect(() => outcomeOf('report_generated', 'unsupported_pending')).toThrow()
  })

  test('reason and attempts are spliced; a reason is one line of at most 200 characters', () => {
    expect(outcomeOf('diff_run', 'failed', { reason: 'timeout\r\n  talking to storage' }).summary).toBe('diff failed: timeout talking to storage')
    expect(outcomeOf('diff_run', 'failed').summary).toBe('diff failed: unknown error')
    expect(outcomeOf('generation_run', 'stalled', { attempts: 6 }).summary).toBe('on hold after 6 automatic checks; choose Resume')
    expect(outcomeOf('structure_task', 'failed', { reason: 'x'.repeat(500) }).summary.length).toBeLessThanOrEqual('structuring failed: '.length + 200)
  })
})

describe('finishTask', () => {
  test('every row renders into a stored envelope with the row outcome, once per active subscription', async () => {
    for (const row of OUTCOME_TABLE) {
      const taskId = crypto.randomUUID()
      await subscribe(app, key, { address: 'ops@example.com' }, { kind: row.kind, id: taskId })
      const ids = await app.sql.begin((tx) => finishTask(tx, { links: app.deps.links,
        tenantId: tenant.id, taskKind: row.kind, taskId, resourcePath: `/v1/things/${taskId}`, result: row.result as TaskResult,
        reason: 'it broke', attempts: 4, degraded: row.variant === 'degraded', noAnalog: row.variant === 'no_analog',
      }))
      expect(ids).toHaveLength(1)
      const [body] = await bodiesOf(ids)
      expect(body.event_type).toBe(row.eventType)
      expect(body.outcome).toEqual({ status: row.status, error_code: row.errorCode, summary: row.summary.replace('<reason>', 'it broke').replace('<attempts>', '4') })
    }
  })

  test('one envelope per subscription, each with its own delivery id, the same occurred_at = sent_at, links from the configured bases', async () => {
    const taskId = crypto.randomUUID()
    await subscribe(app, key, { address: 'a@example.com' }, { kind: 'evaluation_run', id: taskId })
    await subscribe(app, key, { url: 'https://hooks.example.test/a' }, { kind: 'evaluation_run', id: taskId })
    await subscribe(app, key, { address: 'other-task@example.com' }, { kind: 'evaluation_run' }) // another task
    await subscribe(app, key, { address: 'other-kind@example.com' }, { kind: 'report_generated', id: taskId }) // another kind, same id
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['notifications:write'])
    await subscribe(app, otherKey, { address: 'foreign@example.com' }, { kind: 'evaluation_run', id: taskId }) // another workspace
    const occurredAt = new Date('2026-05-06T07:08:09.010Z')
    const scenarioId = crypto.randomUUID()
    const ids = await app.sql.begin((tx) => finishTask(tx, { links: app.deps.links,
      tenantId: tenant.id, taskKind: 'evaluation_run', taskId, resourcePath: `/v1/scenarios/${scenarioId}/evaluations/${taskId}`, result: 'succeeded', occurredAt,
    }))
    expect(ids).toHaveLength(2)
    const bodies = await bodiesOf(ids)
    expect(new Set(bodies.map((b) => b.delivery_id))).toEqual(new Set(ids))
    for (const b of bodies) {
      expect(b).toMatchObject({
        schema_version: 1, event_type: 'task.completed', task_kind: 'evaluation_run', task_id: taskId, tenant_id: tenant.id,
        occurred_at: occurredAt.toISOString(), sent_at: occurredAt.toISOString(),
        links: {
          resource: `https://api.example.test/v1/scenarios/${scenarioId}/evaluations/${taskId}`,
          ui: `https://app.example.test/scenarios/${scenarioId}/evaluations/${taskId}`,
        },
      })
    }
    const jobs = await app.sql`select kind, tenant_id, payload from jobs where payload ->> 'deliveryId' = any(${ids}::text[])`
    expect(jobs.map((j) => [j.kind, j.tenant_id])).toEqual([['deliver_notification', tenant.id], ['deliver_notification', tenant.id]])
  })

  test('in a transaction that rolls back, nothing is stored and nothing enqueued', async () => {
    const taskId = crypto.randomUUID()
    await subscribe(app, key, { address: 'a@example.com' }, { kind: 'diff_run', id: taskId })
    const before = (await app.sql`select count(*)::int as n from jobs`)[0]!.n
    await expect(app.sql.begin(async (tx) => {
      await finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'diff_run', taskId, resourcePath: '/v1/x', result: 'failed', reason: 'r' })
      throw new Error('the task update failed')
    })).rejects.toThrow('the task update failed')
    expect(await app.sql`select 1 from notification_deliveries where task_id = ${taskId}`).toHaveLength(0)
    expect((await app.sql`select count(*)::int as n from jobs`)[0]!.n).toBe(before)
  })

  test('task.stalled does not consume the subscription; the terminal event arrives on it after resume; runJobsUntilIdle sends both', async () => {
    const taskId = crypto.randomUUID()
    const sub = await subscribe(app, key, { address: 'gen@example.com' }, { kind: 'generation_run', id: taskId })
    const path = `/v1/question-sets/${crypto.randomUUID()}/generation-runs/${taskId}`
    const stalled = await app.sql.begin((tx) => finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'generation_run', taskId, resourcePath: path, result: 'stalled', attempts: 5 }))
    const done = await app.sql.begin((tx) => finishTask(tx, { links: app.deps.links, tenantId: tenant.id, taskKind: 'generation_run', taskId, resourcePath: path, result: 'succeeded' }))
    const [a] = await bodiesOf(stalled)
    const [b] = await bodiesOf(done)
    expect(a).toMatchObject({ event_type: 'task.stalled', outcome: { status: 'failed', error_code: 'generation_vendor_outage', summary: 'on hold after 5 automatic checks; choose Resume' } })
    expect(b).toMatchObject({ event_type: 'task.completed', outcome: { status: 'succeeded', error_code: null } })
    const [s] = await app.sql`select status from task_notification_subscriptions where id = ${sub.id}`
    expect(s!.status).toBe('active')

    // Drive every due job (all deliveries of this file so far go by .eml file, no SMTP configured).
    const runs = await runJobsUntilIdle(app.deps, JOB_KINDS)
    expect(runs).toBeGreaterThanOrEqual(2)
    const states = await app.sql`select id, status, attempts from notification_deliveries where id = any(${[...stalled, ...done]}::uuid[])`
    expect(states.map((r) => [r.status, r.attempts])).toEqual([['delivered', 1], ['delivered', 1]])
    expect(await runJobsUntilIdle(app.deps, JOB_KINDS)).toBe(0)
    const mails = readdirSync(join(app.config.dataDir, 'mail')).map((f) => readFileSync(join(app.config.dataDir, 'mail', f), 'utf8'))
    expect(mails.some((m) => m.includes('on hold after 5 automatic checks'))).toBe(true)
  })
})
