/**
 * Spreadsheets (XLSX, XLSM, XLS, ODS), read with SheetJS (`@e965/xlsx`, the 0.20 line as published
 * on the npm registry): each sheet is a page (its name kept on its blocks and as a heading block),
 * each non-empty row a `table_row` block whose text is the cells joined by " | " and whose `cells`
 * name each value by its column (the sheet's first non-empty row). Values are what the cell holds,
 * not how it is shown (so column sums stay exact): formulas give their cached results, numbers exact
 * decimal strings of their 15 significant digits (Excel's precision: no binary noise such as 0.30000000000000004), numbers whose number format is a date or time ISO dates and times, numbers
 * whose format is a percentage as the percentage it shows, exactly (0.0425 as `4.25%`: a rate read
 * as 0.0425 compared with "at most 5" as if it were 0.0425 %, and a PDF's or a letter's `4.25%`
 * reads 4.25 %), numbers whose format shows a currency with its ISO code (`1250.5 EUR`: a
 * schedule's sums insured in two currencies are not one column of figures), booleans
 * `true`/`false`, errors as written. A formula the file holds no result for (a workbook written by
 * a program that does not calculate, e.g. openpyxl, and never opened in a spreadsheet program) is
 * never read as empty: its cell says `(formula not calculated)` and the parse is degraded, naming
 * the cells (SheetJS drops such a cell unless asked for stubs). Hidden sheets are read and their heading says so; an empty
 * sheet keeps its name in a heading of its own. Macros (XLSM) are never run nor kept. A zip
 * package's XML is bounded before reading; rows past the block limit are never built.
 */
import * as XLSX from '@e965/xlsx'
import * as cptable from '@e965/xlsx/dist/cpexcel.full.mjs'
import Big from 'big.js'
import { boundXlsStream } from './xls-bounds'
import { boundXlsxSheets, odsHiddenSheets } from './xlsx-bounds'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter, type ExtractedPage, type Segment } from './types'
import { columnNames } from './columns'
import { numberFormatOf } from './number-formats'

// Code pages of BIFF5 and older XLS strings (and of XLS files that declare one).
XLSX.set_cptable(cptable)

/** The text of a formula cell that holds no result: not a figure, and never an empty cell. */
export const UNCALCULATED = '(formula not calculated)'

/** Cells named in a sheet's note on uncalculated formulas, at most. */
const NAMED_CELLS = 5

/** Up to NAMED_CELLS cell references, and how many more there are. */
const cellList = (named: string[], count: number) => `${named.join(', ')}${count > named.length ? `, ${count - named.length} more` : ''}`

/** The error codes of a cell that holds an error, as Excel writes them. */
const ERRORS: Record<number, string> = { 0x00: '#NULL!', 0x07: '#DIV/0!', 0x0f: '#VALUE!', 0x17: '#REF!', 0x1d: '#NAME?', 0x24: '#NUM!', 0x2a: '#N/A', 0x2b: '#GETTING_DATA' }

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/**
 * A date or time serial as ISO text: a date (`2024-01-15`), a UTC timestamp when it has a time of
 * day (`2024-01-15T09:30:00Z`), a time alone (`09:30:00`) when it has no day. Timezone-free: the
 * serial is split into its calendar parts, never through the local clock.
 */
export function serialText(serial: number, date1904: boolean): string {
  // A column of dates repeats its days: each serial is worked out once (a bounded memo).
  const memo = date1904 ? serials1904 : serials
  const known = memo.get(serial)
  if (known !== undefined) return known
  const text = serialTextOf(serial, date1904)
  if (memo.size >= 50_000) memo.clear()
  memo.set(serial, text)
  return text
}
const serials = new Map<number, string>()
const serials1904 = new Map<number, string>()

function serialTextOf(serial: number, date1904: boolean): string {
  const p = XLSX.SSF.parse_date_code(serial, { date1904 })
  if (!p) return decimal(serial)
  const time = `${pad(p.H)}:${pad(p.M)}:${pad(p.S)}`
  if (Math.floor(serial) === 0 && !date1904) return time
  const date = `${pad(p.y, 4)}-${pad(p.m)}-${pad(p.d)}`
  return p.H === 0 && p.M === 0 && p.S === 0 ? date : `${date}T${time}Z`
}

