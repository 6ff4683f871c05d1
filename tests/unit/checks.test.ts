import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { runChecks } from '../../server/evaluation/checks'
import type { CaseBlock } from '../../server/evaluation/facts'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const doc = (kind: string, texts: string[]): CaseBlock[] => texts.map((text, i) => ({ id: `b${i}`, documentId: 'd', filename: 'scan.pdf', contentType: 'application/pdf', order: i, page: 1 + Math.floor(i / 3), kind, text }))

describe('figures that check themselves', () => {
  test('a bank statement reconciles; one cent off fails, by how much, at the closing line', () => {
    const lines = (closing: string) => doc('paragraph', [`Opening balance: 1,000.00\nTotal deposits: 250.25\nTotal withdrawals: -100.00\nEnding balance: ${closing}`])
    expect(runChecks('bank_statement', lines('1,150.25'))).toEqual([{
      name: 'balance_reconciles', passed: true, rule: 'opening balance + credits - debits = closing balance', expected: '1150.25', found: '1150.25', difference: '0.00', page: 1, block_id: 'b0',
      detail: 'opening balance 1,000.00 + credits 250.25 - debits 100.00 = 1,150.25, as stated',
    }])
    const [off] = runChecks('bank_statement', lines('1,150.26'))
    expect(off).toMatchObject({ passed: false, expected: '1150.25', found: '1150.26', difference: '0.01' })
    expect(off!.detail).toBe('opening balance 1,000.00 + credits 250.25 - debits 100.00 = 1,150.25, but the document states 1,150.26 (off by 0.01)')
  })

  test('running balances: amount column, or credit and debit columns; the first wrong row is named', () => {
    const ok = doc('table_row', ['Date | Description | Amount | Balance', '2024-01-02 | Opening | 0.00 | 500.00', '2024-01-03 | Payment in | 120.50 | 620.50', '2024-01-04 | Rent | -300.00 | 320.50'])
    expect(runChecks('bank_statement', ok)).toEqual([expect.objectContaining({ name: 'running_balance', passed: true, detail: '2 rows: each balance follows from the previous one' })])
    const bad = doc('table_row', ['Date | Credit | Debit | Balance', ...[['2024-01-02', '', '', '500.00'], ['2024-01-03', '120.50', '', '620.50'], ['2024-01-04', '', '300.00', '320.49'], ['2024-01-05', '10.00', '', '330.49']].map((c) => c.join(' | '))])
    const [r] = runChecks('bank_statement', bad)
    expect(r).toMatchObject({ name: 'running_balance', passed: false, expected: '320.50', found: '320.49', difference: '-0.01', block_id: 'b3', page: 2 })
    expect(r!.detail).toBe('row on page 2: previous balance 620.50 + -300.00 = 320.50, but the document states 320.49 (off by 0.01)')
  })

  test('rent roll and loss run rows add up to their total row; a pay stub nets out', () => {
    const roll = doc('table_row', ['Unit | Tenant | Monthly rent', '1A | Bistro | 4,500.00', '1B | Print | 3,200.00', ['Total', '', '7,700.01'].join(' | ')])
    expect(runChecks('rent_roll', roll)).toEqual([expect.objectContaining({ name: 'rows_add_to_total', passed: false, rule: 'the rows of monthly_rent add up to the total row', expected: '7700.00', found: '7700.01', block_id: 'b3' })])
    const run = doc('table_row', ['Policy year | Claims | Incurred', '2023 | 1 | 10.00', '2024 | 2 | 5.50', 'Total | 3 | 15.50'])
    expect(runChecks('loss_run', run).map((c) => c.passed)).toEqual([true, true])
    const stub = doc('paragraph', ['Gross pay: 5,000.00\nTotal deductions: 1,150.00\nNet pay: 3,850.00'])
    expect(runChecks('pay_stub', stub)).toEqual([expect.objectContaining({ name: 'net_pay', passed: true })])
    expect(runChecks('pay_stub', doc('paragraph', ['Gross pay: 5,000.00\nNet pay: 3,850.00']))).toEqual([]) // a figure missing: not run
    expect(runChecks('application_form', stub)).toEqual([])
  })
})
