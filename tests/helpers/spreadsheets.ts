/**
 * Spreadsheet fixtures made in the run: workbooks SheetJS writes (XLSX, BIFF8 XLS, ODS) and XLSX
 * packages assembled part by part with fflate the way other writers lay them out (cells without
 * `r` attributes, namespace-prefixed XML, LibreOffice's part order), plus a word-recall measure.
 */
import * as XLSX from '@e965/xlsx'
import { zipSync, unzipSync, strToU8 } from 'fflate'
import type { Bytes } from './samples'

/** Days since Excel's epoch (1899-12-30) of a calendar date: a date cell's stored number. */
export const serial = (y: number, m: number, d: number) => (Date.UTC(y, m - 1, d) - Date.UTC(1899, 11, 30)) / 86_400_000

const dateCell = (y: number, m: number, d: number): XLSX.CellObject => ({ t: 'n', v: serial(y, m, d), z: 'yyyy-mm-dd' })

/** Writes a SheetJS workbook in a format (`xlsx`, `xlsm`, `biff8` for XLS, `ods`). */
export function writeBook(wb: XLSX.WorkBook, bookType: XLSX.BookType): Bytes {
  return new Uint8Array(XLSX.write(wb, { bookType, type: 'array' }) as ArrayBuffer)
}

/** A rent roll: a header, three units, a formula total row; a second sheet of notes; a hidden sheet. */
export function rentRollBook(): XLSX.WorkBook {
  const wb = XLSX.utils.book_new()
  const eur = (v: number): XLSX.CellObject => ({ t: 'n', v, z: '#,##0.00 [$EUR]' })
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([
    ['Unit', 'Tenant', 'Lease start', 'Monthly rent'],
    ['1A', 'Acme Dental', dateCell(2024, 1, 15), eur(1250.5)],
    ['1B', 'Beta Books', dateCell(2023, 6, 1), eur(980)],
    ['2A', 'Gamma Cafe', dateCell(2022, 11, 30), eur(2100.25)],
    ['Total', null, null, { t: 'n', f: 'SUM(D2:D4)', v: 4330.75, z: '#,##0.00 [$EUR]' }],
  ]), 'Rent roll')
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Property', '12 Harbour Street'], ['Occupancy', 0.95]]), 'Notes')
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Cap rate', 'Value'], ['0.065', 1]]), 'Calc')
  wb.Workbook = { Sheets: [{ Hidden: 0 }, { Hidden: 0 }, { Hidden: 1 }] }
  return wb
}

/**
 * A property schedule with every cell type: strings (shared in XLS), numbers with a number format,
 * a date, booleans TRUE and FALSE, a formula with its cached result, an error; then an empty sheet
 * and a hidden sheet.
 */
export function scheduleBook(): XLSX.WorkBook {
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([
    ['Field', 'Value'],
    ['Insured', 'Harbour Holdings Limited'],
    ['Sum insured', { t: 'n', v: 2500000, z: '#,##0' }],
    ['Inception', dateCell(2025, 4, 1)],
    ['Sprinklered', true],
    ['Flood zone', false],
    ['Premium', { t: 'n', f: 'B3*0.002', v: 5000, z: '0.00' }],
    ['Loss ratio', { t: 'e', v: 0x07, w: '#DIV/0!' }],
    ['Construction', 'Reinforced concrete frame'],
  ]), 'Schedule')
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([]), 'Blank')
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Loading', 'Factor'], ['Catastrophe', 1.15]]), 'Workings')
  wb.Workbook = { Sheets: [{ Hidden: 0 }, { Hidden: 0 }, { Hidden: 1 }] }
  return wb
}

/** The words a reader must bring out of the schedule (values as the adapter writes them). */
export const SCHEDULE_WORDS = 'Schedule Field Value Insured Harbour Holdings Limited Sum insured 2500000 Inception 2025-04-01 Sprinklered true Flood zone false Premium 5000 Loss ratio #DIV/0! Construction Reinforced concrete frame Blank Workings Loading Factor Catastrophe 1.15'

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships'

