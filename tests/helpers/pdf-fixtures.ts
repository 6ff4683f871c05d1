/**
 * PDFs made in the test run for the PDF fidelity tests (issue 24): a table drawn as separate runs
 * out of reading order, text overprinted for a bold effect, a two-column page, a filled AcroForm,
 * password-protected files, a CJK page with a non-embedded font, text over an image, and a corpus of
 * generated tables with known cells.
 */
import { PDFDocument, PDFHexString, PDFName, PDFString, StandardFonts, beginText, endText, moveText, rgb, setFontAndSize, showText, type PDFFont, type PDFPage } from 'pdf-lib'
import { encryptPDF } from '@pdfsmaller/pdf-encrypt-lite'
import type { Bytes } from './samples'
import { blankPage, scanned, textPage } from './scans'

const save = async (pdf: PDFDocument, objectStreams = true): Promise<Bytes> => new Uint8Array(await pdf.save({ useObjectStreams: objectStreams }))

/** Rows of a claims listing (first row the header); amounts right-aligned in the first column. */
export const UNRULED_ROWS = [
  ['Amount', 'Description', 'Paid', 'Reference'],
  ['920.68', 'STAFF TRANSPORTATION', '03/06/2019', 'DHAW20190001'],
  ['37,499.96', 'DISTRICT DIRECTOR', '03/04/2019', 'BAIN, J MATTHEW'],
  ['1,205.00', 'OFFICE SUPPLIES', '03/09/2019', 'DHAW20190017'],
]

/**
 * A table without rules whose cells are drawn one run each, column by column from the right (so
 * drawing order is not reading order), amounts right-aligned, with a title above and a note below.
 */
export async function unruledTablePdf(): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  const page = pdf.addPage([612, 792])
  const xs = [50, 120, 300, 380]
  for (let c = 3; c >= 0; c--) {
    UNRULED_ROWS.forEach((row, i) => {
      const v = row[c]!
      const x = c === 0 ? xs[0]! + 45 - font.widthOfTextAtSize(v, 9) : xs[c]!
      page.drawText(v, { x, y: 700 - i * 14, size: 9, font })
    })
  }
  page.drawText('Disbursements, March 2019', { x: 50, y: 730, size: 12, font })
  page.drawText('Amounts in US dollars.', { x: 50, y: 620, size: 9, font })
  return save(pdf)
}

/** Lines drawn twice, the second 0.2 pt to the right (a bold effect), including a table. */
export async function overprintedPdf(): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.HelveticaBold)
  const page = pdf.addPage([612, 792])
  const draw = (text: string, x: number, y: number) => { for (const dx of [0, 0.2]) page.drawText(text, { x: x + dx, y, size: 10, font }) }
  draw('Premium summary', 50, 740)
  draw('Total premium: $846', 50, 720)
  const rows = [['Item', 'Rate', 'Score'], ['Base', '56.4', '300218'], ['Surcharge', '12.5', '410377']]
  rows.forEach((r, i) => r.forEach((v, c) => draw(v, 50 + c * 120, 690 - i * 16)))
  return save(pdf)
}

/** Prose for two columns: each line a sentence fragment numbered by column and line. */
export const columnLines = (column: 'left' | 'right', n: number) => Array.from({ length: n }, (_, i) => `${column === 'left' ? 'Alpha' : 'Omega'} column sentence ${i + 1} tells its story here.`)

/** A page: a full-width title, two columns of prose (on shared baselines, or the right one `offset` pt lower), a full-width footer. */
export async function twoColumnPdf(offset = 0): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.TimesRoman)
  const page = pdf.addPage([612, 792])
  page.drawText('Annual report of the applicant company', { x: 50, y: 740, size: 14, font })
  columnLines('left', 8).forEach((line, i) => page.drawText(line, { x: 50, y: 700 - i * 14, size: 10, font }))
  columnLines('right', 8).forEach((line, i) => page.drawText(line, { x: 320, y: 700 - offset - i * 14, size: 10, font }))
  page.drawText('Page footer: prepared for underwriting.', { x: 50, y: 560, size: 9, font })
  return save(pdf)
}

