import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { allBlocks } from '../helpers/samples'
import {
  caseWith, DEFAULT_FACTS, EMAIL_ME, envelopesOf, evaluationEnded, PACK_QUESTIONS, packFiles, publishedSet, publishVersion,
} from '../helpers/underwriting-pack'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(60_000)

let app: TestApp

beforeAll(async () => {
  app = await startApp({ env: { SVC_RATE_RUN: '5/3600' } })
})
afterAll(() => app.stop())

/** A fresh workspace with a key that can do everything this file needs. */
async function workspace() {
  const t = await app.tenant()
  const key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'notifications:write'])
  return { tenant: t, key }
}

const evaluate = (key: string, scenarioId: string, body?: unknown, headers: Record<string, string> = {}) =>
  call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key, body, headers })

/** The block of a document whose text contains `needle`. */
async function blockWith(key: string, scenarioId: string, doc: any, needle: string) {
  const blocks = await allBlocks(app, key, scenarioId, doc.id)
  const found = blocks.find((b) => b.text.includes(needle))
  if (!found) throw new Error(`no block of ${doc.filename} contains ${needle}: ${JSON.stringify(blocks.map((b) => b.text))}`)
  return found
}

describe('evaluation with the built-in engine', () => {
  test('the underwriting pack: exact answers, evidence blocks and pages, decision approve, progress events, case status', async () => {
    const { key } = await workspace()
    const { set, version } = await publishedSet(app, key)
    const { scenario, docs } = await caseWith(app, key, await packFiles())
    const form = docs['application_form.pdf']
    const csv = docs['bank_statement.csv']
    const docx = docs['letter.docx']

    const r = await evaluate(key, scenario.id, { notifications: EMAIL_ME })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ scenario_id: scenario.id, status: 'queued', question_set_id: set.id, question_set_version_id: version.id, engine: 'builtin', progress: { answered: 0, total: 6 } })
    expect(r.headers.get('location')).toBe(`/v1/scenarios/${scenario.id}/evaluations/${r.body.id}`)
    const done = await evaluationEnded(app, key, scenario.id, r.body.id)
    expect(done).toMatchObject({ status: 'succeeded', progress: { answered: 6, total: 6 }, document_count: 3, started_at: expect.any(String), finished_at: expect.any(String) })

    const revenueBlock = await blockWith(key, scenario.id, form, 'Annual revenue: 1,250,000.00')
    const historyBlock = await blockWith(key, scenario.id, form, 'Prior bankruptcy: No')
    const minRow = await blockWith(key, scenario.id, csv, '2024-01-28')
    const dscrBlock = await blockWith(key, scenario.id, docx, 'Debt service coverage ratio: 1.45')
    const litigationBlock = await blockWith(key, scenario.id, docx, 'no outstanding litigation')
    expect(revenueBlock.page).toBe(1)
    expect(historyBlock.page).toBe(2)

    const answers = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })
    expect(answers.status).toBe(200)
    expect(answers.body.next_cursor).toBeNull()
    const strip = (a: any) => { const { id, evaluation_id, evidence_ids, ...rest } = a; return rest }
    expect(answers.body.items.map(strip)).toEqual([
      { question_key: 'annual_revenue', criticality: 'critical', answer_type: 'number', value: '1250000.00', confidence: 1, status: 'answered', source: 'fact', fact_path: 'annual_revenue', accepted: true, downgraded: false },
      { question_key: 'years_in_business', criticality: 'major', answer_type: 'number', value: '12', confidence: 1, status: 'answered', source: 'fact', fact_path: 'years_in_business', accepted: true, downgraded: false },
      { question_key: 'prior_bankruptcy', criticality: 'critical', answer_type: 'boolean', value: false, confidence: 1, status: 'answered', source: 'fact', fact_path: 'prior_bankruptcy', accepted: true, downgraded: false },
      { question_key: 'min_balance', criticality: 'major', answer_type: 'number', value: '29700.50', confidence: 1, status: 'answered', source: 'fact', fact_path: 'bank_statement.balance.min', accepted: true, downgraded: false },
      { question_key: 'dscr', criticality: 'major', answer_type: 'number', value: '1.45', confidence: 1, status: 'answered', source: 'fact', fact_path: 'debt_service_coverage_ratio', accepted: true, downgraded: false },
      { question_key: 'litigation', criticality: 'minor', answer_type: 'text', value: 'We confirm that there is no outstanding litigation against Acme Holdings LLC or its directors.', confidence: 0.66, status: 'answered', source: 'retrieval', downgraded: false },
    ])
    for (const a of answers.body.items) expect(a.evaluation_id).toBe(r.body.id)

    const evidence = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evidence`, { token: key })
    const byKey = (k: string) => evidence.body.items.filter((e: any) => e.question_key === k).map((e: any) => ({ document_id: e.document_id, block_id: e.block_id, page: e.page, quote: e.quote }))
    expect(byKey('annual_revenue')).toEqual([{ document_id: form.id, block_id: revenueBlock.id, page: 1, quote: 'Annual revenue: 1,250,000.00' }])
    expect(byKey('years_in_business')).toEqual([{ document_id: form.id, block_id: revenueBlock.id, page: 1, quote: 'Years in business: 12 years' }])
    expect(byKey('prior_bankruptcy')).toEqual([{ document_id: form.id, block_id: historyBlock.id, page: 2, quote: 'Prior bankruptcy: No' }])
    expect(byKey('min_balance')).toEqual([{ document_id: csv.id, block_id: minRow.id, page: 1, quote: minRow.text }])
    expect(byKey('dscr')).toEqual([{ document_id: docx.id, block_id: dscrBlock.id, page: 1, quote: 'Debt service coverage ratio: 1.45' }])
    expect(byKey('litigation')[0]).toEqual({ document_id: docx.id, block_id: litigationBlock.id, page: 1, quote: litigationBlock.text })
    // evidence_ids of each answer name exactly its evidence, and every quote is in its block's text
    for (const a of answers.body.items) {
      expect(a.evidence_ids).toEqual(evidence.body.items.filter((e: any) => e.answer_id === a.id).map((e: any) => e.id))
    }
    for (const e of evidence.body.items) {
      const [row] = await app.sql`select b.text from document_block_chunks c, json_to_recordset(c.blocks::json) as b(id uuid, text text) where c.document_id = ${e.document_id} and b.id = ${e.block_id}`
      expect(row!.text).toContain(e.quote)
    }

    const decision = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/decision`, { token: key })
    expect(decision.body).toEqual({ id: expect.any(String), evaluation_id: r.body.id, outcome: 'approve', reasons: [], computed_at: expect.any(String), final_outcome: 'approve' })

    const events = await app.sql<{ type: string; data: any }[]>`
      select type, data from case_events where scenario_id = ${scenario.id} and type = 'evaluation.status' order by seq`
    expect(events.map((e) => e.data.message)).toEqual(['queued', 'answered 0 of 6', ...[1, 2, 3, 4, 5, 6].map((k) => `answered ${k} of 6`), 'answered 6 of 6'])
    expect(events.map((e) => e.data.status)).toEqual(['queued', 'running', 'running', 'running', 'running', 'running', 'running', 'running', 'succeeded'])
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}`, { token: key })).body.status).toBe('evaluated')

    const [env] = await envelopesOf(app, key, 'evaluation_run', r.body.id)
    expect(env).toMatchObject({ event_type: 'task.completed', task_kind: 'evaluation_run', task_id: r.body.id, outcome: { status: 'succeeded', summary: 'evaluation completed, review answers and decision', error_code: null } })
    expect(env.links.resource).toEndWith(`/v1/scenarios/${scenario.id}/evaluations/${r.body.id}`)
  })

  test('changing one fact flips the decision: revenue below the floor declines, a low balance refers', async () => {
    const { key } = await workspace()
    await publishedSet(app, key)
    const low = await caseWith(app, key, await packFiles({ ...DEFAULT_FACTS, annualRevenue: '950,000.00' }))
    const e1 = await evaluate(key, low.scenario.id)
    expect((await evaluationEnded(app, key, low.scenario.id, e1.body.id)).status).toBe('succeeded')
    const d1 = await call(app.url, 'GET', `/v1/scenarios/${low.scenario.id}/decision`, { token: key })
    expect(d1.body).toMatchObject({ outcome: 'decline', final_outcome: 'decline', reasons: [{ question_key: 'annual_revenue', criticality: 'critical', finding: 'rule_failed', effect: 'decline' }] })
    expect(d1.body.reasons).toHaveLength(1)
    const a1 = await call(app.url, 'GET', `/v1/scenarios/${low.scenario.id}/answers`, { token: key })
    expect(a1.body.items[0]).toMatchObject({ question_key: 'annual_revenue', value: '950000.00', accepted: false })

    const dip = await caseWith(app, key, await packFiles({ ...DEFAULT_FACTS, minBalanceRow: '2024-01-28,Payroll,-52000.00,8700.50' }))
    const e2 = await evaluate(key, dip.scenario.id)
    await evaluationEnded(app, key, dip.scenario.id, e2.body.id)
    const d2 = await call(app.url, 'GET', `/v1/scenarios/${dip.scenario.id}/decision`, { token: key })
    expect(d2.body).toMatchObject({ outcome: 'refer', reasons: [{ question_key: 'min_balance', criticality: 'major', finding: 'rule_failed', effect: 'refer' }] })
  })

  test('a critical question without its fact refers; ?evaluation_id= reads an older evaluation', async () => {
    const { key } = await workspace()
    const { set } = await publishedSet(app, key, [
      { key: 'credit_score', text: 'What is the credit score?', criticality: 'critical', answer_type: 'number', fact_path: 'credit_score', accept: 'value >= 650' },
      { key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000' },
    ])
    const { scenario } = await caseWith(app, key, await packFiles())
    const first = await evaluate(key, scenario.id)
    await evaluationEnded(app, key, scenario.id, first.body.id)
    const d = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/decision`, { token: key })
    expect(d.body).toMatchObject({ outcome: 'refer', reasons: [{ question_key: 'credit_score', finding: 'not_found', effect: 'refer' }] })
    const a = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })
    expect(a.body.items[0]).toEqual(expect.objectContaining({ question_key: 'credit_score', status: 'not_found', value: null, confidence: 0, evidence_ids: [], note: 'no fact credit_score in the documents' }))
    expect('accepted' in a.body.items[0]).toBe(false)

    // A second evaluation with the set named explicitly; the first stays readable by id.
    const second = await evaluate(key, scenario.id, { question_set_id: set.id })
    await evaluationEnded(app, key, scenario.id, second.body.id)
    const latest = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })
    expect(latest.body.items[0].evaluation_id).toBe(second.body.id)
    const older = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers?evaluation_id=${first.body.id}`, { token: key })
    expect(older.body.items[0].evaluation_id).toBe(first.body.id)
    expect(older.body.items.map((x: any) => x.value)).toEqual(latest.body.items.map((x: any) => x.value))
    const list = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations`, { token: key })
    expect(list.body.items.map((e: any) => e.id)).toEqual([second.body.id, first.body.id])
    expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers?evaluation_id=nope`, { token: key })).status).toBe(400)
    expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers?evaluation_id=${crypto.randomUUID()}`, { token: key })).status).toBe(404)
  })

  test('409 conflict when no published version exists for the case vertical; the named set must exist', async () => {
    const { key } = await workspace()
    const { scenario } = await caseWith(app, key, [])
    const none = await evaluate(key, scenario.id)
    expect(problemOf(none)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    // A draft is not enough; a set published for another vertical is not the case's.
    const s = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'draft only' } })
    await call(app.url, 'POST', `/v1/question-sets/${s.body.id}/versions`, { token: key, body: { questions: PACK_QUESTIONS } })
    await publishedSet(app, key, PACK_QUESTIONS, { name: 'mortgage', vertical: 'mortgage' })
    expect((await evaluate(key, scenario.id)).status).toBe(409)
    expect((await evaluate(key, scenario.id, { question_set_id: s.body.id })).status).toBe(409)
    const unknown = await evaluate(key, scenario.id, { question_set_id: crypto.randomUUID() })
    expect(problemOf(unknown)).toMatchObject({ status: 422 })
    expect(problemOf(unknown).errors).toBeUndefined()
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}`, { token: key })).body.status).toBe('created')
    expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/decision`, { token: key })).status).toBe(404)
    // A case of the mortgage vertical pins the mortgage set.
    const m = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'home', vertical: 'mortgage' } })
    expect((await evaluate(key, m.body.id)).status).toBe(202)
  })

  test("a workspace's default vertical: a case and a question set created without one follow it, and evaluate pins that vertical's newest published version", async () => {
    const { tenant, key } = await workspace()
    const settingsKey = await app.apiKey(tenant.id, ['settings:write'])
    const bind = async (body: object) => expect((await call(app.url, 'PUT', '/v1/tenant-settings', { token: settingsKey, body })).status).toBe(200)
    const shipped = await publishedSet(app, key, PACK_QUESTIONS, { name: 'general' })
    await bind({ vertical: 'mortgage' })
    const mortgage = await publishedSet(app, key, PACK_QUESTIONS, { name: 'home loans' })
    expect(mortgage.set.vertical).toBe('mortgage')
    const { scenario } = await caseWith(app, key, [])
    expect(scenario.vertical).toBe('mortgage')
    const e = await evaluate(key, scenario.id)
    expect(e.status).toBe(202)
    expect(e.body).toMatchObject({ question_set_id: mortgage.set.id, question_set_version_id: mortgage.version.id })
    // A newer published version of the mortgage set is the one a later evaluation pins.
    const v2 = await publishVersion(app, key, mortgage.set.id, PACK_QUESTIONS.slice(0, 3))
    await evaluationEnded(app, key, scenario.id, e.body.id)
    expect((await evaluate(key, scenario.id)).body).toMatchObject({ question_set_id: mortgage.set.id, question_set_version_id: v2.id })
    // Back on the shipped default, a new case pins the general set; the earlier case keeps its vertical.
    await bind({})
    const { scenario: general } = await caseWith(app, key, [])
    expect('vertical' in general).toBe(false)
    expect((await evaluate(key, general.id)).body).toMatchObject({ question_set_id: shipped.set.id, question_set_version_id: shipped.version.id })
  })

  test('evaluate is idempotent with Idempotency-Key: the same evaluation, one job', async () => {
    const { key } = await workspace()
    await publishedSet(app, key)
    const { scenario } = await caseWith(app, key, [])
    const headers = { 'idempotency-key': `eval-${scenario.id}` }
    const a = await evaluate(key, scenario.id, undefined, headers)
    const b = await evaluate(key, scenario.id, undefined, headers)
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(b.body).toEqual(a.body)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(b.headers.get('location')).toBe(a.headers.get('location'))
    const other = await evaluate(key, scenario.id, { question_set_id: crypto.randomUUID() }, headers)
    expect(problemOf(other).type).toBe('urn:svc:error:idempotency_conflict')
    await evaluationEnded(app, key, scenario.id, a.body.id)
    const list = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations`, { token: key })
    expect(list.body.items.map((e: any) => e.id)).toEqual([a.body.id])
  })

  test('evaluate is in the run-starting rate class (429 with Retry-After past the burst)', async () => {
    const { key } = await workspace()
    await publishedSet(app, key)
    const { scenario } = await caseWith(app, key, [])
    for (let i = 0; i < 5; i++) expect((await evaluate(key, scenario.id)).status).toBe(202)
    const refused = await evaluate(key, scenario.id)
    expect(problemOf(refused)).toMatchObject({ type: 'urn:svc:error:rate_limited', status: 429 })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  test('access: a read key cannot evaluate; another workspace sees 404', async () => {
    const { tenant, key } = await workspace()
    await publishedSet(app, key)
    const { scenario } = await caseWith(app, key, [])
    const reader = await app.apiKey(tenant.id, ['scenarios:read'])
    expect(problemOf(await evaluate(reader, scenario.id)).status).toBe(403)
    const e = await evaluate(key, scenario.id)
    await evaluationEnded(app, key, scenario.id, e.body.id)
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}`, { token: reader })).status).toBe(200)
    const other = await workspace()
    expect((await evaluate(other.key, scenario.id)).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}`, { token: other.key })).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: other.key })).status).toBe(404)
  })
})