/** How a hand-assembled XLSX package is laid out. */
export interface PackageLayout {
  /** Every SpreadsheetML element under a namespace prefix (`s:workbook`, `s:c`). */
  prefix?: string
  /** Rows and cells without `r` attributes (their position is their order). */
  noRefs?: boolean
  /** LibreOffice's part order: the sheet before the styles and shared strings, the manifest last. */
  libreOfficeOrder?: boolean
  /** The main part's content type: a macro-enabled workbook, with a VBA project part. */
  macroEnabled?: boolean
  /**
   * How the total row's formula is stored, as writers that do not calculate leave it: with no result
   * at all (`missing`, openpyxl) or with a placeholder 0 and the workbook asking to be recalculated
   * when opened (`placeholder`, XlsxWriter: `fullCalcOnLoad`). Default: its calculated result.
   */
  totalResult?: 'missing' | 'placeholder'
}

/**
 * A loss run as an XLSX package assembled part by part: shared strings (one of rich text runs), an
 * inline string, numbers, a date by style, booleans TRUE and FALSE, a SUM formula with its cached
 * result.
 */
export function lossRunPackage(layout: PackageLayout = {}): Bytes {
  const p = layout.prefix ? `${layout.prefix}:` : ''
  const ns = layout.prefix ? `xmlns:${layout.prefix}="${MAIN}"` : `xmlns="${MAIN}"`
  const strings = ['Claim', 'Date of loss', 'Incurred', 'Open', 'C-101', 'C-102', 'Total']
  const sst = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<${p}sst ${ns} count="8" uniqueCount="8">${strings.map((s) => `<${p}si><${p}t>${s}</${p}t></${p}si>`).join('')}`
    + `<${p}si><${p}r><${p}t xml:space="preserve">Water </${p}t></${p}r><${p}r><${p}rPr><${p}b/></${p}rPr><${p}t>escape</${p}t></${p}r></${p}si></${p}sst>`
  const ref = (col: string, row: number) => (layout.noRefs ? '' : ` r="${col}${row}"`)
  const rowTag = (row: number, cells: string) => `<${p}row${layout.noRefs ? '' : ` r="${row}"`}>${cells}</${p}row>`
  const s = (col: string, row: number, i: number) => `<${p}c${ref(col, row)} t="s"><${p}v>${i}</${p}v></${p}c>`
  const n = (col: string, row: number, v: number, style = '') => `<${p}c${ref(col, row)}${style}><${p}v>${v}</${p}v></${p}c>`
  const b = (col: string, row: number, v: 0 | 1) => `<${p}c${ref(col, row)} t="b"><${p}v>${v}</${p}v></${p}c>`
  const inline = (col: string, row: number, text: string) => `<${p}c${ref(col, row)} t="inlineStr"><${p}is><${p}t>${text}</${p}t></${p}is></${p}c>`
  const rows = [
    rowTag(1, s('A', 1, 0) + s('B', 1, 1) + s('C', 1, 2) + s('D', 1, 3) + inline('E', 1, 'Cause')),
    rowTag(2, s('A', 2, 4) + n('B', 2, serial(2023, 3, 4), ' s="1"') + n('C', 2, 12500.5) + b('D', 2, 0) + s('E', 2, 7)),
    rowTag(3, s('A', 3, 5) + n('B', 3, serial(2023, 8, 19), ' s="1"') + n('C', 3, 3200) + b('D', 3, 1) + inline('E', 3, 'Storm damage to roof')),
    rowTag(4, s('A', 4, 6) + `<${p}c${ref('B', 4)}/>` + `<${p}c${ref('C', 4)}><${p}f>SUM(C2:C3)</${p}f>${{ missing: '', placeholder: `<${p}v>0</${p}v>` }[layout.totalResult!] ?? `<${p}v>15700.5</${p}v>`}</${p}c>`),
  ]
  const sheet = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<${p}worksheet ${ns} xmlns:r="${RELS}"><${p}sheetData>${rows.join('')}</${p}sheetData></${p}worksheet>`
  const workbook = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<${p}workbook ${ns} xmlns:r="${RELS}"><${p}sheets><${p}sheet name="Loss run" sheetId="1" r:id="rId1"/></${p}sheets>${layout.totalResult === 'placeholder' ? `<${p}calcPr fullCalcOnLoad="1"/>` : ''}</${p}workbook>`
  const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<${p}styleSheet ${ns}><${p}numFmts count="1"><${p}numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/></${p}numFmts>`
    + `<${p}fonts count="1"><${p}font/></${p}fonts><${p}fills count="1"><${p}fill/></${p}fills><${p}borders count="1"><${p}border/></${p}borders>`
    + `<${p}cellStyleXfs count="1"><${p}xf numFmtId="0"/></${p}cellStyleXfs><${p}cellXfs count="2"><${p}xf numFmtId="0"/><${p}xf numFmtId="164" applyNumberFormat="1"/></${p}cellXfs></${p}styleSheet>`
  const main = layout.macroEnabled ? 'application/vnd.ms-excel.sheet.macroEnabled.main+xml' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml'
  const types = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`
    + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    + (layout.macroEnabled ? '<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/>' : '')
    + `<Override PartName="/xl/workbook.xml" ContentType="${main}"/>`
    + '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    + '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    + '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
  const rootRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`
  const bookRels = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/>`
    + `<Relationship Id="rId2" Type="${RELS}/styles" Target="styles.xml"/><Relationship Id="rId3" Type="${RELS}/sharedStrings" Target="sharedStrings.xml"/>`
    + (layout.macroEnabled ? `<Relationship Id="rId4" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject" Target="vbaProject.bin"/>` : '')
    + '</Relationships>'
  const parts: Record<string, Uint8Array> = layout.libreOfficeOrder
    ? { '_rels/.rels': strToU8(rootRels), 'xl/workbook.xml': strToU8(workbook), 'xl/_rels/workbook.xml.rels': strToU8(bookRels), 'xl/worksheets/sheet1.xml': strToU8(sheet), 'xl/styles.xml': strToU8(styles), 'xl/sharedStrings.xml': strToU8(sst), '[Content_Types].xml': strToU8(types) }
    : { '[Content_Types].xml': strToU8(types), '_rels/.rels': strToU8(rootRels), 'xl/workbook.xml': strToU8(workbook), 'xl/_rels/workbook.xml.rels': strToU8(bookRels), 'xl/sharedStrings.xml': strToU8(sst), 'xl/styles.xml': strToU8(styles), 'xl/worksheets/sheet1.xml': strToU8(sheet) }
  // A macro project is opaque bytes to the reader: it is never run nor kept.
  if (layout.macroEnabled) parts['xl/vbaProject.bin'] = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...new Uint8Array(504)])
  return zipSync(parts, { level: 6 }) as Bytes
}

