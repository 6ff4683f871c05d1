import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { chunkBlocks, draftFromBlocks, draftOf, sentenceSpans, subjectOf, thresholdsOf, uniqueKeys } from '../../server/authoring/obligations'
import { readDrafts } from '../../server/authoring/model-generator'
import { costMicro, decimalToMicro, microToDecimal } from '../../server/billing/budgets'
import { checkBackoffMs } from '../../server/authoring/generation-run'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

describe('thresholds', () => {
  test.each([
    ['must be at least USD 1,000,000', [{ comparator: '>=', value: '1000000', unit: 'USD' }], 'value >= 1000000'],
    ['must not exceed 80%', [{ comparator: '<=', value: '80', unit: '%' }], 'value <= 80'],
    ['shall be between 1.25 and 10', [{ comparator: '>=', value: '1.25' }, { comparator: '<=', value: '10' }], 'value between 1.25 and 10'],
    ['a minimum of EUR 10,000.00', [{ comparator: '>=', value: '10000.00', unit: 'EUR' }], 'value >= 10000.00'],
    ['more than 3 years', [{ comparator: '>', value: '3' }], 'value > 3'],
    ['less than 5', [{ comparator: '<', value: '5' }], 'value < 5'],
    ['2 years or more', [{ comparator: '>=', value: '2' }], 'value >= 2'],
  ])('%s', (text, thresholds, accept) => {
    expect(thresholdsOf(text)).toMatchObject({ thresholds, accept })
  })
  test('no number, no threshold', () => expect(thresholdsOf('must be at least adequate')).toBeNull())
  test('a minimum or maximum that names what it measures', () => {
    expect(thresholdsOf('must have a minimum FICO of 680')).toMatchObject({ thresholds: [{ comparator: '>=', value: '680' }], accept: 'value >= 680', measure: 'FICO' })
    expect(thresholdsOf('Maximum LTV of 80%')).toMatchObject({ thresholds: [{ comparator: '<=', value: '80', unit: '%' }], measure: 'LTV' })
  })
})

describe('the measured attribute, not the entity that has it', () => {
  // [sentence, key (= fact_path), question, accept]
  test.each([
    ['The borrower should have at least 3 years in business.', 'years_in_business', 'How many years has the borrower been in business?', 'value >= 3'],
    ['Borrower must have 2 years or more in business.', 'years_in_business', 'How many years has the borrower been in business?', 'value >= 2'],
    ['The business must have been operating for at least 2 years.', 'years_operating', 'How many years has the business been operating?', 'value >= 2'],
    ['The borrower must have a minimum FICO of 680.', 'fico', "What is the borrower's FICO?", 'value >= 680'],
    ['Minimum FICO score of 680 is required.', 'fico_score', 'What is the FICO score?', 'value >= 680'],
    ['The borrower should have a DSCR of at least 1.25.', 'dscr', "What is the borrower's DSCR?", 'value >= 1.25'],
    ['A DSCR of at least 1.25x is required.', 'dscr', 'What is the DSCR?', 'value >= 1.25'],
    ['Borrowers must have no more than 2 late payments in the last 12 months.', 'late_payments', 'How many late payments does the borrower have in the last 12 months?', 'value <= 2'],
    ['There must be no more than 1 late payment.', 'late_payments', 'How many late payments are there?', 'value <= 1'],
    ['The borrower must have at least 6 months of reserves.', 'months_of_reserves', 'How many months of reserves does the borrower have?', 'value >= 6'],
    ['Applicants must be at least 21 years of age.', 'age', 'How old is the applicant?', 'value >= 21'],
    ['Applicants must be at least 18 years old.', 'age', 'How old is the applicant?', 'value >= 18'],
    ['The property must be at least 10 miles from the coast.', 'miles_from_coast', 'How many miles from the coast is the property?', 'value >= 10'],
    // The subject is itself the attribute: unchanged.
    ['Annual revenue must be at least USD 1,000,000.', 'annual_revenue', 'What is the annual revenue?', 'value >= 1000000'],
    ['The loan term must not exceed 30 years.', 'loan_term', 'What is the loan term (in years)?', 'value <= 30'],
    ['Net worth should be at least 25% of the loan amount.', 'net_worth', 'What is the net worth?', 'value >= 25'],
    ['Years in business should be at least 2.', 'years_in_business', 'How many years in business?', 'value >= 2'],
    ['The number of NSF items must not exceed 3.', 'number_of_nsf_items', 'How many NSF items are there?', 'value <= 3'],
  ])('%s', (sentence, key, question, accept) => {
    expect(draftOf(sentence)).toMatchObject({ key, fact_path: key, text: question, accept, answer_type: 'number' })
  })
  test('a count of time carries its unit; no draft asks what the entity is', () => {
    expect(draftOf('The borrower should have at least 3 years in business.')!.thresholds).toEqual([{ comparator: '>=', value: '3', unit: 'years' }])
    for (const sentence of ['The borrower should have at least 3 years in business.', 'The borrower must have a minimum FICO of 680.', 'Borrowers must have no more than 2 late payments.', 'Applicants must be at least 21 years of age.']) {
      const d = draftOf(sentence)!
      expect(d.key).not.toMatch(/^(?:borrowers?|applicants?)$/)
      expect(d.text).not.toMatch(/^What is the (?:borrowers?|applicants?)\?$/)
    }
  })
})

