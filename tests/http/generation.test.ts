import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { caseWith, evaluationEnded, packFiles, publishVersion } from '../helpers/underwriting-pack'
import {
  createGroup, createSet, deliveriesOf, EMAIL, guidelineDocx, guidelinePdf, guidelineText, OBLIGATIONS, readyGuideline, runReaches,
} from '../helpers/authoring'

setDefaultTimeout(60_000)

let app: TestApp
let key: string
let readKey: string
let group: any
let docx: any
let pdf: any

beforeAll(async () => {
  app = await startApp({ env: { SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1', SVC_GENERATION_CHUNK_CHARS: '120' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['question_sets:write', 'scenarios:write', 'notifications:write'])
  readKey = await app.apiKey(t.id, ['question_sets:read'])
  group = await createGroup(app, key)
  docx = await readyGuideline(app, key, group.id, await guidelineDocx())
  pdf = await readyGuideline(app, key, group.id, await guidelinePdf())
})
afterAll(() => app.stop())

const generate = (setId: string, body: Record<string, unknown>, token = key, headers: Record<string, string> = {}) =>
  call(app.url, 'POST', `/v1/question-sets/${setId}/generate`, { token, body, headers })

/** The five drafts the obligations must give, by key. */
const EXPECTED = {
  annual_revenue: { criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000', thresholds: [{ comparator: '>=', value: '1000000', unit: 'USD' }] },
  prior_bankruptcy: { criticality: 'critical', answer_type: 'boolean', fact_path: 'prior_bankruptcy', accept: 'value = false', thresholds: [] },
  years_in_business: { criticality: 'major', answer_type: 'number', fact_path: 'years_in_business', accept: 'value >= 2', thresholds: [{ comparator: '>=', value: '2' }] },
  debt_service_coverage_ratio: { criticality: 'critical', answer_type: 'number', fact_path: 'debt_service_coverage_ratio', accept: 'value between 1.25 and 10', thresholds: [{ comparator: '>=', value: '1.25' }, { comparator: '<=', value: '10' }] },
  copy_of_business_plan: { criticality: 'minor', answer_type: 'text', thresholds: [] },
}

async function blocksOf(guideline: any) {
  return (await call(app.url, 'GET', `/v1/question-groups/${group.id}/guidelines/${guideline.id}/blocks?limit=200`, { token: readKey })).body.items as any[]
}

describe('built-in generation', () => {
  for (const [name, which] of [['DOCX', () => docx], ['PDF', () => pdf]] as const) {
    test(`a ${name} guideline with five obligations gives five drafts: criticality, decimal-string thresholds, citations to its blocks`, async () => {
      const set = await createSet(app, key)
      const g = which()
      const r = await generate(set.id, { guideline_ids: [g.id], notifications: EMAIL })
      expect(r.status).toBe(202)
      expect(r.headers.get('location')).toBe(`/v1/question-sets/${set.id}/generation-runs/${r.body.id}`)
      expect(r.body).toMatchObject({ question_set_id: set.id, guideline_ids: [g.id], generator: 'builtin', status: 'queued', drafted_questions: [] })
      const run = await runReaches(app, readKey, set.id, r.body.id)
      expect(run.status).toBe('succeeded')
      expect(run.drafted_questions.map((d: any) => d.key)).toEqual(Object.keys(EXPECTED))
      const blocks = await blocksOf(g)
      for (const d of run.drafted_questions) {
        expect(d).toMatchObject(EXPECTED[d.key as keyof typeof EXPECTED])
        expect(d.citations).toHaveLength(1)
        const c = d.citations[0]
        const block = blocks.find((b) => b.id === c.block_id)
        expect(block).toBeDefined()
        expect(c).toMatchObject({ guideline_id: g.id, page: block.page })
        expect(block.text).toContain(c.quote)
        expect(OBLIGATIONS).toContain(c.quote)
        for (const th of d.thresholds) expect(typeof th.value).toBe('string')
      }
      // Guideline by guideline, chunk by chunk: every step checkpointed once; the built-in generator costs nothing.
      expect(run.progress.steps_total).toBeGreaterThan(1)
      expect(run.progress).toEqual({ steps_total: run.progress.steps_total, steps_done: run.progress.steps_total, drafted: 5 })
      expect(run.usage).toEqual({ input_tokens: 0, output_tokens: 0, cost_micro: 0, cost: '0.00' })
      const steps = await app.sql`select step, done_at, drafted from generation_steps where run_id = ${run.id} order by step`
      expect(steps.length).toBe(run.progress.steps_total)
      expect(steps.every((s) => s.done_at !== null)).toBe(true)
      expect(steps.reduce((n, s) => n + s.drafted, 0)).toBe(5)
      const [d] = await deliveriesOf(app, key, 'generation_run', run.id)
      expect(d.payload).toMatchObject({
        event_type: 'task.completed', task_kind: 'generation_run', task_id: run.id,
        outcome: { status: 'succeeded', error_code: null, summary: 'question generation completed, look at drafted questions' },
      })
      expect(d.payload.links.resource).toEndWith(`/v1/question-sets/${set.id}/generation-runs/${run.id}`)
    })
  }

  test('quantities: the measured attribute is the fact and the question, and a case stating it is answered from it', async () => {
    const lines = [
      'The borrower should have at least 3 years in business.',
      'The borrower must have a minimum FICO of 680.',
      'Borrowers must have no more than 2 late payments in the last 12 months.',
      'The borrower should have a DSCR of at least 1.25.',
    ]
    const g = await readyGuideline(app, key, group.id, guidelineText(lines.join('\n\n'), 'quantities.txt'))
    const set = await createSet(app, key)
    const run = await runReaches(app, readKey, set.id, (await generate(set.id, { guideline_ids: [g.id] })).body.id)
    expect(run.status).toBe('succeeded')
    expect(run.drafted_questions.map((d: any) => [d.key, d.fact_path, d.text, d.accept])).toEqual([
      ['years_in_business', 'years_in_business', 'How many years has the borrower been in business?', 'value >= 3'],
      ['fico', 'fico', "What is the borrower's FICO?", 'value >= 680'],
      ['late_payments', 'late_payments', 'How many late payments does the borrower have in the last 12 months?', 'value <= 2'],
      ['dscr', 'dscr', "What is the borrower's DSCR?", 'value >= 1.25'],
    ])
    const accepted = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${run.id}/accept`, { token: key, body: {} })
    await publishVersion(app, key, set.id, accepted.body.questions)
    const application = { filename: 'application.txt', contentType: 'text/plain', bytes: new TextEncoder().encode('Years in business: 7\nFICO: 712\nLate payments: 1\nDSCR: 1.41\n') }
    const { scenario } = await caseWith(app, key, [application as any])
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
    expect((await evaluationEnded(app, key, scenario.id, e.body.id)).status).toBe('succeeded')
    const answers = (await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })).body.items
    expect(Object.fromEntries(answers.map((a: any) => [a.question_key, [a.status, a.value]]))).toEqual({
      years_in_business: ['answered', '7'], fico: ['answered', '712'], late_payments: ['answered', '1'], dscr: ['answered', '1.41'],
    })
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/decision`, { token: key })).body.outcome).toBe('approve')
  })

  test('two guidelines: keys stay unique across them; list shows the runs; replays keep one run', async () => {
    const set = await createSet(app, key)
    const r1 = await generate(set.id, { guideline_ids: [docx.id, pdf.id] }, key, { 'idempotency-key': 'gen-1' })
    const r2 = await generate(set.id, { guideline_ids: [docx.id, pdf.id] }, key, { 'idempotency-key': 'gen-1' })
    expect(r2.body.id).toBe(r1.body.id)
    expect(problemOf(await generate(set.id, { guideline_ids: [docx.id] }, key, { 'idempotency-key': 'gen-1' })).type).toBe('urn:svc:error:idempotency_conflict')
    const run = await runReaches(app, readKey, set.id, r1.body.id)
    const keys = run.drafted_questions.map((d: any) => d.key)
    expect(keys).toHaveLength(10)
    expect(new Set(keys).size).toBe(10)
    expect(keys).toContain('annual_revenue_2')
    const list = await call(app.url, 'GET', `/v1/question-sets/${set.id}/generation-runs`, { token: readKey })
    expect(list.body.items.map((x: any) => x.id)).toEqual([run.id])
    expect(list.body.items[0]).toEqual(run)
  })

  test('refusals: unknown guideline 422, unprocessed guideline 409, model generator without endpoint 422, readers 403, foreign set 404', async () => {
    const set = await createSet(app, key)
    expect(problemOf(await generate(set.id, { guideline_ids: [crypto.randomUUID()] })).detail).toContain('guideline_ids/0')
    const start = (await call(app.url, 'POST', `/v1/question-groups/${group.id}/guidelines`, { token: key, body: { filename: 'x.txt', content_type: 'text/plain', size_bytes: 3 } })).body
    expect(problemOf(await generate(set.id, { guideline_ids: [start.id] })).type).toBe('urn:svc:error:conflict')
    expect(problemOf(await generate(set.id, { guideline_ids: [docx.id], generator: 'model' })).type).toBe('urn:svc:error:validation')
    expect(problemOf(await generate(set.id, { guideline_ids: [docx.id] }, readKey)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await generate(set.id, { guideline_ids: [] })).errors?.[0]?.pointer).toBe('/guideline_ids')
    const foreign = await app.apiKey((await app.tenant()).id, ['question_sets:write'])
    expect((await generate(set.id, { guideline_ids: [docx.id] }, foreign)).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/question-sets/${set.id}/generation-runs/${crypto.randomUUID()}`, { token: readKey })).status).toBe(404)
  })
})

describe('accepting drafts', () => {
  test('accept all, publish, evaluate: the generated version decides a case correctly (approve, and decline below the revenue threshold)', async () => {
    const set = await createSet(app, key)
    const run = await runReaches(app, readKey, set.id, (await generate(set.id, { guideline_ids: [pdf.id] })).body.id)
    const accepted = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${run.id}/accept`, { token: key, body: {} })
    expect(accepted.status).toBe(201)
    expect(accepted.body).toMatchObject({ question_set_id: set.id, number: 1, status: 'draft' })
    expect(accepted.headers.get('etag')).toBe(accepted.body.etag)
    expect(accepted.body.questions.map((q: any) => q.key)).toEqual(Object.keys(EXPECTED))
    expect(accepted.body.questions[0]).toEqual({ key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'critical', answer_type: 'number', guidance: `From the guideline: "${OBLIGATIONS[0]}"`, fact_path: 'annual_revenue', accept: 'value >= 1000000' })
    expect((await call(app.url, 'GET', `/v1/question-sets/${set.id}/generation-runs/${run.id}`, { token: readKey })).body.accepted_version_ids).toEqual([accepted.body.id])
    const provenance = await app.sql`select question_key, citations from question_provenance where version_id = ${accepted.body.id} order by question_key`
    expect(provenance.map((p) => p.question_key)).toEqual(Object.keys(EXPECTED).sort())

    const publish = await call(app.url, 'POST', `/v1/question-sets/${set.id}/versions/${accepted.body.id}/publish`, { token: key })
    expect(publish.status).toBe(202)
    for (let i = 0; i < 200 && (await call(app.url, 'GET', `/v1/question-sets/${set.id}/versions/${accepted.body.id}`, { token: key })).body.status !== 'published'; i++) await Bun.sleep(20)

    for (const [revenue, outcome] of [['1,250,000.00', 'approve'], ['900,000.00', 'decline']] as const) {
      const { scenario } = await caseWith(app, key, await packFiles({ annualRevenue: revenue, minBalanceRow: '2024-01-28,Payroll,-31000.00,29700.50' }))
      const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
      expect(e.status).toBe(202)
      expect(e.body.question_set_version_id).toBe(accepted.body.id)
      expect((await evaluationEnded(app, key, scenario.id, e.body.id)).status).toBe('succeeded')
      const answers = (await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })).body.items
      const byKey = Object.fromEntries(answers.map((a: any) => [a.question_key, a]))
      expect(byKey.prior_bankruptcy).toMatchObject({ status: 'answered', value: false })
      expect(byKey.years_in_business).toMatchObject({ status: 'answered', value: '12' })
      expect(byKey.debt_service_coverage_ratio).toMatchObject({ status: 'answered', value: '1.45' })
      const decision = (await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/decision`, { token: key })).body
      expect(decision.outcome).toBe(outcome)
      if (outcome === 'decline') expect(decision.reasons.map((x: any) => x.question_key)).toEqual(['annual_revenue'])
    }
  })

  test('accept some keys with edits, on top of the published version; unknown keys 422; a queued run 409', async () => {
    const set = await createSet(app, key)
    const base = await call(app.url, 'POST', `/v1/question-sets/${set.id}/versions`, { token: key, body: { questions: [
      { key: 'existing', text: 'Kept from the published version?', criticality: 'minor', answer_type: 'text' },
      { key: 'annual_revenue', text: 'Old revenue question', criticality: 'major', answer_type: 'number' },
    ] } })
    await call(app.url, 'POST', `/v1/question-sets/${set.id}/versions/${base.body.id}/publish`, { token: key })
    for (let i = 0; i < 200 && (await call(app.url, 'GET', `/v1/question-sets/${set.id}/versions/${base.body.id}`, { token: key })).body.status !== 'published'; i++) await Bun.sleep(20)
    const run = await runReaches(app, readKey, set.id, (await generate(set.id, { guideline_ids: [docx.id] })).body.id)
    const url = `/v1/question-sets/${set.id}/generation-runs/${run.id}/accept`
    expect(problemOf(await call(app.url, 'POST', url, { token: key, body: { keys: ['annual_revenue', 'nope'] } })).detail).toContain('keys/1')
    expect(problemOf(await call(app.url, 'POST', url, { token: key, body: { keys: ['annual_revenue'], edits: [{ key: 'years_in_business', text: 'x' }] } })).detail).toContain('edits/0/key')
    expect(problemOf(await call(app.url, 'POST', url, { token: key, body: { edits: [{ key: 'annual_revenue', accept: 'value >>> 3' }] } })).errors?.[0]?.pointer).toMatch(/^\/questions\/\d+\/accept$/)
    const r = await call(app.url, 'POST', url, { token: key, body: { keys: ['annual_revenue', 'years_in_business'], edits: [{ key: 'years_in_business', criticality: 'critical', new_key: 'years_trading' }] } })
    expect(r.status).toBe(201)
    expect(r.body.number).toBe(2)
    expect(r.body.questions.map((q: any) => [q.key, q.criticality])).toEqual([['existing', 'minor'], ['annual_revenue', 'critical'], ['years_trading', 'critical']])
    expect(r.body.questions[2].fact_path).toBe('years_in_business')
  })
})
