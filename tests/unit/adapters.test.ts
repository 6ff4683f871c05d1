import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { ADAPTERS, UnreadableDocument } from '../../server/documents/adapters'
import { pageBlocks, MAX_PAGE_BLOCK_CHARS } from '../../server/documents/adapters/pdf'
import { findFileType, sniffContradiction, FILE_TYPES, essenceOf } from '../../server/documents/registry'
import {
  brokenUtf8TextSample, corruptPdfSample, csvSample, docxSample, htmlSample, markdownSample, partlyBrokenPdfSample,
  pdfSample, pngSample, textSample, truncatedCsvSample,
} from '../helpers/samples'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const segs = (e: Awaited<ReturnType<(typeof ADAPTERS)['text']>>) => e.pages.flatMap((p) => p.segments.map((s) => ({ page: p.page, ...s })))

describe('adapters', () => {
  test('text: paragraphs at blank lines, pages at form feeds', async () => {
    const e = await ADAPTERS.text(textSample())
    expect(e.degraded).toBe(false)
    expect(segs(e)).toEqual([
      { page: 1, kind: 'paragraph', text: 'Employment letter.\nThe applicant works here.' },
      { page: 1, kind: 'paragraph', text: 'Salary is 5,000 per month.' },
      { page: 2, kind: 'paragraph', text: 'Page two: signed by HR.' },
    ])
  })

  test('text with invalid UTF-8 is read around the damage and degraded', async () => {
    const e = await ADAPTERS.text(brokenUtf8TextSample())
    expect(e.degraded).toBe(true)
    expect(e.notes).toEqual(['invalid UTF-8 byte sequences were replaced'])
    expect(segs(e).map((s) => s.text)).toEqual(['Readable start.', expect.stringContaining('middle.'), 'Readable end.'])
  })

  test('text that holds nothing readable is unreadable', async () => {
    await expect(ADAPTERS.text(new Uint8Array([0xff, 0xfe, 0xff, 0xff]))).rejects.toBeInstanceOf(UnreadableDocument)
  })

  test('markdown: headings, inline markup reduced, list items, table rows', async () => {
    const e = await ADAPTERS.markdown(markdownSample())
    expect(segs(e).map(({ kind, text }) => ({ kind, text }))).toEqual([
      { kind: 'heading', text: 'Medical Disclosure' },
      { kind: 'paragraph', text: 'The applicant reports no chronic conditions and takes no medication.' },
      { kind: 'heading', text: 'History' },
      { kind: 'paragraph', text: 'Appendectomy 2004' },
      { kind: 'paragraph', text: 'Broken arm 2011' },
      { kind: 'table_row', text: 'Test | Result' },
      { kind: 'table_row', text: 'Blood pressure | 120/80' },
    ])
  })

  test('csv: one table_row per record, quoted commas kept', async () => {
    const e = await ADAPTERS.csv(csvSample())
    expect(e.degraded).toBe(false)
    expect(segs(e).map((s) => [s.kind, s.text])).toEqual([
      ['table_row', 'name | amount | currency'],
      ['table_row', 'Alice | 100 | EUR'],
      ['table_row', 'Bob, Jr. | 250 | USD'],
      ['table_row', 'Carol | 75 | GBP'],
    ])
  })

  test('csv cut inside a quoted field keeps the readable records and is degraded', async () => {
    const e = await ADAPTERS.csv(truncatedCsvSample())
    expect(e.degraded).toBe(true)
    expect(e.notes).toEqual(['1 malformed record was skipped'])
    expect(segs(e).map((s) => s.text)).toEqual(['name | amount', 'Alice | 100', 'Bob | 250'])
  })

  test('html: text only (no script, style, title or link targets), kinds kept', async () => {
    const e = await ADAPTERS.html(htmlSample())
    expect(segs(e).map(({ kind, text }) => ({ kind, text }))).toEqual([
      { kind: 'heading', text: 'Property Report' },
      { kind: 'paragraph', text: 'The property is a detached house.' },
      { kind: 'paragraph', text: 'Built 1990' },
      { kind: 'paragraph', text: 'Roof renewed 2015' },
      { kind: 'table_row', text: 'Room | Area' },
      { kind: 'table_row', text: 'Kitchen | 20 m2' },
    ])
    expect(JSON.stringify(e)).not.toContain('secret')
    expect(JSON.stringify(e)).not.toContain('Ignored title')
  })

  test('docx: heading, paragraphs and table rows through mammoth', async () => {
    const e = await ADAPTERS.docx(await docxSample())
    expect(e.degraded).toBe(false)
    expect(segs(e).map(({ kind, text }) => ({ kind, text }))).toEqual([
      { kind: 'heading', text: 'Applicant Summary' },
      { kind: 'paragraph', text: 'The applicant is Jane Doe.' },
      { kind: 'paragraph', text: 'Annual income is 85,000 EUR.' },
      { kind: 'table_row', text: 'Asset | Value' },
      { kind: 'table_row', text: 'House | 350,000' },
    ])
    // A Word table's rows carry cells named by its first row.
    expect(segs(e).filter((x) => x.kind === 'table_row').map((x) => x.cells)).toEqual([
      [{ column: 'Asset', value: 'Asset' }, { column: 'Value', value: 'Value' }],
      [{ column: 'Asset', value: 'House' }, { column: 'Value', value: '350,000' }],
    ])
  })

  test('docx that is not a zip package is unreadable', async () => {
    await expect(ADAPTERS.docx(new TextEncoder().encode('PK not really'))).rejects.toBeInstanceOf(UnreadableDocument)
  })

  test('pdf: text per page, page numbers kept, blank pages counted', async () => {
    const e = await ADAPTERS.pdf(await pdfSample([['First page line one', 'line two'], [], ['Third page']]))
    expect(e.degraded).toBe(false)
    expect(e.pages.map((p) => p.page)).toEqual([1, 2, 3])
    expect(segs(e)).toEqual([
      { page: 1, kind: 'page_text', text: 'First page line one\nline two' },
      { page: 3, kind: 'page_text', text: 'Third page' },
    ])
  })

  test('a corrupt pdf is unreadable with a content-free reason', async () => {
    const err = await ADAPTERS.pdf(corruptPdfSample()).catch((e) => e)
    expect(err).toBeInstanceOf(UnreadableDocument)
    expect(err.reason).toBe('the PDF structure is invalid')
  })

  test('a pdf with a missing page reads the others and is degraded', async () => {
    const e = await ADAPTERS.pdf(await partlyBrokenPdfSample())
    expect(e.pages.map((p) => [p.page, p.outcome, p.reason])).toEqual([[1, undefined, undefined], [2, undefined, undefined], [3, 'unreadable', 'the page could not be read']])
    expect(segs(e).map((s) => [s.page, s.text])).toEqual([[1, 'Readable page one'], [2, 'Readable page two']])
  })

  test('long page text is cut at line ends into blocks of bounded size', () => {
    const line = 'x'.repeat(90)
    const blocks = pageBlocks(Array.from({ length: 50 }, () => line).join('\n'))
    expect(blocks.length).toBe(3)
    for (const b of blocks) expect(b.text.length).toBeLessThanOrEqual(MAX_PAGE_BLOCK_CHARS)
    expect(blocks.map((b) => b.text).join('\n')).toBe(Array.from({ length: 50 }, () => line).join('\n'))
    const huge = pageBlocks('y'.repeat(MAX_PAGE_BLOCK_CHARS * 2 + 5))
    expect(huge.map((b) => b.text.length)).toEqual([MAX_PAGE_BLOCK_CHARS, MAX_PAGE_BLOCK_CHARS, 5])
  })
})