describe('obligations', () => {
  test('criticality: must/shall/required critical, should major, softened minor; no modal and no threshold is no obligation', () => {
    expect(draftOf('Revenue must be at least 5.')?.criticality).toBe('critical')
    expect(draftOf('Revenue shall be at least 5.')?.criticality).toBe('critical')
    expect(draftOf('A signed lease is required.')?.criticality).toBe('critical')
    expect(draftOf('Revenue should be at least 5.')?.criticality).toBe('major')
    expect(draftOf('Revenue of at least 5 is typical.')?.criticality).toBe('major')
    expect(draftOf('Ideally, revenue should be at least 5.')?.criticality).toBe('minor')
    expect(draftOf('Where available, a business plan is required.')?.criticality).toBe('minor')
    expect(draftOf('This guideline applies to every branch.')).toBeNull()
    expect(draftOf('Minimum requirements')).toBeNull()
  })
  test('prohibitions and possessions become boolean fact questions', () => {
    expect(draftOf('The applicant must not have a prior bankruptcy.')).toMatchObject({ key: 'prior_bankruptcy', answer_type: 'boolean', fact_path: 'prior_bankruptcy', accept: 'value = false' })
    expect(draftOf('There must be no outstanding litigation against the applicant.')).toMatchObject({ key: 'outstanding_litigation', accept: 'value = false' })
    expect(draftOf('The borrower must have a valid business license.')).toMatchObject({ key: 'valid_business_license', accept: 'value = true' })
  })
  test('subjects drop determiners and possessives; the verb form names the subject after it', () => {
    expect(subjectOf("The applicant's annual revenue")).toBe('annual revenue')
    expect(draftOf('Applicants must maintain a minimum bank balance of at least 10,000.00 EUR.')?.key).toBe('minimum_bank_balance')
  })
  test('sentences: split at sentence ends and at line breaks before a capital; spans are exact', () => {
    const text = 'Heading line\nRevenue must be at least 5. Equity should be\nover 3.'
    const spans = sentenceSpans(text).map(([s, e]) => text.slice(s, e))
    expect(spans).toEqual(['Heading line', 'Revenue must be at least 5.', 'Equity should be\nover 3.'])
    const drafts = draftFromBlocks([{ id: 'b1', guidelineId: 'g1', page: 3, text }])
    expect(drafts.map((d) => d.key)).toEqual(['revenue', 'equity'])
    expect(drafts[1]!.citations).toEqual([{ guideline_id: 'g1', block_id: 'b1', page: 3, quote: 'Equity should be\nover 3.' }])
  })
  test('unique keys and chunks', () => {
    const taken = new Set(['a'])
    expect(uniqueKeys([{ key: 'a' }, { key: 'a' }, { key: 'b' }], taken).map((d) => d.key)).toEqual(['a_2', 'a_3', 'b'])
    expect(chunkBlocks([{ text: 'x'.repeat(60) }, { text: 'y'.repeat(60) }, { text: 'z'.repeat(10) }], 100).map((c) => c.length)).toEqual([1, 2])
  })
})

describe('model drafts, money and back-off', () => {
  const blocks = [{ id: 'b1', guidelineId: 'g1', page: 1, text: 'Revenue must be at least 5.' }]
  test('keeps cited drafts, drops ghost citations and bad rules, refuses a reply without a list', () => {
    const drafts = readDrafts({ questions: [
      { key: 'Revenue', text: 'What is the revenue?', criticality: 'critical', answer_type: 'number', fact_path: 'revenue', accept: 'value >= 5', citations: [{ block_id: 'b1', quote: 'revenue must be  at least 5' }] },
      { key: 'ghost', text: 'Ghost?', criticality: 'major', answer_type: 'text', citations: [{ block_id: 'nope', quote: 'x' }] },
      { key: 'badrule', text: 'Rule?', criticality: 'major', answer_type: 'number', fact_path: 'x', accept: 'value >>> 1', citations: [{ block_id: 'b1', quote: 'Revenue' }] },
      { key: 'badcrit', text: 'Crit?', criticality: 'huge', answer_type: 'text', citations: [{ block_id: 'b1', quote: 'Revenue' }] },
    ] }, blocks)
    expect(drafts.map((d) => d.key)).toEqual(['revenue', 'badrule'])
    expect(drafts[0]).toMatchObject({ accept: 'value >= 5', thresholds: [{ comparator: '>=', value: '5' }], citations: [{ block_id: 'b1', quote: 'Revenue must be at least 5' }] })
    expect(drafts[1]!.accept).toBeUndefined()
    expect(() => readDrafts({ answer: 'x' }, blocks)).toThrow('no questions list')
  })
  test('cost per 1k tokens rounds up; decimals both ways', () => {
    expect(costMicro({ modelPriceInputMicro: 2000, modelPriceOutputMicro: 6000 }, 1500, 250)).toBe(4500)
    expect(costMicro({ modelPriceInputMicro: 1, modelPriceOutputMicro: 0 }, 1, 0)).toBe(1)
    expect(microToDecimal(4500)).toBe('0.0045')
    expect(microToDecimal(2_500_000)).toBe('2.50')
    expect(microToDecimal(1)).toBe('0.000001')
    expect(decimalToMicro('25.5')).toBe(25_500_000)
  })
  test('check back-off doubles from the interval, capped at an hour', () => {
    expect([1, 2, 3].map((n) => checkBackoffMs(30_000, n))).toEqual([30_000, 60_000, 120_000])
    expect(checkBackoffMs(30_000, 20)).toBe(3_600_000)
  })
})