/** One generated table of the corpus: its known cells (header first) and the PDF page showing it. */
export interface CorpusTable { name: string; cells: string[][]; bytes: Bytes; prose: string[] }

/** A tiny deterministic random source (so the corpus is the same every run). */
function random(seed: number) {
  let s = seed >>> 0
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32 }
}

const FONTS = [StandardFonts.Helvetica, StandardFonts.TimesRoman, StandardFonts.Courier, StandardFonts.HelveticaBold]
const WORDS = ['Fire', 'Water damage', 'Theft', 'Wind', 'Hail', 'Liability', 'Glass', 'Flood', 'Burglary', 'Collapse']
const STATUS = ['Open', 'Closed', 'Reopened', 'Pending']

function amount(r: () => number): string {
  const n = Math.floor(r() * 9_000_000) / 100
  return n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
}

/**
 * A corpus of `n` generated tables with known cells: fonts, sizes, column spacing, ruling lines or
 * none, right-aligned amounts, dates, and (every third table) a description wrapped onto two lines.
 */
export async function tableCorpus(n = 24): Promise<CorpusTable[]> {
  const out: CorpusTable[] = []
  for (let t = 0; t < n; t++) {
    const r = random(1000 + t)
    const pdf = await PDFDocument.create()
    const font = await pdf.embedFont(FONTS[t % FONTS.length]!)
    const size = [8, 9, 10, 11][t % 4]!
    const gap = [18, 24, 36, 48][(t >> 1) % 4]!
    const rules = t % 2 === 1
    const wrap = t % 3 === 2
    const columns = 3 + (t % 4)
    const header = ['Claim no', 'Cause', 'Date of loss', 'Status', 'Paid', 'Reserve'].slice(0, columns)
    const rowsN = 4 + Math.floor(r() * 6)
    const rows: string[][] = [header]
    for (let i = 0; i < rowsN; i++) {
      const cause = WORDS[Math.floor(r() * WORDS.length)]!
      const row = [`CL-${t}${String(i).padStart(3, '0')}`, wrap && i % 2 === 0 ? `${cause} to insured premises` : cause, `20${10 + Math.floor(r() * 15)}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}`, STATUS[Math.floor(r() * STATUS.length)]!, amount(r), amount(r)]
      rows.push(row.slice(0, columns))
    }
    // Column widths: the widest cell (a wrapped cell counts its longest line) plus the gap.
    const lineOf = (v: string, c: number) => (wrap && c === 1 && v.includes(' to ') ? [v.slice(0, v.indexOf(' to ')), v.slice(v.indexOf(' to ') + 1)] : [v])
    const widths = header.map((_, c) => Math.max(...rows.map((row) => Math.max(...lineOf(row[c]!, c).map((s) => font.widthOfTextAtSize(s, size))))))
    const xs: number[] = []
    let x = 40
    for (const w of widths) { xs.push(x); x += w + gap }
    const page = pdf.addPage([Math.max(612, x + 40), 792])
    const numeric = (c: number) => c >= 4
    const lead = size * 1.5
    const prose = [`Loss history table ${t + 1}`, `Prepared ${2020 + (t % 5)} for review.`]
    page.drawText(prose[0]!, { x: 40, y: 750, size: size + 2, font })
    let y = 720
    rows.forEach((row, i) => {
      const lines = row.map((v, c) => (i === 0 ? [v] : lineOf(v, c)))
      lines.forEach((parts, c) => parts.forEach((part, k) => {
        const px = numeric(c) ? xs[c]! + widths[c]! - font.widthOfTextAtSize(part, size) : xs[c]!
        page.drawText(part, { x: px, y: y - k * size * 1.15, size, font })
      }))
      const height = Math.max(...lines.map((l) => l.length)) * size * 1.15 + (lead - size * 1.15)
      if (rules) page.drawLine({ start: { x: 36, y: y - height + size * 0.9 }, end: { x: x - gap + 4, y: y - height + size * 0.9 }, thickness: 0.5, color: rgb(0, 0, 0) })
      y -= height
    })
    page.drawText(prose[1]!, { x: 40, y: y - 20, size, font })
    out.push({ name: `table ${t + 1} (${FONTS[t % FONTS.length]}, ${size} pt, gap ${gap}${rules ? ', rules' : ''}${wrap ? ', wrapped cells' : ''})`, cells: rows, bytes: await save(pdf), prose })
  }
  return out
}

