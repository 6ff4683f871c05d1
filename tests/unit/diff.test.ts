import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { diffBlocks, proposeChanges } from '../../server/authoring/diff'
import { proposeStructure, splitParts } from '../../server/authoring/structure'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const blocks = (prefix: string, texts: string[]) => texts.map((text, i) => ({ id: `${prefix}${i}`, guidelineId: prefix, page: 1, text }))

describe('block diff', () => {
  test('pairs replaced blocks as changed, keeps whitespace-only edits unchanged', () => {
    const old = blocks('o', ['A must be at least 1.', 'B  text', 'C must not have a D.', 'E'])
    const neu = blocks('n', ['A must be at least 2.', 'B text', 'E', 'F must be at least 3.'])
    const { changes, unchanged } = diffBlocks(old, neu)
    expect(unchanged).toBe(2)
    expect(changes.map((c) => [c.change, c.old_block_id ?? null, c.new_block_id ?? null])).toEqual([
      ['changed', 'o0', 'n0'], ['removed', 'o2', null], ['added', null, 'n3'],
    ])
  })
  test('identical guidelines: no change, no proposal', () => {
    const old = blocks('o', ['Revenue must be at least 5.'])
    const { changes } = diffBlocks(old, blocks('n', ['Revenue must be at least 5.']))
    expect(changes).toEqual([])
    expect(proposeChanges(changes, old, [], [], new Map())).toEqual([])
  })
  test('proposals follow provenance when a question was accepted from a draft, whatever its key', () => {
    const old = blocks('o', ['Revenue must be at least 5.'])
    const neu = blocks('n', ['Revenue must be at least 7.'])
    const { changes } = diffBlocks(old, neu)
    const base = [{ key: 'renamed', text: 'What is the revenue?', criticality: 'critical' as const, answer_type: 'number' as const, fact_path: 'revenue', accept: 'value >= 5' }]
    const out = proposeChanges(changes, old, neu, base, new Map([['renamed', { citations: [{ block_id: 'o0' }] }]]))
    expect(out).toMatchObject([{ action: 'change', question_key: 'renamed', question: { key: 'renamed', accept: 'value >= 7' }, previous: { accept: 'value >= 5' } }])
  })
})

describe('structure proposals', () => {
  test('split parts', () => {
    expect(splitParts('What are the assets, liabilities and equity?')).toEqual({ prefix: 'What are the', parts: ['assets', 'liabilities', 'equity'] })
    expect(splitParts('Is the lease signed? Is it current?').parts).toEqual(['Is the lease signed?', 'Is it current?'])
    expect(splitParts('What is the annual revenue?').parts).toEqual([])
  })
  test('split keys avoid the keys of other questions', () => {
    const q = { key: 'combo', text: 'What is the revenue and the profit?', criticality: 'major' as const, answer_type: 'number' as const }
    const other = { key: 'revenue', text: 'x', criticality: 'minor' as const, answer_type: 'text' as const }
    expect(proposeStructure(q, [q, other]).questions.map((x) => x.key)).toEqual(['revenue_2', 'profit'])
  })
})
