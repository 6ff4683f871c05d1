import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { blockId, documentText, toBlocks } from '../../server/documents/blocks'
import type { Extraction } from '../../server/documents/adapters/types'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const doc = '0192f0a0-1111-7000-8000-000000000001'
const other = '0192f0a0-2222-7000-8000-000000000002'

const extraction: Extraction = {
  degraded: false,
  notes: [],
  pages: [
    { page: 1, segments: [{ kind: 'heading', text: 'Title' }, { kind: 'paragraph', text: 'Body é text' }] },
    { page: 2, segments: [] },
    { page: 3, segments: [{ kind: 'page_text', text: 'Emoji 😀 here' }, { kind: 'table_row', text: 'a | b' }] },
  ],
}

describe('blocks', () => {
  test('one block per segment in reading order with kind, page and position', () => {
    const blocks = toBlocks(doc, extraction)
    expect(blocks.map((b) => [b.position, b.page, b.kind, b.text])).toEqual([
      [0, 1, 'heading', 'Title'],
      [1, 1, 'paragraph', 'Body é text'],
      [2, 3, 'page_text', 'Emoji 😀 here'],
      [3, 3, 'table_row', 'a | b'],
    ])
  })

  test('offsets are code points into the document text (blank line within a page, a form feed per page)', () => {
    const blocks = toBlocks(doc, extraction)
    const text = documentText(blocks)
    expect(text).toBe('Title\n\nBody é text\f\fEmoji 😀 here\n\na | b')
    const points = [...text]
    for (const b of blocks) expect(points.slice(b.charStart, b.charEnd).join('')).toBe(b.text)
    expect(blocks.map((b) => [b.charStart, b.charEnd])).toEqual([[0, 5], [7, 18], [20, 32], [34, 39]])
  })

  test('ids are UUIDs, stable for the same document and position, distinct across documents', () => {
    const a = toBlocks(doc, extraction)
    const b = toBlocks(doc, extraction)
    const c = toBlocks(other, extraction)
    expect(a.map((x) => x.id)).toEqual(b.map((x) => x.id))
    expect(new Set(a.map((x) => x.id)).size).toBe(4)
    for (const x of a) expect(x.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(c.some((x) => a.map((y) => y.id).includes(x.id))).toBe(false)
    expect(a[2]!.id).toBe(blockId(doc, 2))
  })

  test('an empty extraction has no blocks', () => {
    expect(toBlocks(doc, { pages: [{ page: 1, segments: [] }], degraded: false, notes: [] })).toEqual([])
  })
})
