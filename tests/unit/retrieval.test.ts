import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { buildBlockIndex, processTerm } from '../../server/evaluation/retrieval'
import { buildCaseContext, builtinEngine, type Question } from '../../server/evaluation/engine'
import type { CaseBlock } from '../../server/evaluation/facts'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const blocks: CaseBlock[] = [
  'The company was founded in 2012 and sells industrial pumps.',
  'There is no outstanding litigation against the company or its directors.',
  'Insurance: the company holds general liability insurance with Example Mutual.',
  'Litigation history: one dispute settled in 2019.',
  'Unrelated text about the weather and the office plants.',
].map((text, i) => ({ id: `b${i}`, documentId: i < 3 ? 'd1' : 'd2', filename: i < 3 ? 'letter.docx' : 'notes.txt', contentType: 'text/plain', order: i, page: i + 1, kind: 'paragraph', text }))

describe('BM25 retrieval', () => {
  const index = buildBlockIndex(blocks)

  test('stop words are dropped from queries and the index', () => {
    expect(index.terms('Is there any outstanding litigation against the applicant?')).toEqual(['there', 'outstanding', 'litigation', 'applicant'].filter((t) => processTerm(t) !== null))
    expect(processTerm('The')).toBeNull()
    expect(processTerm("Company's")).toBe('company')
  })

  test('the block matching more query terms ranks first, with coverage of the query', () => {
    const hits = index.search('outstanding litigation', 5)
    expect(hits.map((h) => h.block.id)).toEqual(['b1', 'b3'])
    expect(hits[0]!.coverage).toBe(1)
    expect(hits[1]!.coverage).toBe(0.5)
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
  })

  test('prefix matching for longer words; nothing for unknown words or only stop words', () => {
    expect(index.search('insu')).toEqual([])
    expect(index.search('insuranc').map((h) => h.block.id)).toEqual(['b2'])
    expect(index.search('zebra crossing')).toEqual([])
    expect(index.search('what is the')).toEqual([])
  })

  test('deterministic: the same query gives the same order every time', () => {
    const a = index.search('company', 5).map((h) => h.block.id)
    for (let i = 0; i < 5; i++) expect(buildBlockIndex(blocks).search('company', 5).map((h) => h.block.id)).toEqual(a)
  })
})

describe('built-in engine on text questions', () => {
  const context = buildCaseContext(blocks)
  const q = (text: string): Question => ({ key: 'q', text, criticality: 'minor', answer_type: 'text' })

  test('answers with the best sentence as its evidence and a confidence from coverage and margin', async () => {
    const a = await builtinEngine.answer(q('Is there any outstanding litigation?'), context)
    expect(a).toEqual({
      questionKey: 'q', source: 'retrieval', downgraded: false, status: 'answered',
      value: 'There is no outstanding litigation against the company or its directors.',
      // a sentence holding every term (0.6) with a clear lead over the "Litigation history" line (0.2 x 0.52)
      confidence: 0.7,
      evidence: [{ documentId: 'd1', blockId: 'b1', page: 2, quote: 'There is no outstanding litigation against the company or its directors.' }],
    })
  })

  test('not_found when no passage covers half of the question', async () => {
    const a = await builtinEngine.answer(q('Which auditor signed the financial statements?'), context)
    expect(a).toMatchObject({ status: 'not_found', value: null, confidence: 0, evidence: [] })
  })
})
