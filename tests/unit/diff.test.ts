import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { CHANGED_SIMILARITY, diffBlocks, proposeChanges, similarity } from '../../server/authoring/diff'
import { draftFromBlocks } from '../../server/authoring/obligations'
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

describe('pairing by similarity', () => {
  const OLD = ['Annual revenue must be at least USD 1,000,000.', 'The applicant must not have a prior bankruptcy.', 'Years in business should be at least 2.']
  const NEW = ['Annual revenue must be at least USD 1,500,000.', 'The loan-to-value ratio must not exceed 80%.', 'Years in business should be at least 2.']
  const baseOf = (texts: string[]) => draftFromBlocks(blocks('o', texts)).map(({ thresholds: _t, citations: _c, ...q }) => q)

  test('similarity: content words, numbers and function words aside', () => {
    expect(similarity(OLD[0]!, NEW[0]!)).toBe(1)
    expect(similarity(OLD[1]!, NEW[1]!)).toBe(0)
    expect(similarity('The borrower should have at least 3 years in business.', 'Borrowers must have at least 5 years in business.')).toBe(1)
    expect(similarity('A must be at least 1.', 'A must be at least 2.')).toBeGreaterThanOrEqual(CHANGED_SIMILARITY)
  })

  test('an obligation replaced in place by an unrelated one is removed + added, never changed', () => {
    const { changes, unchanged } = diffBlocks(blocks('o', OLD), blocks('n', NEW))
    expect(unchanged).toBe(1)
    expect(changes.map((c) => [c.change, c.old_block_id ?? null, c.new_block_id ?? null])).toEqual([
      ['changed', 'o0', 'n0'], ['removed', 'o1', null], ['added', null, 'n1'],
    ])
  })

  test('the old key never stays on a question about something else, with or without provenance', () => {
    const old = blocks('o', OLD)
    const neu = blocks('n', NEW)
    const base = baseOf(OLD)
    const provenance = new Map(base.map((q, i) => [q.key, { citations: [{ block_id: `o${i}`, quote: OLD[i] }] }]))
    // Also when the blocks were (wrongly) reported as one changed block: the proposals check the obligations themselves.
    const forced = [{ change: 'changed' as const, old_block_id: 'o1', new_block_id: 'n1', old_text: OLD[1], new_text: NEW[1] }]
    for (const [changes, prov] of [[diffBlocks(old, neu).changes, new Map()], [diffBlocks(old, neu).changes, provenance], [forced, new Map()], [forced, provenance]] as const) {
      const out = proposeChanges(changes, old, neu, base, prov)
      const byKey = Object.fromEntries(out.map((p) => [p.question_key, p]))
      expect(byKey.prior_bankruptcy).toMatchObject({ action: 'remove', previous: { key: 'prior_bankruptcy' } })
      expect(byKey.prior_bankruptcy!.question).toBeUndefined()
      expect(byKey.loan_to_value_ratio).toMatchObject({ action: 'add', question: { key: 'loan_to_value_ratio', fact_path: 'loan_to_value_ratio' } })
      for (const p of out) if (p.question) expect(p.question.key).toBe(p.question_key)
      for (const p of out.filter((x) => x.action === 'change')) expect(p.question!.fact_path).toBe(p.previous!.fact_path)
    }
  })

  test('a reworded block stays changed; a rewrite too different to pair still changes its question, once', () => {
    const old = blocks('o', ['The borrower should have at least 3 years in business.'])
    const base = baseOf(['The borrower should have at least 3 years in business.'])
    const reworded = blocks('n', ['Borrowers must have at least 5 years in business.'])
    const a = diffBlocks(old, reworded)
    expect(a.changes.map((c) => c.change)).toEqual(['changed'])
    expect(proposeChanges(a.changes, old, reworded, base, new Map())).toMatchObject([
      { action: 'change', question_key: 'years_in_business', previous: { accept: 'value >= 3' }, question: { key: 'years_in_business', accept: 'value >= 5' } },
    ])
    const rewritten = blocks('n', ['Applicants qualify only with at least 4 years in business, shown by tax returns and audited accounts.'])
    const b = diffBlocks(old, rewritten)
    expect(b.changes.map((c) => c.change)).toEqual(['removed', 'added'])
    const out = proposeChanges(b.changes, old, rewritten, base, new Map())
    expect(out).toMatchObject([{ action: 'change', question_key: 'years_in_business', question: { accept: 'value >= 4' }, citations: [{ block_id: 'n0' }] }])
    expect(out).toHaveLength(1)
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