/**
 * A one-page statement encrypted with RC4 (Standard security handler): with a user password it
 * cannot be opened without it; with an owner password only (the empty user password) it opens.
 */
export async function encryptedPdf(which: 'user' | 'owner-only'): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  pdf.addPage([612, 792]).drawText('Statement balance: 1,234.56', { x: 50, y: 700, size: 12, font })
  const plain = await pdf.save({ useObjectStreams: false })
  return new Uint8Array(await encryptPDF(plain, which === 'user' ? 'user-secret' : '', 'owner-secret'))
}

/**
 * A filled credit application on page 2 (page 1 a cover): text fields with printed labels to their
 * left, one labelled only by its tooltip (TU), an empty field, a checked box, a radio group and a
 * drop-down, each with its printed label.
 */
export async function filledFormPdf(): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  pdf.addPage([612, 792]).drawText('Credit application: cover page', { x: 50, y: 740, size: 14, font })
  const page = pdf.addPage([612, 792])
  const form = pdf.getForm()
  const label = (text: string, y: number) => page.drawText(text, { x: 50, y, size: 10, font })
  page.drawText('Section A: applicant', { x: 50, y: 740, size: 14, font })
  label('Applicant name', 700)
  const name = form.createTextField('applicant.name')
  name.setText('Acme Holdings LLC')
  name.addToPage(page, { x: 160, y: 695, width: 200, height: 18 })
  label('Annual revenue:', 670)
  const revenue = form.createTextField('applicant.revenue')
  revenue.setText('1,250,000.00')
  revenue.addToPage(page, { x: 160, y: 665, width: 200, height: 18 })
  const taxId = form.createTextField('applicant.tin')
  taxId.setText('12-3456789')
  taxId.addToPage(page, { x: 400, y: 665, width: 120, height: 18 })
  taxId.acroField.getWidgets()[0]!.dict.set(PDFName.of('TU'), PDFString.of('Tax ID'))
  label('Guarantor', 640)
  form.createTextField('applicant.guarantor').addToPage(page, { x: 160, y: 635, width: 200, height: 18 })
  label('Prior bankruptcy', 610)
  const bankruptcy = form.createCheckBox('applicant.bankruptcy')
  bankruptcy.addToPage(page, { x: 160, y: 607, width: 12, height: 12 })
  bankruptcy.check()
  label('Entity type', 580)
  const entity = form.createRadioGroup('applicant.entity')
  entity.addOptionToPage('LLC', page, { x: 160, y: 577, width: 12, height: 12 })
  entity.addOptionToPage('Corporation', page, { x: 220, y: 577, width: 12, height: 12 })
  entity.select('LLC')
  label('State of incorporation', 550)
  const state = form.createDropdown('applicant.state')
  state.addOptions(['New York', 'Delaware'])
  state.select('Delaware')
  state.addToPage(page, { x: 160, y: 545, width: 120, height: 18 })
  return save(pdf, false)
}

/** The Chinese text of the CJK fixture, and its bytes in GBK. */
export const CJK_TEXT = '你好世界'
const CJK_GBK = 'C4E3BAC3CAC0BDE7'

