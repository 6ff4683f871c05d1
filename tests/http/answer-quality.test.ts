/**
 * Answer quality over a whole underwriting file (issue 27): 44 questions across nine documents of
 * nine types under meaningless file names, half with a fact_path and half free text, each with its
 * known answer or "not in the file". The built-in engine's answers are graded: answers given with
 * confidence >= 0.8 must be right at least 95% of the time, no "not in the file" question may be
 * answered above 0.5, and table-row and synonym questions must cite the right row or line.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { caseWith, evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { QUESTIONS, underwritingFile, type Graded } from '../helpers/underwriting-file'

setDefaultTimeout(120_000)

let app: TestApp
let key: string
let scenarioId: string
let answers: Map<string, any>
let evidence: Map<string, any[]>

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'settings:write'])
  const file = await underwritingFile()
  const { scenario } = await caseWith(app, key, file.map((f) => f.file))
  scenarioId = scenario.id
  await publishedSet(app, key, QUESTIONS.map(({ expect: _, kind: __, ...q }) => ({ ...q, criticality: 'minor' })), { name: 'Quality' })
  const e = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key })
  expect((await evaluationEnded(app, key, scenarioId, e.body.id)).status).toBe('succeeded')
  const a = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/answers?limit=100`, { token: key })
  const ev = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/evidence?limit=200`, { token: key })
  answers = new Map(a.body.items.map((x: any) => [x.question_key, x]))
  evidence = new Map()
  for (const x of ev.body.items) evidence.set(x.question_key, [...(evidence.get(x.question_key) ?? []), x])
})
afterAll(() => app.stop())

const norm = (v: unknown) => String(v).toLowerCase().replace(/\s+/g, ' ').trim()
/** Whether an answer is right: the expected value (contained, for a free-text answer), or nothing for "absent". */
function right(q: Graded, a: any): boolean {
  if (q.expect === 'absent') return a.status === 'not_found' || a.confidence <= 0.5
  if (a.status !== 'answered') return false
  return q.fact_path ? a.value === q.expect.value : norm(a.value).includes(norm(q.expect.value))
}

describe('answer quality over a whole file', () => {
  test('44 questions over 9 document types, half fact paths and half free text', () => {
    expect(QUESTIONS.length).toBeGreaterThanOrEqual(40)
    expect(QUESTIONS.filter((q) => q.fact_path).length).toBe(22)
    expect(answers.size).toBe(QUESTIONS.length)
  })

  test('answers given with confidence >= 0.8 are right at least 95% of the time; no "not in the file" question above 0.5', () => {
    const report = QUESTIONS.map((q) => { const a = answers.get(q.key); return { key: q.key, status: a.status, value: a.value, confidence: a.confidence, right: right(q, a) } })
    const confident = report.filter((r) => r.confidence >= 0.8)
    const precision = confident.filter((r) => r.right).length / confident.length
    console.log(`confident answers: ${confident.length} of ${report.length}, precision ${precision.toFixed(3)}; right overall: ${report.filter((r) => r.right).length}`)
    for (const r of report.filter((x) => !x.right)) console.log(`  wrong: ${JSON.stringify(r)}`)
    expect(confident.length).toBeGreaterThanOrEqual(25)
    expect(precision).toBeGreaterThanOrEqual(0.95)
    for (const q of QUESTIONS.filter((x) => x.expect === 'absent')) {
      const a = answers.get(q.key)
      expect({ key: q.key, high: a.status === 'answered' && a.confidence > 0.5 }).toEqual({ key: q.key, high: false })
    }
  })

  test('table-row and synonym questions cite the right row or line', () => {
    for (const q of QUESTIONS.filter((x) => x.kind)) {
      const a = answers.get(q.key)
      expect({ key: q.key, value: a.value, confidence: a.confidence }).toEqual({ key: q.key, value: (q.expect as any).value, confidence: 1 })
      const quote = (q.expect as any).quote
      if (quote) expect({ key: q.key, quote: evidence.get(q.key)?.[0]?.quote }).toEqual({ key: q.key, quote })
    }
  })

  test('the text answers quote the line the value is on', () => {
    for (const q of QUESTIONS.filter((x) => !x.fact_path && x.expect !== 'absent' && (x.expect as any).quote)) {
      expect({ key: q.key, quote: evidence.get(q.key)?.[0]?.quote }).toEqual({ key: q.key, quote: (q.expect as any).quote })
    }
  })

  test('a bad fact path is refused when the version is created, with a pointer', async () => {
    const set = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'Bad paths' } })
    const v = await call(app.url, 'POST', `/v1/question-sets/${set.body.id}/versions`, { token: key, body: { questions: [
      { key: 'ok', text: 'ok', criticality: 'minor', answer_type: 'number', fact_path: 'loss_run.claims[policy_year=2024]' },
      { key: 'bad', text: 'bad', criticality: 'minor', answer_type: 'number', fact_path: 'loss_run.claims[policy_year]' },
    ] } })
    expect(v.status).toBe(422)
    expect(problemOf(v).errors).toEqual([{ pointer: '/questions/1/fact_path', message: 'a row selector is [column=value] (at column 17)' }])
  })

  test("a workspace's synonym edits (tenant settings) name a figure by its own label", async () => {
    const bad = await call(app.url, 'PUT', '/v1/tenant-settings', { token: key, body: { label_synonyms: { annual_revenue: ['Gross Revenue'] } } })
    expect(bad.status).toBe(422)
    expect(problemOf(bad).errors?.[0]?.pointer).toMatch(/^\/label_synonyms/)
    const put = await call(app.url, 'PUT', '/v1/tenant-settings', { token: key, body: { label_synonyms: { employee_name: ['employee'], annual_revenue: [] } } })
    expect(put.status).toBe(200)
    expect(put.body.label_synonyms).toEqual({ employee_name: ['employee'], annual_revenue: [] })
    const { version } = await publishedSet(app, key, [
      { key: 'employee', text: 'Employee', criticality: 'minor', answer_type: 'text', fact_path: 'employee_name' },
      { key: 'revenue', text: 'Revenue', criticality: 'minor', answer_type: 'number', fact_path: 'annual_revenue' },
    ], { name: 'Edited synonyms' })
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key, body: { question_set_version_id: version.id } })
    expect(e.status).toBe(202)
    expect((await evaluationEnded(app, key, scenarioId, e.body.id)).status).toBe('succeeded')
    const a = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/answers?evaluation_id=${e.body.id}`, { token: key })
    const by = Object.fromEntries(a.body.items.map((x: any) => [x.question_key, x]))
    expect(by.employee).toMatchObject({ status: 'answered', value: 'Jane Smith' })
    expect(by.revenue).toMatchObject({ status: 'not_found' }) // the built-in group was removed for this workspace
  })
})