/**
 * A number as the spreadsheet holds it: at most 15 significant digits, as Excel keeps and shows
 * them (`=0.1+0.2` stores 0.30000000000000004 and is 0.3; `=100*1.1` is 110, not
 * 110.00000000000001, which no other document's 110 would equal), never in exponent notation.
 */
function decimal(v: number): string {
  const s = String(Number(v.toPrecision(15)))
  return s.includes('e') ? new Big(s).toFixed() : s
}

/** A number as its format shows it (number-formats.ts): a date or time, a percentage, a currency's code after it. */
function numberText(v: number, format: XLSX.NumberFormat | undefined, date1904: boolean): string {
  if (format === undefined) return decimal(v)
  const { kind, currency } = numberFormatOf(String(format))
  if (kind === 'date') return serialText(v, date1904)
  if (kind === 'percent') return `${new Big(decimal(v)).times(100).toFixed()}%`
  return currency ? `${decimal(v)} ${currency}` : decimal(v)
}

/** A cell as text: its cached value, exact decimals, ISO dates for date-formatted numbers, percentages as shown. */
export function cellText(cell: XLSX.CellObject | undefined, date1904: boolean): string {
  if (!cell) return ''
  const v = cell.v
  switch (cell.t) {
    case 'n':
      if (typeof v !== 'number' || !Number.isFinite(v)) return ''
      return numberText(v, cell.z, date1904)
    case 'b': return v ? 'true' : 'false'
    case 'e':
      if (v === undefined && cell.f !== undefined) return UNCALCULATED // a formula written without its result
      return typeof v === 'number' ? (ERRORS[v] ?? cell.w ?? '#ERROR') : String(cell.w ?? v ?? '#ERROR')
    case 'd': {
      const d = v instanceof Date ? v : new Date(String(v))
      if (Number.isNaN(d.getTime())) return ''
      const iso = d.toISOString()
      return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z')
    }
    case 's': return typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : ''
    case 'z': return cell.f !== undefined ? UNCALCULATED : '' // a stub: a formula without its result, or an empty styled cell
    default: return ''
  }
}

/** Whether the bytes are a zip package (XLSX, XLSM, ODS) or an OLE compound file (XLS). */
function containerOf(bytes: Uint8Array): 'zip' | 'ole' | undefined {
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return 'zip'
  if (bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0) return 'ole'
  return undefined
}

/**
 * Cells SheetJS may build of one sheet. A sheet is read to the row that keeps it within this (and
 * within the block limit): 20,000 rows of 256 cells would take SheetJS over a gigabyte.
 */
export const MAX_SHEET_CELLS = 1_000_000

const READ_OPTIONS: XLSX.ParsingOptions = {
  type: 'buffer', dense: true, cellNF: true, cellText: false, cellFormula: false, cellHTML: false, cellStyles: false,
  cellDates: false, bookVBA: false, bookDeps: false, bookFiles: false, WTF: false,
}

/**
 * A zip package's: a formula cell without a stored result is kept as a stub that names its formula
 * (without stubs SheetJS drops it, and a total row read as if it had no total). BIFF (XLS) stores
 * every formula's result, and turning its formulas back into text costs: not there.
 */
const PACKAGE_READ_OPTIONS: XLSX.ParsingOptions = { ...READ_OPTIONS, cellFormula: true, sheetStubs: true }

/** SheetJS's reader of a BIFF workbook stream (exported by the package, not in its types). */
const parseXlsCfb = (XLSX as unknown as { parse_xlscfb(cfb: unknown, options: XLSX.ParsingOptions): XLSX.WorkBook }).parse_xlscfb

/**
 * Reads an XLS: the compound file is opened, its workbook stream cut to the row and cell bounds
 * (xls-bounds.ts), then parsed. Returns whether a sheet was cut by the cell bound.
 */