/** The rows the loss run must read as (a row's text). */
export const LOSS_RUN_ROWS = [
  'Claim | Date of loss | Incurred | Open | Cause',
  'C-101 | 2023-03-04 | 12500.5 | false | Water escape',
  'C-102 | 2023-08-19 | 3200 | true | Storm damage to roof',
  'Total |  | 15700.5',
]

/** The words of a text, lower case, split at whitespace and the cell separator. */
export const wordsOf = (text: string) => text.toLowerCase().split(/[\s|]+/).filter((w) => w !== '')

/** The share of `known` words found among the words of `text` (each occurrence counted once). */
export function recall(known: string, text: string): number {
  const have = new Map<string, number>()
  for (const w of wordsOf(text)) have.set(w, (have.get(w) ?? 0) + 1)
  const want = wordsOf(known)
  let found = 0
  for (const w of want) {
    const n = have.get(w) ?? 0
    if (n > 0) { found++; have.set(w, n - 1) }
  }
  return want.length === 0 ? 1 : found / want.length
}

/** A SheetJS-written workbook re-zipped with a part replaced (for hostile variants). */
export function withPart(bytes: Uint8Array, name: string, content: Uint8Array): Bytes {
  return zipSync({ ...unzipSync(bytes), [name]: content }, { level: 6 }) as Bytes
}

