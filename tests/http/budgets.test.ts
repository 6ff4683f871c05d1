/**
 * Cost budgets: model usage metered per run and per workspace; a hard budget set by operators
 * (route or CLI) pauses a run that reaches it mid-run, refuses to start or resume one with 402
 * budget_exceeded, and raising it lets resume continue from the checkpoint.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { startModelStub, type ModelStub } from '../helpers/model-stub'
import { runCli } from '../helpers/cli'
import { createGroup, createSet, EMAIL, guidelineDocx, readyGuideline, runReaches } from '../helpers/authoring'
import { caseWith, envelopesOf, evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import type { SampleFile } from '../helpers/samples'

setDefaultTimeout(60_000)

let app: TestApp
let stub: ModelStub
let issuer: TestIssuer
let operator: string
let tenant: { id: string; slug: string }
let key: string
let guideline: any

beforeAll(async () => {
  stub = startModelStub()
  issuer = await startIssuer()
  app = await startApp({ env: {
    SVC_MODEL_URL: stub.url, SVC_MODEL_MAX_RETRIES: '0', SVC_GENERATION_CHUNK_CHARS: '120',
    SVC_MODEL_PRICE_INPUT_MICRO: '1000', SVC_MODEL_PRICE_OUTPUT_MICRO: '1000',
    SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'budget-operator', SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1',
  } })
  operator = await issuer.token('budget-operator')
  tenant = await app.tenant()
  key = await app.apiKey(tenant.id, ['question_sets:write', 'notifications:write'])
  const group = await createGroup(app, key)
  guideline = await readyGuideline(app, key, group.id, await guidelineDocx())
  stub.respond((req) => ({ json: { questions: req.passages.map((p) => ({ key: `q_${p.blockId.slice(-8)}`, text: 'Met?', criticality: 'minor', answer_type: 'text', citations: [{ block_id: p.blockId, quote: p.text }] })) } }))
})
afterAll(async () => {
  await app.stop()
  stub.stop()
  issuer.stop()
})

const budget = (body?: unknown, token = operator) => call(app.url, body === undefined ? 'GET' : 'PUT', `/v1/operator/workspaces/${tenant.id}/cost-budget`, { token, body })
const generate = (setId: string, body: Record<string, unknown> = {}) =>
  call(app.url, 'POST', `/v1/question-sets/${setId}/generate`, { token: key, body: { guideline_ids: [guideline.id], ...body } })

describe('cost budgets', () => {
  test('operators only: workspace admins and keys are refused; limit_micro or a decimal limit; one of them', async () => {
    const admin = await app.member(tenant.id, 'budget-admin', 'admin')
    expect(admin.id).toBeDefined()
    expect(problemOf(await budget(undefined, await issuer.token('budget-admin'))).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await budget({ limit_micro: 5 }, key)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await budget({ limit_micro: 5, limit: '1.00' })).type).toBe('urn:svc:error:validation')
    expect(problemOf(await budget({ limit: '1.0000001' })).type).toBe('urn:svc:error:validation')
    expect((await call(app.url, 'GET', `/v1/operator/workspaces/${crypto.randomUUID()}/cost-budget`, { token: operator })).status).toBe(404)
    // The earlier path still answers (deprecated).
    expect((await call(app.url, 'GET', `/v1/tenants/${tenant.id}/cost-budget`, { token: operator })).body).toMatchObject({ tenant_id: tenant.id })
    const none = await budget()
    expect(none.body).toEqual({ tenant_id: tenant.id, limit_micro: null, limit: null, spent_micro: 0, spent: '0.00', input_tokens: 0, output_tokens: 0, exceeded: false })
    expect((await budget({ limit: '2.5' })).body).toMatchObject({ limit_micro: 2_500_000, limit: '2.50' })
  })

  test('reaching the budget mid-run pauses it (stalled, budget_exceeded, no notification); starting and resuming answer 402; raising it (CLI) and resuming continues', async () => {
    const set = await createSet(app, key)
    stub.reset()
    expect((await budget({ limit_micro: 1 })).status).toBe(200)
    // Spend is still 0 < 1: the run starts; its first step spends more than the budget.
    const r = await generate(set.id, { notifications: EMAIL })
    expect(r.status).toBe(202)
    const paused = await runReaches(app, key, set.id, r.body.id, ['stalled'])
    expect(paused).toMatchObject({ status: 'stalled', paused_reason: 'budget_exceeded', progress: { steps_done: 1 } })
    expect(paused.progress.steps_total).toBeGreaterThan(2)
    expect(stub.calls).toBe(1)
    expect(paused.usage.cost_micro).toBeGreaterThan(1)
    const subs = (await call(app.url, 'GET', `/v1/task-notification-subscriptions?task_kind=generation_run&task_id=${r.body.id}`, { token: key })).body.items
    expect((await call(app.url, 'GET', `/v1/task-notification-subscriptions/${subs[0].id}/deliveries`, { token: key })).body.items).toEqual([])

    const report = (await budget()).body
    expect(report).toMatchObject({ limit_micro: 1, exceeded: true, spent_micro: paused.usage.cost_micro, spent: paused.usage.cost, input_tokens: paused.usage.input_tokens })

    const refused = problemOf(await generate(set.id))
    expect(refused).toMatchObject({ type: 'urn:svc:error:budget_exceeded', status: 402 })
    const resumeRefused = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/resume`, { token: key })
    expect(problemOf(resumeRefused).type).toBe('urn:svc:error:budget_exceeded')
    expect((await call(app.url, 'GET', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}`, { token: key })).body.status).toBe('stalled')
    // The built-in generator costs nothing and is not held by the budget.
    const builtin = await generate(set.id, { generator: 'builtin' })
    expect(builtin.status).toBe(202)
    expect((await runReaches(app, key, set.id, builtin.body.id)).status).toBe('succeeded')

    // The CLI reaches an embedded database only through the running service's control socket, which
    // is still being built; on PostgreSQL it connects directly.
    if (app.config.databaseUrl) {
      const cli = await runCli(app, ['budget', 'set', '--tenant', tenant.slug, '--limit', '100.00'])
      expect(cli.code).toBe(0)
      expect(cli.json).toMatchObject({ tenant_id: tenant.id, limit_micro: 100_000_000, limit: '100.00', exceeded: false })
      const bad = await runCli(app, ['budget', 'set', '--tenant', tenant.slug, '--limit-micro', 'lots'])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain('--limit-micro')
    } else {
      expect((await budget({ limit: '100.00' })).body).toMatchObject({ limit_micro: 100_000_000, exceeded: false })
    }

    const resumed = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${r.body.id}/resume`, { token: key })
    expect(resumed.status).toBe(202)
    const done = await runReaches(app, key, set.id, r.body.id)
    expect(done.status).toBe('succeeded')
    expect(stub.calls).toBe(done.progress.steps_total)
    const rows = await app.sql`select step from model_usage where run_id = ${r.body.id} order by step`
    expect(rows.map((x) => x.step)).toEqual(Array.from({ length: done.progress.steps_total }, (_, i) => i))
    expect((await budget()).body.spent_micro).toBe(done.usage.cost_micro)
  })
})

describe('cost budgets on model-backed evaluations (issue 16, item 3)', () => {
  const FORM: SampleFile = { filename: 'form.txt', contentType: 'text/plain', bytes: new TextEncoder().encode('Applicant: Acme Holdings LLC\n\nAnnual revenue: 1,250,000.00\n\nThere is no outstanding litigation against the applicant.') as SampleFile['bytes'] }
  const QUESTIONS = ['revenue', 'litigation', 'applicant', 'revenue_again'].map((k) => ({ key: k, text: k.includes('revenue') ? 'What is the annual revenue?' : k === 'litigation' ? 'Is there outstanding litigation?' : 'Who is the applicant?', criticality: 'minor', answer_type: 'text' }))

  test('metered per answer; refused with 402 once spent; stopped mid-run as failed/budget_exceeded with a task.failed notification', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'notifications:write'])
    const evalBudget = (body?: unknown) => call(app.url, body === undefined ? 'GET' : 'PUT', `/v1/tenants/${t.id}/cost-budget`, { token: operator, body })
    const evaluate = (scenarioId: string, body: Record<string, unknown> = {}) => call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: k, body })
    // Evaluation questions get a cited answer (generation requests have no question key).
    stub.respond((req) => req.questionKey
      ? { json: { status: 'answered', value: req.passages[0]!.text, confidence: 0.9, citations: [{ block_id: req.passages[0]!.blockId, quote: req.passages[0]!.text }] } }
      : { json: { questions: [] } })
    await publishedSet(app, k, QUESTIONS, { name: 'budgeted set' })
    const { scenario } = await caseWith(app, k, [FORM])

    // No budget: the evaluation runs; each model answer is one model_usage row of the evaluation, counted in the workspace's spend.
    stub.reset()
    const first = await evaluate(scenario.id)
    expect(first.status).toBe(202)
    expect((await evaluationEnded(app, k, scenario.id, first.body.id)).status).toBe('succeeded')
    const rows = await app.sql`select run_kind, step, input_tokens, output_tokens, cost_micro from model_usage where tenant_id = ${t.id} and run_id = ${first.body.id} order by step`
    expect(rows).toHaveLength(stub.calls)
    expect(rows.map((r) => [r.run_kind, r.step])).toEqual([0, 1, 2, 3].map((i) => ['evaluation_run', i]))
    expect(rows.every((r) => Number(r.input_tokens) > 0 && Number(r.output_tokens) > 0 && Number(r.cost_micro) > 0)).toBe(true)
    // The spend also holds the model's typing of the form at ingestion (the rules cannot type it): one row of its own.
    const typing = await app.sql`select cost_micro from model_usage where tenant_id = ${t.id} and run_kind = 'document_ingestion'`
    expect(typing).toHaveLength(1)
    const spent = (await evalBudget()).body.spent_micro
    expect(spent).toBe([...rows, ...typing].reduce((n, r) => n + Number(r.cost_micro), 0))

    // A budget one micro-unit above the spend: the next evaluation starts, its first answer spends past it, and it stops there.
    expect((await evalBudget({ limit_micro: spent + 1 })).status).toBe(200)
    stub.reset()
    const second = await evaluate(scenario.id, { notifications: [{ channel: 'email', email: { address: 'budget@example.test' } }] })
    expect(second.status).toBe(202)
    const stopped = await evaluationEnded(app, k, scenario.id, second.body.id)
    expect(stopped).toMatchObject({ status: 'failed', error_code: 'budget_exceeded', progress: { total: 4 } })
    expect(stopped.error).toContain('cost budget')
    expect(stub.calls).toBe(1)
    expect(await app.sql`select 1 from model_usage where run_id = ${second.body.id}`).toHaveLength(1)
    const [envelope] = await envelopesOf(app, k, 'evaluation_run', second.body.id)
    expect(envelope).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'evaluation_failed', summary: 'evaluation failed' } })
    expect((await evalBudget()).body.exceeded).toBe(true)

    // Spent: refused to start with 402, nothing created, no model call.
    stub.reset()
    const before = await app.sql`select id from evaluations where tenant_id = ${t.id}`
    const refused = await evaluate(scenario.id)
    expect(problemOf(refused)).toMatchObject({ type: 'urn:svc:error:budget_exceeded', status: 402 })
    expect(await app.sql`select id from evaluations where tenant_id = ${t.id}`).toHaveLength(before.length)
    expect(stub.calls).toBe(0)

    // Raised: evaluations start again.
    expect((await evalBudget({ limit: '100.00' })).body.exceeded).toBe(false)
    const third = await evaluate(scenario.id)
    expect(third.status).toBe(202)
    expect((await evaluationEnded(app, k, scenario.id, third.body.id)).status).toBe('succeeded')
  })
})
