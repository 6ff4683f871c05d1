import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { caseWith, evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { bankStatementPdf } from '../helpers/underwriting-file'

setDefaultTimeout(120_000)

let app: TestApp
beforeAll(async () => { app = await startApp() })
afterAll(() => app.stop())

const QUESTIONS = [
  { key: 'closing', text: 'What is the closing balance?', criticality: 'major', answer_type: 'number', fact_path: 'bank_statement.closing_balance', accept: 'value >= 10000' },
  { key: 'closing_text', text: 'What is the closing balance of the statement?', criticality: 'minor', answer_type: 'text' },
]

async function evaluated(closingBalance: string) {
  const t = await app.tenant()
  const key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write'])
  const statement = await bankStatementPdf({ closingBalance })
  const { scenario, docs } = await caseWith(app, key, [statement])
  await publishedSet(app, key, QUESTIONS, { name: 'Checks' })
  const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
  expect((await evaluationEnded(app, key, scenario.id, e.body.id)).status).toBe('succeeded')
  const a = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/answers`, { token: key })
  return { doc: docs[statement.filename], filename: statement.filename, answers: Object.fromEntries(a.body.items.map((x: any) => [x.question_key, x])) }
}

describe('a statement whose figures do not add up', () => {
  test('a sound statement passes its check; its answers are as sure as ever', async () => {
    const { doc, answers } = await evaluated('37,700.50')
    expect(doc.document_type).toBe('bank_statement')
    expect(doc.checks).toEqual([expect.objectContaining({ name: 'balance_reconciles', passed: true, difference: '0.00' })])
    expect(answers.closing).toMatchObject({ status: 'answered', value: '37700.50', confidence: 1, accepted: true })
    expect(answers.closing.note).toBeUndefined()
    expect(answers.closing_text).toMatchObject({ status: 'answered', value: '37,700.50' })
    expect(answers.closing_text.confidence).toBeGreaterThan(0.5)
  })

  test('closing balance off by 0.01: the check fails and is recorded; every answer drawn from it says so, below 0.5', async () => {
    const { doc, filename, answers } = await evaluated('37,700.51')
    expect(doc.checks).toEqual([{
      name: 'balance_reconciles', passed: false, rule: 'opening balance + credits - debits = closing balance',
      expected: '37700.50', found: '37700.51', difference: '0.01', page: 1, block_id: expect.any(String),
      detail: 'opening balance 48,200.00 + credits 20,500.50 - debits 31,000.00 = 37,700.50, but the document states 37,700.51 (off by 0.01)',
    }])
    for (const a of [answers.closing, answers.closing_text]) {
      expect(a.status).toBe('answered')
      expect(a.confidence).toBeLessThanOrEqual(0.49)
      expect(a.note).toContain(`${filename} fails its balance_reconciles check`)
      expect(a.note).toContain('off by 0.01')
    }
    expect(answers.closing.value).toBe('37700.51') // the value stays what the document states
  })
})