/**
 * An XLS (BIFF8) workbook of one sheet holding `rows` x `cols` number cells (65,536 x 256 is the
 * whole BIFF8 grid, ~100 MB). SheetJS writes the workbook's globals and the sheet's BOF; the cells
 * are MULRK records (six bytes a cell) appended in place of the sheet's own records.
 */
export async function hugeXls(rows: number, cols: number): Promise<Bytes> {
  const CFB = (await import('cfb')).default
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['x']]), 'Grid')
  const container = CFB.read(writeBook(wb, 'biff8'), { type: 'array' })
  const entry = CFB.find(container, 'Workbook')!
  const stream = Uint8Array.from(entry.content as ArrayLike<number>)
  const view = new DataView(stream.buffer)
  // The globals' BoundSheet8 record (0x0085) holds the sheet substream's offset.
  let at = 0
  let sheetAt = -1
  while (at < stream.length) {
    const type = view.getUint16(at, true)
    const len = view.getUint16(at + 2, true)
    if (type === 0x0085) { sheetAt = view.getUint32(at + 4, true); break }
    at += 4 + len
  }
  const bof = stream.subarray(sheetAt, sheetAt + 4 + view.getUint16(sheetAt + 2, true))
  const mulrk = 4 + 4 + 6 * cols + 2
  const out = new Uint8Array(sheetAt + bof.length + 18 + rows * mulrk + 4)
  const w = new DataView(out.buffer)
  out.set(stream.subarray(0, sheetAt))
  out.set(bof, sheetAt)
  let p = sheetAt + bof.length
  // DIMENSIONS: rows [0, rows), columns [0, cols).
  w.setUint16(p, 0x0200, true); w.setUint16(p + 2, 14, true); w.setUint32(p + 4, 0, true); w.setUint32(p + 8, rows, true); w.setUint16(p + 12, 0, true); w.setUint16(p + 14, cols, true)
  p += 18
  for (let r = 0; r < rows; r++) {
    w.setUint16(p, 0x00bd, true); w.setUint16(p + 2, mulrk - 4, true); w.setUint16(p + 4, r, true); w.setUint16(p + 6, 0, true)
    let c = p + 8
    for (let k = 0; k < cols; k++, c += 6) { w.setUint16(c, 15, true); w.setUint32(c + 2, (((r + k) % 1000) << 2) | 0x02, true) }
    w.setUint16(c, cols - 1, true)
    p += mulrk
  }
  w.setUint16(p, 0x000a, true); w.setUint16(p + 2, 0, true) // EOF
  entry.content = out as unknown as typeof entry.content
  entry.size = out.length
  return new Uint8Array(CFB.write(container, { type: 'array', fileType: 'cfb' }) as ArrayLike<number>) as Bytes
}

/**
 * The schedule as ODS with its Workings sheet hidden the way LibreOffice hides one (an automatic
 * table style with `table:display="false"`): SheetJS's ODS writer does not write hidden sheets.
 */
export function scheduleOdsWithHiddenSheet(): Bytes {
  const parts = unzipSync(writeBook(scheduleBook(), 'ods'))
  let content = new TextDecoder().decode(parts['content.xml'])
  const style = '<style:style style:name="ta_hidden" style:family="table"><style:table-properties table:display="false"/></style:style>'
  content = content.includes('<office:automatic-styles>')
    ? content.replace('<office:automatic-styles>', `<office:automatic-styles>${style}`)
    : content.replace('<office:body>', `<office:automatic-styles>${style}</office:automatic-styles><office:body>`)
  content = content.replace(/<table:table ([^>]*?)table:name="Workings"([^>]*)>/, (tag) => tag.replace(/table:style-name="[^"]*"/, '').replace('<table:table ', '<table:table table:style-name="ta_hidden" '))
  const { mimetype, ...rest } = parts
  return zipSync({ mimetype: [mimetype!, { level: 0 }], ...rest, 'content.xml': strToU8(content) }) as Bytes
}
