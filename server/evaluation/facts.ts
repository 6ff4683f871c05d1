/**
 * Fact mining: typed values read out of a case's blocks, each with the block (and the exact line)
 * it came from, so an answer built on a fact can cite it. Three shapes are read:
 *
 *  - "Label: value", "Label ..... value" (dot leaders) and "Label     value" (two aligned columns,
 *    a value with a digit) lines in any block    -> `label` (and `<document>.label`)
 *  - key/value table rows ("Label | value")     -> same paths (two-cell rows outside CSV files)
 *  - columns of a table (every CSV file and spreadsheet sheet, and rows of three or more cells): the
 *    first row names the columns, and each column gives `column.first|last|count` plus `min|max` for
 *    numbers and dates and `sum` for numbers (also under `<document>.column.…`); a row whose first
 *    cell is "Total" (or "Subtotal", "Grand total") is left out of those and answers `column.total`.
 *
 * Paths are snake_case: "Annual revenue" -> `annual_revenue`; `<document>` is the file name without
 * its extension ("bank_statement.csv" -> `bank_statement`). When several facts share a path the
 * first in document order (documents by upload, blocks by position) answers.
 */
import Big from 'big.js'
import { parseDate, parseNumber, parseValue, type DecimalMark, type TypedValue } from './values'
import { parseFactPath, type FactPathAlternative } from './fact-path'

/** A block of a case as the evaluation reads it. */
export interface CaseBlock {
  id: string
  documentId: string
  /** The document's file name (for fact namespaces and the report). */
  filename: string
  contentType: string
  /** Position in the case: documents in upload order, then block position. */
  order: number
  page: number
  kind: string
  text: string
  /** The document's type found at ingestion (document-types.ts), a second namespace of its facts. */
  documentType?: string
}

/** A table of a document: its column names (snake_case) and its rows below the header, in order. */
export interface Table { documentId: string; columns: string[]; rows: CaseBlock[] }

/** A fact found for a fact path, with a note when the finding needs one (several rows matched). */
export interface Resolved { fact: Fact; note?: string }

/** Alternative names of a label: every name of a group answers for the others. */
export type SynonymTable = ReadonlyMap<string, readonly string[]>

/** One mined fact. */
export interface Fact {
  /** The canonical path (without the document namespace). */
  path: string
  value: TypedValue
  /** The text the value was read from. */
  raw: string
  blockId: string
  documentId: string
  page: number
  /** A span of the block's text that shows the fact (a line or the whole row). */
  quote: string
}

/** Facts by path, first-in-document-order first. */
export interface FactIndex {
  all: Fact[]
  tables: Table[]
  /** The fact answering a path (plain or `<document>.`-qualified), or undefined. */
  lookup(path: string): Fact | undefined
  /**
   * The fact answering a question's `fact_path` (fact-path.ts): its alternatives in order, each
   * under its own name and then its synonyms; a row selector reads the row's cell. Undefined when
   * none is in the documents (or the path does not parse).
   */
  resolve(factPath: string): Resolved | undefined
}

/** snake_case of a label: lower case, runs of other characters as one "_", at most 64 characters. */
export function slug(label: string): string {
  return label.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64).replace(/_+$/, '')
}

/** The namespace of a document: its file name without extension, as a slug. */
export function documentNamespace(filename: string): string {
  return slug(filename.replace(/\.[A-Za-z0-9]{1,8}$/, '')) || 'document'
}