function readXls(buffer: Buffer, sheetRows: number): { book: XLSX.WorkBook; cellBound: boolean; cut: boolean } {
  const cfb = XLSX.CFB.read(buffer, { type: 'buffer' })
  if (XLSX.CFB.find(cfb, 'EncryptedPackage') || XLSX.CFB.find(cfb, '/encryption')) throw new UnreadableDocument('the workbook is encrypted')
  const entry = XLSX.CFB.find(cfb, '/Workbook') ?? XLSX.CFB.find(cfb, '/Book')
  if (!entry?.content) throw new UnreadableDocument('the file holds no Excel workbook stream')
  const { stream, cut } = boundXlsStream(entry.content as Uint8Array, sheetRows > 0 ? sheetRows : Number.POSITIVE_INFINITY, MAX_SHEET_CELLS)
  const cellBound = [...cut.values()].some((row) => sheetRows === 0 || row < sheetRows)
  // The workbook stream alone, as SheetJS reads a bare BIFF stream.
  const workbook = Buffer.from(stream.buffer, stream.byteOffset, stream.byteLength)
  return { book: parseXlsCfb(workbook, { ...READ_OPTIONS, ...(sheetRows > 0 ? { sheetRows } : {}) }), cellBound, cut: cut.size > 0 }
}

