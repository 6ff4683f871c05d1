import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { factPathProblem, parseFactPath } from '../../server/evaluation/fact-path'
import { buildCaseContext, builtinEngine, type Question } from '../../server/evaluation/engine'
import type { CaseBlock } from '../../server/evaluation/facts'
import { synonymTable } from '../../server/evaluation/synonyms'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

describe('the fact language', () => {
  test('names, dotted paths, alternatives and row selectors parse', () => {
    expect(parseFactPath('annual_revenue')).toEqual([{ path: 'annual_revenue' }])
    expect(parseFactPath('bank_statement.balance.min')).toEqual([{ path: 'bank_statement.balance.min' }])
    expect(parseFactPath('annual_revenue|gross_revenue|total_sales').map((a) => a.path)).toEqual(['annual_revenue', 'gross_revenue', 'total_sales'])
    expect(parseFactPath('loss_run.claims[policy_year=2024]')).toEqual([{ path: 'loss_run.claims', row: { column: 'policy_year', value: '2024' } }])
    expect(parseFactPath("rent_roll.monthly_rent[unit='4B']|rent[unit=4b]")).toEqual([
      { path: 'rent_roll.monthly_rent', row: { column: 'unit', value: '4B' } }, { path: 'rent', row: { column: 'unit', value: '4b' } },
    ])
    expect(parseFactPath('loss_run.incurred[period=a|b]')).toEqual([{ path: 'loss_run.incurred', row: { column: 'period', value: 'a|b' } }])
  })

  test('problems name what is wrong and the column', () => {
    expect(factPathProblem('Annual Revenue')).toBe('"Annual Revenue" is not a name (lower-case a-z, 0-9 and _) (at column 1)')
    expect(factPathProblem('a..b')).toBe('expected a name (a-z, 0-9, _) between dots (at column 3)')
    expect(factPathProblem('a|')).toBe('expected a fact name (at column 3)')
    expect(factPathProblem('claims[policy_year]')).toBe('a row selector is [column=value] (at column 8)')
    expect(factPathProblem('claims[policy_year=]')).toBe('a row selector needs a value after "=" (at column 20)')
    expect(factPathProblem('claims[policy_year=2024')).toContain('ends the alternative with "]"')
    expect(factPathProblem('claims[Policy Year=2024]')).toContain('is not a column name')
    expect(factPathProblem(Array.from({ length: 11 }, (_, i) => `f${i}`).join('|'))).toContain('at most 10 alternatives')
    expect(factPathProblem('loss_run.claims[policy_year=2024]')).toBeNull()
  })
})

// A loss run (a table: header, rows, total row) and an application form, as a case's blocks.
const rows = ['Policy year | Claims | Incurred | Valued', '2022 | 1 | 4,000.00 | 2023-01-31', '2023 | 0 | 0.00 | 2024-01-31', '2024 | 3 | 18,250.00 | 2025-01-31', 'Total | 4 | 22,250.00 |']
const blocks: CaseBlock[] = [
  ...rows.map((text, i) => ({ id: `r${i}`, documentId: 'd1', filename: 'scan0001.pdf', contentType: 'application/pdf', order: i, page: 2, kind: 'table_row', text, documentType: 'loss_run' })),
  { id: 'f0', documentId: 'd2', filename: 'Document (3).pdf', contentType: 'application/pdf', order: 10, page: 1, kind: 'paragraph', text: 'Applicant: Acme Holdings LLC\nGross revenue (FY2025): 2,400,000.00', documentType: 'application_form' },
]
const context = buildCaseContext(blocks)
const ask = (fact_path: string, answer_type: Question['answer_type'] = 'number') => builtinEngine.answer({ key: 'q', text: 'q', criticality: 'minor', answer_type, fact_path }, context)

describe('table rows in the fact language', () => {
  test('a cell by its row: the value of the cell, the row as evidence', async () => {
    const a = await ask('loss_run.claims[policy_year=2024]')
    expect(a).toMatchObject({ status: 'answered', value: '3', confidence: 1, evidence: [{ documentId: 'd1', blockId: 'r3', page: 2, quote: '2024 | 3 | 18,250.00 | 2025-01-31' }] })
    expect((await ask('loss_run.incurred[policy_year=2022]')).value).toBe('4000.00')
    expect((await ask('claims[policy_year=2023]')).value).toBe('0')
  })

  test('the row key matches as text (any case), as a number and as a date', async () => {
    expect((await ask('loss_run.claims[policy_year=2024.0]')).evidence[0]!.blockId).toBe('r3')
    expect((await ask('loss_run.claims[valued=January 31, 2024]')).evidence[0]!.blockId).toBe('r2')
    expect((await ask('loss_run.claims[policy_year=total]')).value).toBe('4')
  })

  test('a row that is not there, or another document\'s namespace, is not found; the next alternative answers', async () => {
    expect((await ask('loss_run.claims[policy_year=2019]')).status).toBe('not_found')
    expect((await ask('bank_statement.claims[policy_year=2024]')).status).toBe('not_found')
    expect((await ask('loss_run.claims[policy_year=2019]|loss_run.claims[policy_year=2022]')).value).toBe('1')
  })

  test('the document type is a namespace beside the file name; a parenthesis in a label is optional', async () => {
    expect((await ask('scan0001.claims.sum')).value).toBe('4')
    expect((await ask('loss_run.claims.sum')).value).toBe('4')
    expect((await ask('application_form.gross_revenue')).value).toBe('2400000.00')
    expect((await ask('gross_revenue_fy2025')).value).toBe('2400000.00')
  })
})

describe('label synonyms', () => {
  const form: CaseBlock[] = [{ id: 's0', documentId: 'd3', filename: 'IMG_4411.pdf', contentType: 'application/pdf', order: 0, page: 1, kind: 'paragraph', text: 'Total sales: 880,000.00\nDOB: 1980-05-14\nTurnover (EUR): 700,000.00', documentType: 'application_form' }]
  const ask = async (fact_path: string, synonyms: Record<string, string[]> = {}, answer_type: Question['answer_type'] = 'number') =>
    builtinEngine.answer({ key: 'q', text: 'q', criticality: 'minor', answer_type, fact_path }, buildCaseContext(form, { synonyms: synonymTable(synonyms) }))

  test('the built-in table finds a figure under another name; the path\'s own name comes first', async () => {
    expect(await ask('annual_revenue')).toMatchObject({ value: '880000.00', evidence: [{ quote: 'Total sales: 880,000.00' }] })
    expect(await ask('date_of_birth', {}, 'date')).toMatchObject({ value: '1980-05-14', evidence: [{ quote: 'DOB: 1980-05-14' }] })
    expect(await ask('application_form.gross_revenue')).toMatchObject({ value: '880000.00' })
    expect((await ask('turnover')).value).toBe('700000.00')
  })

  test('a list names alternatives in order; a workspace edit replaces or removes a built-in group', async () => {
    expect((await ask('net_income|annual_revenue')).value).toBe('880000.00')
    expect((await ask('annual_revenue', { annual_revenue: ['turnover'] })).value).toBe('700000.00')
    expect((await ask('annual_revenue', { annual_revenue: [] })).status).toBe('not_found')
  })

  test('the table maps every name of a group to the others', () => {
    const t = synonymTable()
    expect(t.get('gross_revenue')).toContain('annual_revenue')
    expect(t.get('annual_revenue')).toContain('total_sales')
    expect(synonymTable({ premium: [] }).get('total_premium')).toBeUndefined()
  })
})
