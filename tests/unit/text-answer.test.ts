import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { buildCaseContext, builtinEngine, type Question } from '../../server/evaluation/engine'
import type { CaseBlock } from '../../server/evaluation/facts'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

// The commercial-loan file: a heading, a form of "Label: value" lines, prose and a statement.
const texts = [
  'Commercial Loan Application',
  'Applicant: Acme Holdings LLC\nLoan amount: 1,250,000.00\nLoan to value: 0.62\nPurpose: Purchase of second production facility\nTerm: 10 years',
  'The borrower has operated the plant since 2012. There is no outstanding litigation against the company.',
  'Bank statement\nOpening balance: 10,000.00\nClosing balance: 12,000.00',
]
const blocks: CaseBlock[] = texts.map((text, i) => ({ id: `b${i}`, documentId: 'd1', filename: 'scan0001.pdf', contentType: 'application/pdf', order: i, page: 1, kind: 'paragraph', text }))
const context = buildCaseContext(blocks)
const ask = (text: string, answer_type: Question['answer_type'] = 'text') => builtinEngine.answer({ key: 'q', text, criticality: 'minor', answer_type }, context)

describe('text answers with honest confidence', () => {
  test('the purpose of the loan is the value of the "Purpose:" line, not the heading nor "Loan to value"', async () => {
    const a = await ask('What is the purpose of the loan?')
    expect(a.status).toBe('answered')
    expect(a.value).toBe('Purchase of second production facility')
    expect(a.evidence).toEqual([{ documentId: 'd1', blockId: 'b1', page: 1, quote: 'Purpose: Purchase of second production facility' }])
    expect(a.confidence).toBeGreaterThanOrEqual(0.5)
  })

  test('a label naming every term of the question, far ahead of the rest, is near certain', async () => {
    const a = await ask('What is the closing balance?', 'number')
    expect(a).toMatchObject({ status: 'answered', value: '12000.00', evidence: [{ quote: 'Closing balance: 12,000.00' }] })
    expect(a.confidence).toBeGreaterThanOrEqual(0.9)
  })

  test('a number that reads both ways takes the decimal mark of its own document', async () => {
    const german = ['Angebot', 'Versicherungssumme: 2.500.000,00\nSelbstbehalt je Schaden: 1.500']
      .map((text, i): CaseBlock => ({ id: `g${i}`, documentId: 'g1', filename: 'angebot.pdf', contentType: 'application/pdf', order: i, page: 1, kind: 'paragraph', text }))
    const a = await builtinEngine.answer({ key: 'q', text: 'What is the Selbstbehalt je Schaden?', criticality: 'minor', answer_type: 'number' }, buildCaseContext(german))
    expect(a).toMatchObject({ status: 'answered', value: '1500' })
  })

  test('a sentence answer holds the question terms; sentences never pass 0.8', async () => {
    const a = await ask('Is there any outstanding litigation?')
    expect(a.value).toBe('There is no outstanding litigation against the company.')
    expect(a.confidence).toBeLessThanOrEqual(0.8)
    expect(a.confidence).toBeGreaterThanOrEqual(0.5)
  })

  test('evidence without the question\'s key terms is not_found (or below 0.5), never a confident wrong answer', async () => {
    for (const q of ['What is the applicant tax identification number?', 'What is the date of birth of the borrower?', 'Who insures the warehouse against flood?']) {
      const a = await ask(q)
      expect(a.status === 'not_found' || a.confidence < 0.5).toBe(true)
    }
    const a = await ask('What is the tax identification number?')
    expect(a).toMatchObject({ status: 'not_found', value: null, confidence: 0, evidence: [] })
  })

  test('the key term missing from the cited line caps the confidence at 0.45 with a note', async () => {
    // "balance" and "opening" are in the file; "overdraft" (the key term: in no block) is not
    const a = await ask('What is the opening overdraft balance?')
    expect(a).toMatchObject({ status: 'answered', evidence: [{ quote: 'Opening balance: 10,000.00' }] })
    expect(a.confidence).toBeLessThanOrEqual(0.45)
    expect(a.note).toContain('"overdraft"')
  })
})