/** The spreadsheet adapter. */
export const readSpreadsheet: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  const container = containerOf(bytes)
  if (!container) throw new UnreadableDocument('the file is neither a zip package nor an OLE compound file')
  const rowLimit = options.maxBlocks ?? Number.POSITIVE_INFINITY
  // A Buffer, not an array: SheetJS's compound-file reader copies arrays byte by byte (30 s and
  // 3 GB for a 100 MB XLS) but slices Buffers (half a second).
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let book: XLSX.WorkBook
  const sheetRows = Number.isFinite(rowLimit) ? rowLimit + 1 : 0
  let cellBound = false
  let cut = false
  let odsHidden = new Set<string>()
  try {
    if (container === 'ole') {
      ({ book, cellBound, cut } = readXls(buffer, sheetRows))
    } else {
      // Rows past the limits are never built (a sheet of a million rows stays small).
      const bounded = boundXlsxSheets(bytes, options.maxInflatedBytes, sheetRows > 0 ? sheetRows : Number.POSITIVE_INFINITY, MAX_SHEET_CELLS)
      cellBound = bounded.cellBound
      cut = bounded.cut
      const content = bounded.parts?.['content.xml']
      if (content) odsHidden = odsHiddenSheets(new TextDecoder().decode(content))
      const input = bounded.bytes === bytes ? buffer : Buffer.from(bounded.bytes.buffer, bounded.bytes.byteOffset, bounded.bytes.byteLength)
      book = XLSX.read(input, { ...PACKAGE_READ_OPTIONS, ...(sheetRows > 0 ? { sheetRows } : {}) })
    }
  } catch (e) {
    if (e instanceof UnreadableDocument) throw e
    throw new UnreadableDocument(e instanceof Error && /password|encrypt/i.test(e.message) ? 'the workbook is encrypted' : 'the workbook could not be read')
  }
  const date1904 = Boolean(book.Workbook?.WBProps?.date1904)
  // A workbook whose writer did not calculate it asks to be on load (Excel clears the flag when it saves).
  const recalculateOnLoad = /^(1|true)$/i.test(String((book.Workbook as { CalcPr?: { fullCalcOnLoad?: unknown } } | undefined)?.CalcPr?.fullCalcOnLoad ?? ''))
  const pages: ExtractedPage[] = []
  const notes: string[] = []
  let rows = 0
  let full = false
  book.SheetNames.forEach((sheetName, index) => {
    const page = index + 1
    if (page > options.maxPages) {
      pages.push({ page, segments: [], outcome: 'unreadable', reason: `beyond the page limit ${options.maxPages} (${options.maxPagesSource ?? 'SVC_PARSE_MAX_PAGES'})` })
      return
    }
    if (full) { pages.push({ page, segments: [], outcome: 'unreadable', reason: `not read: the block limit ${rowLimit} was reached (SVC_PARSE_MAX_BLOCKS)` }); return }
    const sheet = book.Sheets[sheetName]
    const name = sheetName || `Sheet ${page}`
    const hidden = (book.Workbook?.Sheets?.[index]?.Hidden ?? 0) > 0 || odsHidden.has(sheetName)
    const segments: Segment[] = []
    let columns: string[] | undefined
    const data = (sheet?.['!data'] ?? []) as (XLSX.CellObject | undefined)[][]
    let lastRow = 0
    const uncalculated: string[] = []
    let uncalculatedCount = 0
    const formulas: string[] = []
    let formulaCount = 0
    for (let r = 0; r < data.length; r++) {
      const row = data[r]
      if (!row) continue
      const values = Array.from({ length: row.length }, (_, i) => cellText(row[i], date1904))
      for (let i = 0; i < values.length; i++) {
        if (row[i]?.f === undefined) continue
        if (values[i] === UNCALCULATED) {
          if (++uncalculatedCount <= NAMED_CELLS) uncalculated.push(XLSX.utils.encode_cell({ r, c: i }))
        } else if (recalculateOnLoad && ++formulaCount <= NAMED_CELLS) formulas.push(XLSX.utils.encode_cell({ r, c: i }))
      }
      while (values.length > 0 && values[values.length - 1] === '') values.pop()
      if (values.length === 0) continue
      if (rows >= rowLimit) { full = true; break }
      rows++
      lastRow = r + 1
      if (!columns) columns = columnNames(values, values.length)
      else if (values.length > columns.length) columns = columnNames(columns, values.length)
      segments.push({
        kind: 'table_row',
        text: values.map((v) => v.replaceAll('|', '/')).join(' | '),
        cells: values.map((value, i) => ({ column: columns![i]!, value })),
        sheet: name,
      })
    }
    if (uncalculatedCount > 0) {
      notes.push(`sheet ${page} has ${uncalculatedCount} formula cell${uncalculatedCount === 1 ? '' : 's'} with no calculated result (${cellList(uncalculated, uncalculatedCount)}): the file was saved without calculating them; open and save it in a spreadsheet program to read their values`)
    }
    if (formulaCount > 0) {
      notes.push(`sheet ${page} has ${formulaCount} formula cell${formulaCount === 1 ? '' : 's'} whose stored result may not be current (${cellList(formulas, formulaCount)}): the workbook asks to be recalculated when opened (fullCalcOnLoad), as a program that writes formulas without calculating them leaves it; open and save it in a spreadsheet program to read their values`)
    }
    if (full) notes.push(`sheet ${page} was read to row ${lastRow}: the block limit ${rowLimit} was reached (SVC_PARSE_MAX_BLOCKS)`)
    else if (sheet?.['!fullref'] && sheet['!fullref'] !== sheet['!ref']) {
      // SheetJS keeps the sheet's full range when rows were left unbuilt (the row or cell bound).
      const declared = XLSX.utils.decode_range(sheet['!fullref']).e.r + 1
      if (declared > lastRow) {
        notes.push(cellBound
          ? `sheet ${page} was read to row ${lastRow} of ${declared}: ${MAX_SHEET_CELLS} cells a sheet at most (the spreadsheet reader's bound)`
          : `sheet ${page} was read to row ${lastRow} of ${declared}: the block limit ${rowLimit} (SVC_PARSE_MAX_BLOCKS)`)
      }
    }
    const label = `${name}${hidden ? ' (hidden sheet)' : ''}${segments.length === 0 ? ' (empty sheet)' : ''}`
    const heading: Segment = { kind: 'heading', text: label, sheet: name }
    pages.push(segments.length > 0 ? { page, segments: [heading, ...segments] } : { page, segments: [heading], outcome: 'blank' })
  })
  // A sheet cut before SheetJS saw it may not declare its full size: say so all the same.
  if (cut && notes.length === 0) {
    notes.push(cellBound
      ? `rows of a sheet past its first ${MAX_SHEET_CELLS} cells were not read (the spreadsheet reader's bound)`
      : `rows of a sheet past row ${sheetRows} were not read (block limit ${rowLimit}, SVC_PARSE_MAX_BLOCKS)`)
  }
  if (pages.length === 0) throw new UnreadableDocument('the workbook holds no sheet')
  return { pages, degraded: notes.length > 0, notes }
}
