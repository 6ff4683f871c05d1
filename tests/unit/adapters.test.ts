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

  describe('csv field separator: the file\'s own, so a figure is never split across cells', () => {
    const read = async (text: string) => {
      const e = await ADAPTERS.csv(new TextEncoder().encode(text))
      return { rows: segs(e).map((s) => s.text), cells: segs(e).map((s) => s.cells), degraded: e.degraded, notes: e.notes }
    }

    test('semicolons and decimal commas (a European export): 1.234,50 stays one figure, named by its column', async () => {
      const r = await read('Posten;Betrag;Datum\nMiete;1.234,50;01.02.2024\nVerlust;-2.500,00;15.03.2024\n')
      expect(r.rows).toEqual(['Posten | Betrag | Datum', 'Miete | 1.234,50 | 01.02.2024', 'Verlust | -2.500,00 | 15.03.2024'])
      expect(r.cells[1]).toEqual([{ column: 'Posten', value: 'Miete' }, { column: 'Betrag', value: '1.234,50' }, { column: 'Datum', value: '01.02.2024' }])
      expect(r.degraded).toBe(false)
    })

    test('a header whose text holds a comma does not make the comma the separator', async () => {
      const r = await read('Posten;Betrag (EUR, netto);Datum\nMiete;1.234,50;01.02.2024\n')
      expect(r.rows).toEqual(['Posten | Betrag (EUR, netto) | Datum', 'Miete | 1.234,50 | 01.02.2024'])
    })

    test('Excel\'s sep= line declares the separator and is not a record', async () => {
      expect((await read('sep=;\r\nA;B\r\n1,5;2\r\n')).rows).toEqual(['A | B', '1,5 | 2'])
      expect((await read('sep=|\nA|B\n1,5|2\n')).rows).toEqual(['A | B', '1,5 | 2'])
    })

    test('tabs and pipes; a title line above the table', async () => {
      expect((await read('Name\tAmount\nSmith, J\t1,234.50\nDoe, A\t99.00\n')).rows).toEqual(['Name | Amount', 'Smith, J | 1,234.50', 'Doe, A | 99.00'])
      expect((await read('a|b|c\n1|2,5|3\n')).rows).toEqual(['a | b | c', '1 | 2,5 | 3'])
      expect((await read('Account statement\nDate;Amount\n01.02;1,5\n')).rows).toEqual(['Account statement', 'Date | Amount', '01.02 | 1,5'])
    })

    test('comma files stay comma files: semicolons in text, quoted or not, and a single column', async () => {
      expect((await read('name,note\nA,"x; y"\nB,z\n')).rows).toEqual(['name | note', 'A | x; y', 'B | z'])
      expect((await read('name,note\nA,x;y and more\nB,z\n')).rows).toEqual(['name | note', 'A | x;y and more', 'B | z'])
      const single = await read('amount\n100\n200\n')
      expect(single.rows).toEqual(['amount', '100', '200'])
      expect(single.degraded).toBe(false)
    })

    test('a file two separators read equally well is read with the comma and says so', async () => {
      const r = await read('a;b,c\n1;2,3\n')
      expect(r.rows).toEqual(['a;b | c', '1;2 | 3'])
      expect(r.degraded).toBe(true)
      expect(r.notes).toEqual(["the field separator could be ',' or ';': read as ','"])
    })
  })

  test('html: a check box or radio button reads as its state (a saved form); other inputs add nothing', async () => {
    const e = await ADAPTERS.html(new TextEncoder().encode('<form><p>Smoker: <input type="checkbox" checked> Yes <input type="CHECKBOX"> No</p>'
      + '<p>Cover: <input type="radio" name="c"> Basic <input type="radio" name="c" checked="checked"> Full</p><p>Name <input type="text" value="ignored"><input type="hidden" value="token"></p></form>'))
    expect(segs(e).map((s) => s.text)).toEqual(['Smoker: \u2612 Yes \u2610 No', 'Cover: \u25cb Basic \u25c9 Full', 'Name'])
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
      'application/zip', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp', 'message/rfc822', 'text/csv', 'text/html', 'text/markdown', 'text/plain', 'text/rtf', 'text/tab-separated-values',
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