describe('registry and sniffing', () => {
  test('every adapter name is wired, and the types with an adapter are present', () => {
    const withAdapter = FILE_TYPES.filter((f) => f.adapter).map((f) => f.contentType).sort()
    expect(withAdapter).toEqual([
      'application/msword', 'application/pdf', 'application/rtf', 'application/vnd.ms-excel', 'application/vnd.ms-excel.sheet.macroenabled.12', 'application/vnd.ms-outlook',
      'application/vnd.oasis.opendocument.spreadsheet', 'application/vnd.oasis.opendocument.text',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/zip', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp', 'message/rfc822', 'text/csv', 'text/html', 'text/markdown', 'text/plain', 'text/rtf',
    ])
    for (const f of FILE_TYPES) if (f.adapter) expect(typeof ADAPTERS[f.adapter]).toBe('function')
    expect(findFileType('Text/Plain; charset=utf-8')?.contentType).toBe('text/plain')
    expect(essenceOf(' IMAGE/PNG ')).toBe('image/png')
    expect(findFileType('application/x-unknown')).toBeUndefined()
  })

  test('bytes agree with their declared type', async () => {
    expect(await sniffContradiction(findFileType('application/pdf')!, await pdfSample([['x']]))).toBeNull()
    expect(await sniffContradiction(findFileType('image/png')!, pngSample())).toBeNull()
    expect(await sniffContradiction(findFileType('application/vnd.openxmlformats-officedocument.wordprocessingml.document')!, await docxSample())).toBeNull()
    expect(await sniffContradiction(findFileType('text/csv')!, csvSample())).toBeNull()
    expect(await sniffContradiction(findFileType('text/html')!, htmlSample())).toBeNull()
  })

  test('bytes that contradict their declared type are named', async () => {
    expect(await sniffContradiction(findFileType('text/plain')!, pngSample())).toBe('image/png')
    expect(await sniffContradiction(findFileType('application/pdf')!, pngSample())).toBe('image/png')
    expect(await sniffContradiction(findFileType('application/pdf')!, textSample())).toBe('unrecognised bytes')
    expect(await sniffContradiction(findFileType('image/png')!, await pdfSample([['x']]))).toBe('application/pdf')
    expect(await sniffContradiction(findFileType('text/plain')!, new Uint8Array([65, 0, 66]))).toBe('application/octet-stream')
  })
})
