import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { caseWith } from '../helpers/underwriting-pack'
import { underwritingFile } from '../helpers/underwriting-file'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(120_000)

let app: TestApp
beforeAll(async () => { app = await startApp() })
afterAll(() => app.stop())

describe('document types from content, not file names', () => {
  test('nine documents under random file names each get the right type, with a confidence, on the document resource', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write'])
    const file = await underwritingFile()
    const names = file.map((f) => f.file.filename)
    expect(names.every((n) => !/statement|stub|tax|passport|rent|loss|application|declaration/i.test(n))).toBe(true)
    const { scenario, docs } = await caseWith(app, key, file.map((f) => f.file))
    for (const { file: f, type } of file) {
      const doc = docs[f.filename]
      expect({ name: f.filename, type: doc.document_type }).toEqual({ name: f.filename, type })
      expect(doc.document_type_confidence).toBeGreaterThanOrEqual(0.5)
      expect(doc.document_type_confidence).toBeLessThanOrEqual(1)
    }
    // The list shows the same fields; the bank statement, pay stub and tables carry their checks, all passed.
    const list = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/documents?limit=50`, { token: key })
    const byType = Object.fromEntries(list.body.items.map((d: any) => [d.document_type, d]))
    expect(Object.keys(byType).sort()).toEqual(file.map((f) => f.type).sort())
    expect(byType.bank_statement.checks).toEqual([expect.objectContaining({ name: 'balance_reconciles', passed: true, expected: '37700.50', found: '37700.50', difference: '0.00' })])
    expect(byType.pay_stub.checks).toEqual([expect.objectContaining({ name: 'net_pay', passed: true, expected: '3850.00' })])
    expect(byType.loss_run.checks.map((c: any) => [c.rule, c.passed])).toEqual([
      ['the rows of claims add up to the total row', true], ['the rows of incurred add up to the total row', true],
      ['the rows of paid add up to the total row', true], ['the rows of reserve add up to the total row', true],
    ])
    expect(byType.rent_roll.checks).toEqual([expect.objectContaining({ name: 'rows_add_to_total', passed: true, found: '12800.00' })])
    expect(byType.application_form.checks).toEqual([])
  })
})
