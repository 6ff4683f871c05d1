/**
 * Read coverage lines: the findings report's (server) and the frame's say how much of each
 * document was read, and never present a document that was not read as read.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { coverageOf } from '../../server/documents/coverage'
import { coverage } from '../../frame/src/format'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const pages = (p: Partial<Record<'total' | 'text_layer' | 'ocr' | 'blank' | 'unreadable' | 'low_confidence_blocks', number>>) =>
  ({ total: 0, text_layer: 0, ocr: 0, blank: 0, unreadable: 0, low_confidence_blocks: 0, ...p })

describe('read coverage', () => {
  test('the report line of each kind of document', () => {
    const doc = (status: string, p: ReturnType<typeof pages> | null, detail: string | null = null) =>
      coverageOf({ filename: 'f.pdf', status: status as never, page_summary: p, page_count: p?.total ?? null, error_detail: detail })
    expect(doc('ready', pages({ total: 3, ocr: 3 }))).toEqual({ filename: 'f.pdf', complete: true, line: 'f.pdf: 3 pages, 3 by OCR' })
    expect(doc('ready', pages({ total: 2, text_layer: 1, blank: 1 }))).toEqual({ filename: 'f.pdf', complete: true, line: 'f.pdf: 2 pages, 1 from text, 1 blank' })
    expect(doc('ready', pages({ total: 1, ocr: 1, low_confidence_blocks: 2 })).line).toBe('f.pdf: 1 page, 1 by OCR (2 low-confidence blocks)')
    expect(doc('ready_degraded', pages({ total: 4, text_layer: 3, unreadable: 1 }))).toEqual({ filename: 'f.pdf', complete: false, line: 'f.pdf: 4 pages, 3 from text, 1 NOT READ' })
    expect(doc('unsupported_pending', null, 'HEIC images cannot be decoded here yet')).toEqual({ filename: 'f.pdf', complete: false, line: 'f.pdf: not read (format not supported: HEIC images cannot be decoded here yet)' })
    expect(doc('failed', pages({ total: 1, unreadable: 1 }), 'page 1 unreadable: no legible text')).toMatchObject({ complete: false, line: 'f.pdf: not read (failed: page 1 unreadable: no legible text)' })
    expect(doc('processing', null)).toMatchObject({ complete: false, line: 'f.pdf: not read yet (processing)' })
  })

  test("the frame's line", () => {
    expect(coverage({ status: 'ready', pages: pages({ total: 3, ocr: 2, blank: 1 }) })).toBe('3 pages, 2 by OCR, 1 blank')
    expect(coverage({ status: 'ready_degraded', pages: pages({ total: 2, text_layer: 1, unreadable: 1 }) })).toBe('2 pages, 1 from text, 1 not read')
    expect(coverage({ status: 'unsupported_pending' })).toBe('not read')
    expect(coverage({ status: 'failed', pages: pages({ total: 1, unreadable: 1 }) })).toBe('not read')
    expect(coverage({ status: 'processing' })).toBe('not read yet')
  })
})