const LABEL_LINE = /^\s*([A-Za-z][A-Za-z0-9 ()/&'’.,#%-]{0,79}?)\s*:\s*(?!\/\/)(\S.*?)\s*$/
/** "Label ........ value" (a dot leader of three or more dots or middle dots). */
const LEADER_LINE = /^\s*([A-Za-z][A-Za-z0-9 ()/&'’,#%-]{0,79}?)\s*[.·…]{3,}\s*(\S.*?)\s*$/
/** "Label      value" (two columns: three or more spaces, or a tab, between them). */
const COLUMNS_LINE = /^\s*([A-Za-z][A-Za-z0-9 ()/&'’.,#%-]{0,79}?)(?: {3,}|\t+)(\S.*?)\s*$/

/**
 * A label/value line split, or null when the line is not one: "Label: value", "Label ..... value"
 * (dot leaders) or "Label     value" (two aligned columns; the value must hold a digit, so two
 * words far apart in prose are not read as a fact).
 */
export function labelValue(line: string): { label: string; value: string } | null {
  const m = LABEL_LINE.exec(line) ?? LEADER_LINE.exec(line) ?? columns(line)
  if (!m) return null
  const label = m[1]!.trim()
  if (label.split(/\s+/).length > 8 || slug(label) === '') return null
  return { label, value: m[2]! }
}

const columns = (line: string) => {
  const m = COLUMNS_LINE.exec(line)
  return m && /\d/.test(m[2]!) ? m : null
}

const cellsOf = (text: string) => text.split(' | ').map((c) => c.trim())

/** Blocks of a CSV or spreadsheet: every run of rows is a table, whatever its width. */
const isCsv = (b: CaseBlock) => /^(text\/csv|application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet)\b/i.test(b.contentType) || /\.(csv|xlsx)$/i.test(b.filename)

/** A figure with a decimal comma after dot-grouped thousands (`1.234,50`), and one written the English way (`1,234.50`). */
const COMMA_FIGURE = /(?<![\d.,])\d{1,3}(?:\.\d{3})+,\d+(?![\d.,])/
const POINT_FIGURE = /(?<![\d.,])\d{1,3}(?:,\d{3})+\.\d+(?![\d.,])/

/**
 * The decimal mark of each document of a case, as its own figures show it: `comma` for a document
 * with a figure like `1.234,50` and none like `1,234.50`, else `point`. Only numbers that read
 * both ways (`1.500`, `1,500`) depend on it (parseNumber).
 */
export function decimalMarks(blocks: readonly CaseBlock[]): Map<string, DecimalMark> {
  const seen = new Map<string, { comma: boolean; point: boolean }>()
  for (const b of blocks) {
    const s = seen.get(b.documentId) ?? { comma: false, point: false }
    if (!s.comma && COMMA_FIGURE.test(b.text)) s.comma = true
    if (!s.point && POINT_FIGURE.test(b.text)) s.point = true
    seen.set(b.documentId, s)
  }
  return new Map([...seen].map(([id, s]) => [id, s.comma && !s.point ? 'comma' : 'point']))
}

/** Mines every fact of a case's blocks (given in case order). */
export function mineFacts(blocks: readonly CaseBlock[]): Fact[] {
  return mineCase(blocks).facts
}

/**
 * Mines every fact and table of a case's blocks (given in case order). With `columns: false` the
 * tables are found but their columns' facts (`column.first`, `.sum`, ...) are not mined: the
 * checks at ingestion need the tables and the `Label: value` facts only, and on a large table the
 * column facts are most of the work.
 */
export function mineCase(blocks: readonly CaseBlock[], options: { columns?: boolean } = {}): { facts: Fact[]; tables: Table[]; marks: Map<string, DecimalMark> } {
  const facts: Fact[] = []
  const tables: Table[] = []
  const add = (path: string, value: TypedValue, raw: string, block: CaseBlock, quote: string) => {
    if (path) facts.push({ path, value, raw, blockId: block.id, documentId: block.documentId, page: block.page, quote })
  }
  let run: CaseBlock[] = []
  const tablesPerDocument = new Map<string, number>()
  const marks = decimalMarks(blocks)
  const parse = (raw: string, b: CaseBlock) => parseValue(raw, marks.get(b.documentId))
  const flushRun = () => {
    if (run.length === 0) return
    const wide = run.some((b) => cellsOf(b.text).length >= 3)
    const columnar = isCsv(run[0]!) || wide
    // Two-column rows are label/value pairs; in a spreadsheet they are also a table of two columns.
    if (!wide && !/^text\/csv\b/i.test(run[0]!.contentType)) {
      for (const b of run) {
        const [label, value] = cellsOf(b.text)
        if (label && value && /[A-Za-z]/.test(label)) add(slug(label), parse(value, b), value, b, b.text)
      }
    }
    if (columnar && run.length >= 2) {
      const n = (tablesPerDocument.get(run[0]!.documentId) ?? 0) + 1
      tablesPerDocument.set(run[0]!.documentId, n)
      if (options.columns !== false) mineColumns(run, n, add, (raw) => parse(raw, run[0]!))
      tables.push({ documentId: run[0]!.documentId, columns: cellsOf(run[0]!.text).map(slug), rows: run.slice(1) })
    }
    run = []
  }
  for (const b of blocks) {
    // A CSV whose rows have no separator (one column) is still a table of one column.
    if (b.kind === 'table_row' && (b.text.includes(' | ') || isCsv(b))) {
      if (run.length && run[0]!.documentId !== b.documentId) flushRun()
      run.push(b)
      continue
    }
    flushRun()
    for (const line of b.text.split('\n')) {
      const lv = labelValue(line)
      if (!lv) continue
      const value = parse(lv.value, b)
      add(slug(lv.label), value, lv.value, b, line.trim())
      // "Gross revenue (FY2025)" also answers `gross_revenue`.
      const bare = slug(lv.label.replace(/\([^)]*\)/g, ' '))
      if (bare && bare !== slug(lv.label)) add(bare, value, lv.value, b, line.trim())
    }
  }
  flushRun()
  return { facts, tables, marks }
}

type Add = (path: string, value: TypedValue, raw: string, block: CaseBlock, quote: string) => void


function mineColumns(rows: CaseBlock[], tableNumber: number, add: Add, parse: (raw: string) => TypedValue): void {
  const header = rows[0]!
  const names = cellsOf(header.text).map(slug)
  const prefix = tableNumber > 1 ? `table${tableNumber}_` : ''
  // A total row ("Total", "Subtotal", "Grand total" in its first cell) is not one of the rows it
  // totals: its cells answer `column.total` instead. Each row is split into its cells once (a column at a time re-split every row: a 10,000-row
  // sheet's findings took longer than reading it).
  const split = rows.slice(1).map((row) => ({ row, cells: cellsOf(row.text) }))
  const isTotal = (r: { cells: string[] }) => /^(sub\s*|grand\s*)?totals?\b/i.test(r.cells.find((c) => c !== '') ?? '')
  const totals = split.filter(isTotal)
  const body = split.filter((r) => !isTotal(r))
  names.forEach((name, col) => {
    if (!name) return
    for (const total of totals.slice(-1)) {
      const raw = total.cells[col] ?? ''
      if (raw !== '' && col > 0) add(`${prefix}${name}.total`, parse(raw), raw, total.row, total.row.text)
    }
    const cells = body
      .map(({ row, cells: rowCells }) => ({ row, raw: rowCells[col] ?? '' }))
      .filter((c) => c.raw !== '')
      .map((c) => ({ ...c, value: parse(c.raw) }))
    if (cells.length === 0) return
    const path = `${prefix}${name}`
    const kinds = new Set(cells.map((c) => c.value.type))
    // Numbers of two units (EUR and USD, a percentage and an amount) are not one column of figures:
    // no sum, minimum or maximum across them, which would be a figure of no currency. Cells without
    // a unit go with the one unit there is (an accounts column shows its currency on the first row).
    const units = new Set(cells.map((c) => (c.value as { unit?: string }).unit).filter((u): u is string => u !== undefined))
    const type = kinds.size === 1 && !(kinds.has('number') && units.size > 1) ? [...kinds][0]! : 'text'
    const typed = type === 'text' ? cells.map((c) => ({ ...c, value: { type: 'text', value: c.raw } as TypedValue })) : cells
    const first = typed[0]!
    const last = typed[typed.length - 1]!
    add(`${path}.first`, first.value, first.raw, first.row, first.row.text)
    add(`${path}.last`, last.value, last.raw, last.row, last.row.text)
    add(`${path}.count`, { type: 'number', value: String(typed.length) }, String(typed.length), header, header.text)
    // Exact decimals, parsed once a cell.
    const numbers = type === 'number' ? typed.map((c) => new Big(c.value.value as string)) : []
    if (type === 'number' || type === 'date') {
      const cmp = (a: number, b: number) => type === 'number'
        ? numbers[a]!.cmp(numbers[b]!)
        : (typed[a]!.value.value as string) < (typed[b]!.value.value as string) ? -1 : (typed[a]!.value.value as string) > (typed[b]!.value.value as string) ? 1 : 0
      let lo = 0
      let hi = 0
      for (let i = 0; i < typed.length; i++) {
        if (cmp(i, lo) < 0) lo = i
        if (cmp(i, hi) > 0) hi = i
      }
      const [min, max] = [typed[lo]!, typed[hi]!]
      add(`${path}.min`, min.value, min.raw, min.row, min.row.text)
      add(`${path}.max`, max.value, max.raw, max.row, max.row.text)
    }
    if (type === 'number') {
      const scale = Math.max(0, ...typed.map((c) => ((c.value.value as string).split('.')[1] ?? '').length))
      const sum = numbers.reduce((acc, n) => acc.plus(n), new Big(0))
      const [unit] = units
      add(`${path}.sum`, { type: 'number', value: sum.toFixed(scale), ...(unit ? { unit } : {}) }, sum.toFixed(scale), header, header.text)
    }
  })
}

/** The namespaces of each document of a case: its file name's and, when known, its type. */
export function documentNamespaces(blocks: readonly CaseBlock[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const b of blocks) {
    if (out.has(b.documentId)) continue
    const names = [documentNamespace(b.filename)]
    if (b.documentType && b.documentType !== 'other' && !names.includes(b.documentType)) names.push(b.documentType)
    out.set(b.documentId, names)
  }
  return out
}

/** True when a table cell holds the row key a selector names: as text (any case), number or date. */
export function cellMatches(cell: string, wanted: string): boolean {
  const a = cell.trim()
  const b = wanted.trim()
  if (a.toLowerCase() === b.toLowerCase()) return true
  const na = parseNumber(a)
  const nb = parseNumber(b)
  if (na && nb && new Big(na.value).eq(new Big(nb.value))) return true
  const da = parseDate(a)
  return da !== null && da === parseDate(b)
}

/**
 * Indexes mined facts by plain and document-qualified path (file name and document type), with the
 * tables for row selectors and the synonym table for alternative label names.
 */
export function indexFacts(blocks: readonly CaseBlock[], facts: readonly Fact[], options: { tables?: readonly Table[]; synonyms?: SynonymTable; marks?: ReadonlyMap<string, DecimalMark> } = {}): FactIndex {
  const namespaces = documentNamespaces(blocks)
  const byPath = new Map<string, Fact>()
  for (const f of facts) {
    if (!byPath.has(f.path)) byPath.set(f.path, f)
    for (const ns of namespaces.get(f.documentId) ?? ['document']) {
      const qualified = `${ns}.${f.path}`
      if (!byPath.has(qualified)) byPath.set(qualified, f)
    }
  }
  const tables = [...(options.tables ?? [])]
  // The documents' decimal marks, as mineCase found them (read again only when not given).
  const marks = options.marks ?? (tables.length > 0 ? decimalMarks(blocks) : new Map<string, DecimalMark>())
  const synonyms = options.synonyms ?? new Map<string, readonly string[]>()
  const namesOf = (name: string) => [name, ...(synonyms.get(name) ?? []).filter((n) => n !== name)]
  const allNamespaces = new Set([...namespaces.values()].flat())
  // A path under its own name, then with its label (after an optional namespace) under each synonym.
  const expansions = (path: string): string[] => {
    const segs = path.split('.')
    const out = [path]
    for (const k of segs.length > 1 && allNamespaces.has(segs[0]!) ? [0, 1] : [0]) {
      const head = segs[k]!
      for (const name of namesOf(head)) out.push([...segs.slice(0, k), name, ...segs.slice(k + 1)].join('.'))
    }
    return [...new Set(out)]
  }
  const fromRow = (alt: FactPathAlternative): Resolved | undefined => {
    const segs = alt.path.split('.')
    const ns = segs.length > 1 ? segs.slice(0, -1).join('.') : undefined
    const columns = namesOf(segs[segs.length - 1]!)
    const keys = namesOf(alt.row!.column)
    for (const table of tables) {
      if (ns !== undefined && !(namespaces.get(table.documentId) ?? []).includes(ns)) continue
      const col = table.columns.findIndex((c) => columns.includes(c))
      const key = table.columns.findIndex((c) => keys.includes(c))
      if (col < 0 || key < 0) continue
      const rows = table.rows.filter((r) => cellMatches(cellsOf(r.text)[key] ?? '', alt.row!.value))
      const row = rows[0]
      if (!row) continue
      const raw = cellsOf(row.text)[col] ?? ''
      if (raw === '') continue
      const fact: Fact = { path: alt.path, value: parseValue(raw, marks.get(row.documentId)), raw, blockId: row.id, documentId: row.documentId, page: row.page, quote: row.text }
      return rows.length > 1 ? { fact, note: `${rows.length} rows have ${alt.row!.column} = ${alt.row!.value}; the first answers` } : { fact }
    }
    return undefined
  }
  return {
    all: [...facts],
    tables,
    lookup: (path) => byPath.get(path),
    resolve(factPath) {
      let alternatives: FactPathAlternative[]
      try { alternatives = parseFactPath(factPath) } catch { return undefined }
      for (const alt of alternatives) {
        if (alt.row) {
          const found = fromRow(alt)
          if (found) return found
          continue
        }
        for (const path of expansions(alt.path)) {
          const fact = byPath.get(path)
          if (fact) return { fact }
        }
      }
      return undefined
    },
  }
}
