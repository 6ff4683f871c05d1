import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { documentNamespace, indexFacts, labelValue, mineFacts, slug, type CaseBlock } from '../../server/evaluation/facts'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let n = 0
const block = (documentId: string, filename: string, contentType: string, kind: string, text: string, page = 1): CaseBlock =>
  ({ id: `b${++n}`, documentId, filename, contentType, order: n, page, kind, text })

describe('fact mining', () => {
  const form = [
    block('d1', 'application_form.pdf', 'application/pdf', 'page_text', 'Business Loan Application\nApplicant: Acme Holdings LLC\nAnnual revenue: 1,250,000.00\nYears in business: 12 years', 1),
    block('d1', 'application_form.pdf', 'application/pdf', 'page_text', 'Date of incorporation: March 3, 2012\nPrior bankruptcy: No\nWebsite: https://acme.example', 2),
  ]
  const csv = [
    block('d2', 'bank_statement.csv', 'text/csv', 'table_row', 'Date | Description | Amount | Balance'),
    block('d2', 'bank_statement.csv', 'text/csv', 'table_row', '2024-01-02 | Opening balance | 0.00 | 48,200.00'),
    block('d2', 'bank_statement.csv', 'text/csv', 'table_row', '2024-01-15 | Customer payment | 12,500.50 | 60,700.50'),
    block('d2', 'bank_statement.csv', 'text/csv', 'table_row', '2024-01-28 | Payroll | -31,000.00 | 29,700.50'),
  ]
  const letter = [
    block('d3', 'letter.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'paragraph', 'Dear underwriter, we confirm the facility.'),
    block('d3', 'letter.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'table_row', 'Outstanding litigation | None'),
    block('d3', 'letter.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'table_row', 'Debt service coverage | 1.45'),
  ]
  const blocks = [...form, ...csv, ...letter]
  const facts = mineFacts(blocks)
  const index = indexFacts(blocks, facts)

  test('numbers that read both ways (1.500, 1,500) take the decimal mark the document\'s own figures show', () => {
    const german = [
      block('g1', 'angebot.pdf', 'application/pdf', 'page_text', 'Jahresumsatz: 1.234.567,00\nSelbstbehalt: 1.500\nZinssatz: 2,500\nPraemie: EUR 2.400'),
    ]
    const english = [
      block('e1', 'quote.pdf', 'application/pdf', 'page_text', 'Annual revenue: 1,234,567.00\nDeductible: 1,500\nRate: 1.500\nPremium: EUR 2.400'),
    ]
    const both = [block('m1', 'mixed.pdf', 'application/pdf', 'page_text', 'A: 1.234,50\nB: 1,234.50\nC: 1.500')]
    const ix = indexFacts([...german, ...english, ...both], mineFacts([...german, ...english, ...both]))
    expect(ix.lookup('angebot.selbstbehalt')!.value).toEqual({ type: 'number', value: '1500' })
    expect(ix.lookup('angebot.zinssatz')!.value).toEqual({ type: 'number', value: '2.500' })
    expect(ix.lookup('angebot.praemie')!.value).toEqual({ type: 'number', value: '2400', unit: 'EUR' })
    expect(ix.lookup('quote.deductible')!.value).toEqual({ type: 'number', value: '1500' })
    expect(ix.lookup('quote.rate')!.value).toEqual({ type: 'number', value: '1.500' })
    // Money with three digits after a dot, in a document that shows no decimal comma: no number.
    expect(ix.lookup('quote.premium')!.value).toEqual({ type: 'text', value: 'EUR 2.400' })
    // A document that writes both ways gives the English reading.
    expect(ix.lookup('mixed.c')!.value).toEqual({ type: 'number', value: '1.500' })
  })

  test('a column of two currencies has no sum, minimum or maximum; one currency shown on some rows only is one column', () => {
    const mixed = [
      block('d9', 'schedule.csv', 'text/csv', 'table_row', 'Location | Sum insured'),
      block('d9', 'schedule.csv', 'text/csv', 'table_row', 'London | GBP 1,000,000'),
      block('d9', 'schedule.csv', 'text/csv', 'table_row', 'Paris | EUR 2,000,000'),
    ]
    const byCurrency = indexFacts(mixed, mineFacts(mixed))
    expect(byCurrency.lookup('schedule.sum_insured.sum')).toBeUndefined()
    expect(byCurrency.lookup('schedule.sum_insured.max')).toBeUndefined()
    expect(byCurrency.lookup('schedule.sum_insured.count')!.value).toEqual({ type: 'number', value: '2' })
    const accounts = [
      block('d8', 'accounts.csv', 'text/csv', 'table_row', 'Item | Amount'),
      block('d8', 'accounts.csv', 'text/csv', 'table_row', 'Rent | $ 1,250.00'),
      block('d8', 'accounts.csv', 'text/csv', 'table_row', 'Fees | 500.00'),
    ]
    expect(indexFacts(accounts, mineFacts(accounts)).lookup('accounts.amount.sum')!.value).toEqual({ type: 'number', value: '1750.00', unit: 'USD' })
  })

  test('"Label: value" lines become typed facts with their block, page and line', () => {
    expect(index.lookup('annual_revenue')).toEqual({
      path: 'annual_revenue', value: { type: 'number', value: '1250000.00' }, raw: '1,250,000.00',
      blockId: form[0]!.id, documentId: 'd1', page: 1, quote: 'Annual revenue: 1,250,000.00',
    })
    expect(index.lookup('applicant')!.value).toEqual({ type: 'text', value: 'Acme Holdings LLC' })
    expect(index.lookup('years_in_business')!.value).toEqual({ type: 'number', value: '12', unit: 'years' })
    expect(index.lookup('date_of_incorporation')).toMatchObject({ value: { type: 'date', value: '2012-03-03' }, page: 2 })
    expect(index.lookup('prior_bankruptcy')!.value).toEqual({ type: 'boolean', value: false })
    expect(index.lookup('website')!.value).toEqual({ type: 'text', value: 'https://acme.example' })
    expect(index.lookup('application_form.annual_revenue')).toBe(index.lookup('annual_revenue')!)
  })

  test('CSV columns give first, last, count, min, max and an exact sum', () => {
    expect(index.lookup('balance.last')).toMatchObject({ value: { type: 'number', value: '29700.50' }, blockId: csv[3]!.id, quote: csv[3]!.text })
    expect(index.lookup('balance.min')!.value.value).toBe('29700.50')
    expect(index.lookup('balance.max')).toMatchObject({ value: { value: '60700.50' }, blockId: csv[2]!.id })
    expect(index.lookup('amount.sum')).toMatchObject({ value: { type: 'number', value: '-18499.50' }, blockId: csv[0]!.id, quote: csv[0]!.text })
    expect(index.lookup('amount.min')!.value.value).toBe('-31000.00')
    expect(index.lookup('date.min')!.value).toEqual({ type: 'date', value: '2024-01-02' })
    expect(index.lookup('date.max')!.value).toEqual({ type: 'date', value: '2024-01-28' })
    expect(index.lookup('description.count')!.value).toEqual({ type: 'number', value: '3' })
    expect(index.lookup('description.first')!.value).toEqual({ type: 'text', value: 'Opening balance' })
    expect(index.lookup('description.min')).toBeUndefined()
    expect(index.lookup('bank_statement.balance.last')).toBe(index.lookup('balance.last')!)
  })

  test('two-cell table rows outside CSV are key/value facts', () => {
    expect(index.lookup('outstanding_litigation')).toMatchObject({ value: { type: 'boolean', value: false }, documentId: 'd3', quote: 'Outstanding litigation | None' })
    expect(index.lookup('letter.debt_service_coverage')!.value).toEqual({ type: 'number', value: '1.45' })
  })

  test('the first fact in document order answers a shared path', () => {
    const a = block('x1', 'a.txt', 'text/plain', 'paragraph', 'Credit score: 710')
    const b = block('x2', 'b.txt', 'text/plain', 'paragraph', 'Credit score: 640')
    const i = indexFacts([a, b], mineFacts([a, b]))
    expect(i.lookup('credit_score')!.value.value).toBe('710')
    expect(i.lookup('b.credit_score')!.value.value).toBe('640')
  })

  test('labels and namespaces', () => {
    expect(slug('Annual Revenue (USD)')).toBe('annual_revenue_usd')
    expect(slug('Café  Owner')).toBe('cafe_owner')
    expect(documentNamespace('Bank Statement 2024.csv')).toBe('bank_statement_2024')
    expect(labelValue('No colon here')).toBeNull()
    expect(labelValue('this sentence is much too long to be a label at all really: yes')).toBeNull()
    expect(labelValue('Time: 12:30')).toEqual({ label: 'Time', value: '12:30' })
    // Dot leaders and two aligned columns, as printed forms and statements lay them out.
    expect(labelValue('Total incurred .......... 48,200.00')).toEqual({ label: 'Total incurred', value: '48,200.00' })
    expect(labelValue('Net premium ··· 1,200 EUR')).toEqual({ label: 'Net premium', value: '1,200 EUR' })
    expect(labelValue('Annual revenue        1,250,000.00')).toEqual({ label: 'Annual revenue', value: '1,250,000.00' })
    expect(labelValue('Policy holder\tAcme Holdings')).toBeNull() // no digit: not read as a fact
    expect(labelValue('We met the   applicant twice')).toBeNull()
    expect(labelValue('Loss ratio ... 42%')).toEqual({ label: 'Loss ratio', value: '42%' })
  })

  test('dot leaders and aligned columns give facts that cite their line', () => {
    const runs = [block('d9', 'loss_run.pdf', 'application/pdf', 'page_text', 'Loss run summary 2024\nTotal incurred .......... 48,200.00\nOpen claims        3', 2)]
    const index = indexFacts(runs, mineFacts(runs))
    expect(index.lookup('total_incurred')).toMatchObject({ value: { type: 'number', value: '48200.00' }, quote: 'Total incurred .......... 48,200.00', page: 2 })
    expect(index.lookup('loss_run.open_claims')).toMatchObject({ value: { type: 'number', value: '3' }, quote: 'Open claims        3' })
  })
})