/**
 * A PDF whose page 2 shows Chinese text in a non-embedded font (STSong-Light, Adobe-GB1) through the
 * predefined CMap `encoding` (GBK-EUC-H; a name no CMap has, to stand for data the reader lacks), with
 * Latin text in a standard font on the same page, and page 1 in Latin only.
 */
export async function cjkPdf(encoding = 'GBK-EUC-H'): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const latin = await pdf.embedFont(StandardFonts.Helvetica)
  pdf.addPage([612, 792]).drawText('Cover page', { x: 50, y: 740, size: 12, font: latin })
  const page = pdf.addPage([612, 792])
  page.drawText('Invoice 2024', { x: 50, y: 740, size: 12, font: latin })
  const ctx = pdf.context
  const descriptor = ctx.register(ctx.obj({ Type: 'FontDescriptor', FontName: 'STSong-Light', Flags: 6, FontBBox: [0, -200, 1000, 900], ItalicAngle: 0, Ascent: 880, Descent: -120, CapHeight: 880, StemV: 93 }))
  const cidFont = ctx.register(ctx.obj({ Type: 'Font', Subtype: 'CIDFontType0', BaseFont: 'STSong-Light', CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('GB1'), Supplement: 2 }, FontDescriptor: descriptor, DW: 1000 }))
  page.node.setFontDictionary(PDFName.of('FCJK'), ctx.register(ctx.obj({ Type: 'Font', Subtype: 'Type0', BaseFont: 'STSong-Light', Encoding: encoding, DescendantFonts: [cidFont] })))
  page.pushOperators(beginText(), setFontAndSize('FCJK', 12), moveText(50, 700), showText(PDFHexString.of(CJK_GBK)), endText())
  return save(pdf, false)
}

/**
 * Page 2 shows, beside Latin text, glyphs of a non-embedded Identity-H font with no ToUnicode map:
 * codes nothing can turn into characters.
 */
export async function unmappedGlyphsPdf(): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const latin = await pdf.embedFont(StandardFonts.Helvetica)
  pdf.addPage([612, 792]).drawText('Cover page', { x: 50, y: 740, size: 12, font: latin })
  const page = pdf.addPage([612, 792])
  page.drawText('Invoice 2024', { x: 50, y: 740, size: 12, font: latin })
  const ctx = pdf.context
  const descriptor = ctx.register(ctx.obj({ Type: 'FontDescriptor', FontName: 'Custom', Flags: 4, FontBBox: [0, -200, 1000, 900], ItalicAngle: 0, Ascent: 880, Descent: -120, CapHeight: 880, StemV: 93 }))
  const cidFont = ctx.register(ctx.obj({ Type: 'Font', Subtype: 'CIDFontType2', BaseFont: 'Custom', CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 }, FontDescriptor: descriptor, DW: 500 }))
  page.node.setFontDictionary(PDFName.of('FX'), ctx.register(ctx.obj({ Type: 'Font', Subtype: 'Type0', BaseFont: 'Custom', Encoding: 'Identity-H', DescendantFonts: [cidFont] })))
  page.pushOperators(beginText(), setFontAndSize('FX', 12), moveText(50, 700), showText(PDFHexString.of('0003000400050006')), endText())
  return save(pdf, false)
}

/**
 * A page whose short text layer ("Test") is drawn over a full-page image: a blank scan (OCR finds
 * nothing), or a scan of printed lines (OCR finds words the text layer lacks).
 */
export async function textOverImagePdf(image: 'blank' | 'printed'): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  const jpeg = scanned(image === 'blank' ? blankPage() : textPage(['Policy number 4471 issued to Harbour Bakery', 'Effective from 1 March 2024'], { fontPx: 40 }), { quality: 80 })
  const page = pdf.addPage([612, 792])
  page.drawImage(await pdf.embedJpg(jpeg), { x: 0, y: 0, width: 612, height: 792 })
  page.drawText('Test', { x: 500, y: 40, size: 10, font })
  return save(pdf)
}

export type { PDFFont, PDFPage }
