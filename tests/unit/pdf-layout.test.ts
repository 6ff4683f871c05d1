/**
 * Geometry-aware text assembly of PDF pages (issue 24): cells drawn out of order come out
 * separated and in column order with exact numbers, overprinted text once, a two-column page column
 * by column, and a corpus of generated tables reads as exact cells (compared with `pdftotext
 * -layout` when poppler-utils is installed).
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { ADAPTERS } from '../../server/documents/adapters'
import type { Extraction } from '../../server/documents/adapters/types'
import { columnLines, overprintedPdf, tableCorpus, twoColumnPdf, unruledTablePdf, UNRULED_ROWS } from '../helpers/pdf-fixtures'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4; the corpus reads 24 PDFs (and pdftotext each)

const texts = (e: Extraction) => e.pages.flatMap((p) => p.segments.map((s) => s.text))
/** Numbers as a reader would cite them: runs of digits with their separators. */
const numbers = (s: string) => s.match(/\d[\d,./-]*\d|\d/g) ?? []

/** Whether pdftotext (poppler-utils) is on PATH. */
const pdftotext = Bun.which('pdftotext')
async function poppler(bytes: Uint8Array): Promise<string> {
  const proc = Bun.spawn([pdftotext!, '-layout', '-', '-'], { stdin: bytes, stdout: 'pipe' })
  return new Response(proc.stdout).text()
}

describe('PDF text assembly', () => {
  test('a table drawn column by column without rules: rows in reading order, cells separated, numbers exact', async () => {
    const e = await ADAPTERS.pdf(await unruledTablePdf())
    const segments = e.pages[0]!.segments
    expect(segments.map((s) => [s.kind, s.text])).toEqual([
      ['page_text', 'Disbursements, March 2019'],
      ...UNRULED_ROWS.map((r) => ['table_row', r.join(' | ')]),
      ['page_text', 'Amounts in US dollars.'],
    ])
    expect(segments[2]!.cells).toEqual([{ column: 'Amount', value: '920.68' }, { column: 'Description', value: 'STAFF TRANSPORTATION' }, { column: 'Paid', value: '03/06/2019' }, { column: 'Reference', value: 'DHAW20190001' }])
    const source = new Set(UNRULED_ROWS.flat().flatMap(numbers).concat(['2019']))
    for (const n of texts(e).flatMap(numbers)) expect(source.has(n)).toBe(true)
  })

  test('text overprinted 0.2 pt to the right for a bold effect is read once', async () => {
    const e = await ADAPTERS.pdf(await overprintedPdf())
    expect(e.pages[0]!.segments.map((s) => s.text)).toEqual([
      'Premium summary\nTotal premium: $846',
      'Item | Rate | Score',
      'Base | 56.4 | 300218',
      'Surcharge | 12.5 | 410377',
    ])
  })

  test('label/value pairs side by side: one pair a line, so no value runs into the next label; a lone pair keeps its tab', async () => {
    const pdf = await PDFDocument.create()
    const font = await pdf.embedFont(StandardFonts.Helvetica)
    const page = pdf.addPage([612, 792])
    const draw = (text: string, x: number, y: number) => page.drawText(text, { x, y, size: 10, font })
    draw('Insured: Harbour Bakery Ltd', 50, 700); draw('Policy no: HB-4471', 330, 700)
    draw('Effective:', 50, 680); draw('2024-03-01', 120, 680); draw('Expiry:', 330, 680); draw('2025-02-28', 400, 680)
    draw('Premium:', 50, 660); draw('4,210.77', 200, 660)
    const e = await ADAPTERS.pdf(new Uint8Array(await pdf.save()))
    expect(texts(e)).toEqual(['Insured: Harbour Bakery Ltd\nPolicy no: HB-4471\nEffective: 2024-03-01\nExpiry: 2025-02-28\nPremium:\t4,210.77'])
  })

  for (const offset of [0, 7]) {
    test(`a two-column page (${offset ? 'baselines apart' : 'shared baselines'}): the title, the left column contiguous, then the right column, then the footer`, async () => {
      const e = await ADAPTERS.pdf(await twoColumnPdf(offset))
      const text = texts(e).join('\n')
      expect(text).toBe(['Annual report of the applicant company', ...columnLines('left', 8), '', ...columnLines('right', 8), '', 'Page footer: prepared for underwriting.'].join('\n'))
    })
  }

  test('a table corpus (24 generated tables): at least 95% of known cells come out as exact cells, and no number that is not in the source', async () => {
    const corpus = await tableCorpus(24)
    expect(corpus.length).toBeGreaterThanOrEqual(20)
    let known = 0
    let exact = 0
    let popplerExact = 0
    const foreign: string[] = []
    for (const t of corpus) {
      const e = await ADAPTERS.pdf(t.bytes)
      const segments = e.pages.flatMap((p) => p.segments)
      // A cell comes out exact as a table cell's value, or as a tab-separated cell of a text line.
      const cells = new Set<string>(segments.flatMap((s) => s.cells ? s.cells.map((c) => c.value) : s.text.split('\n').flatMap((l) => l.split('\t'))))
      const popplerCells = pdftotext ? new Set((await poppler(t.bytes)).split('\n').flatMap((l) => l.trim().split(/\s{2,}/))) : new Set<string>()
      const source = new Set([...t.cells.flat(), ...t.prose].flatMap(numbers))
      for (const row of t.cells.slice(1)) for (const v of row) {
        known++
        if (cells.has(v)) exact++
        else console.log(`${t.name}: not an exact cell: ${JSON.stringify(v)}`)
        if (popplerCells.has(v)) popplerExact++
      }
      for (const s of segments) for (const n of numbers(s.text)) if (!source.has(n)) foreign.push(`${t.name}: ${n}`)
    }
    console.log(`table corpus: ${corpus.length} tables, ${known} known cells, exact cells ${(exact / known).toFixed(3)}${pdftotext ? `; pdftotext -layout (cells split at 2+ spaces) ${(popplerExact / known).toFixed(3)}` : '; pdftotext not installed, not compared'}`)
    expect(foreign).toEqual([])
    expect(exact / known).toBeGreaterThanOrEqual(0.95)
  })
})
