/**
 * Spreadsheets (XLSX), read with `exceljs`'s streaming reader: each sheet is a page (its name kept
 * on its blocks and as a heading block), each non-empty row a `table_row` block whose text is the
 * cells joined by " | " and whose `cells` name each value by its column (the sheet's first row).
 * Formulas give their cached results; dates become ISO dates; numbers exact decimal strings (the
 * shortest that reads back as the stored number); hidden sheets are read like visible ones. The
 * package's XML is bounded before reading, and reading stops at the block limit.
 */
import { Readable } from 'node:stream'
import ExcelJS from 'exceljs'
import Big from 'big.js'
import { assertZipInflatesWithin } from './zip-bounds'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter, type ExtractedPage, type Segment } from './types'
import { columnNames } from './columns'

/** A cell value as text: the cached result of a formula, ISO dates, exact decimals. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? new Big(value).toFixed() : ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return ''
    const iso = value.toISOString()
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.replace('.000Z', 'Z')
  }
  if (typeof value === 'string') return value.replace(/\s+/g, ' ').trim()
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>
    if ('result' in v) return cellText(v.result)
    if ('formula' in v || 'sharedFormula' in v) return ''
    if (Array.isArray(v.richText)) return cellText((v.richText as { text: string }[]).map((r) => r.text).join(''))
    if ('text' in v) return cellText(v.text)
    if ('error' in v) return String(v.error)
  }
  return String(value)
}

/** The XLSX adapter. */
export const readXlsx: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  assertZipInflatesWithin(bytes, options.maxInflatedBytes, (name) => /\.(xml|rels)$/i.test(name))
  const rowLimit = options.maxBlocks ?? Number.POSITIVE_INFINITY
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)), {
    sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', worksheets: 'emit', entries: 'emit',
  } as ExcelJS.stream.xlsx.WorkbookStreamReaderOptions)
  const pages: ExtractedPage[] = []
  const notes: string[] = []
  let rows = 0
  let stopped = false
  try {
    for await (const sheet of reader as AsyncIterable<ExcelJS.stream.xlsx.WorksheetReader & { name: string }>) {
      if (stopped) break
      const page = pages.length + 1
      if (page > options.maxPages) {
        pages.push({ page, segments: [], outcome: 'unreadable', reason: `beyond the page limit ${options.maxPages} (${options.maxPagesSource ?? 'SVC_PARSE_MAX_PAGES'})` })
        continue
      }
      const name = sheet.name || `Sheet ${page}`
      const segments: Segment[] = [{ kind: 'heading', text: name, sheet: name }]
      let columns: string[] | undefined
      for await (const row of sheet as AsyncIterable<ExcelJS.Row>) {
        const raw = row.values as unknown[] // sparse: an empty cell is a hole
        const values = Array.from({ length: Math.max(0, raw.length - 1) }, (_, i) => cellText(raw[i + 1]))
        while (values.length > 0 && values[values.length - 1] === '') values.pop()
        if (values.length === 0) continue
        if (rows >= rowLimit) {
          stopped = true
          notes.push(`rows after the first ${rowLimit} were not read (block limit, SVC_PARSE_MAX_BLOCKS)`)
          break
        }
        rows++
        if (!columns) columns = columnNames(values, values.length)
        else if (values.length > columns.length) columns = columnNames(columns, values.length)
        segments.push({
          kind: 'table_row',
          text: values.map((v) => v.replaceAll('|', '/')).join(' | '),
          cells: values.map((value, i) => ({ column: columns![i]!, value })),
          sheet: name,
        })
      }
      pages.push({ page, segments: segments.length > 1 ? segments : [], ...(segments.length > 1 ? {} : { outcome: 'blank' as const }) })
    }
  } catch (e) {
    if (e instanceof UnreadableDocument) throw e
    if (pages.length === 0) throw new UnreadableDocument('the XLSX package could not be read')
    notes.push('the rest of the workbook could not be read')
  }
  if (pages.length === 0) throw new UnreadableDocument('the workbook holds no sheet')
  return { pages, degraded: notes.length > 0, notes }
}
