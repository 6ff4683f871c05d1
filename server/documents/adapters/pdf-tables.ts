/**
 * Tables in born-digital PDFs, recovered from where the text sits: lines are items sharing a
 * baseline, a line's cells are its runs of items separated by wide gaps, and three or more
 * consecutive lines of three or more cells that line up under the first one's columns are a table
 * (with or without ruling lines, which are not needed). The first line names the columns. The
 * page's other text keeps its own order, before and after the table.
 */
import type { Segment } from './types'
import { columnNames } from './columns'

/** A text item of pdf.js's text content (only what layout needs). */
export interface PositionedItem { str?: string; hasEOL?: boolean; transform?: number[]; width?: number }

interface Cell { text: string; x: number; end: number }
interface Line { y: number; size: number; cells: Cell[]; items: number[] }

/** Lines of a page: items on one baseline (within half a font size), cells split at gaps wider than a font size. */
function linesOf(items: PositionedItem[]): Line[] {
  const placed = items
    .map((it, index) => ({ index, str: it.str ?? '', x: it.transform?.[4] ?? 0, y: it.transform?.[5] ?? 0, w: it.width ?? 0, size: Math.hypot(it.transform?.[2] ?? 0, it.transform?.[3] ?? 0) || 10 }))
    .filter((p) => p.str.trim() !== '')
    .sort((a, b) => b.y - a.y || a.x - b.x)
  const lines: Line[] = []
  for (const p of placed) {
    const line = lines.at(-1)
    if (line && Math.abs(line.y - p.y) < line.size / 2) {
      const last = line.cells.at(-1)!
      if (p.x - last.end < p.size) { last.text += (p.x - last.end > p.size * 0.15 ? ' ' : '') + p.str; last.end = p.x + p.w }
      else line.cells.push({ text: p.str, x: p.x, end: p.x + p.w })
      line.items.push(p.index)
    } else {
      lines.push({ y: p.y, size: p.size, cells: [{ text: p.str, x: p.x, end: p.x + p.w }], items: [p.index] })
    }
  }
  for (const l of lines) for (const c of l.cells) c.text = c.text.replace(/\s+/g, ' ').trim()
  return lines
}

/**
 * The header column a cell belongs to: the one whose span (from its start to the next column's
 * start, widened by `tolerance` to the left) overlaps the cell most; -1 when none does.
 */
function columnOf(header: Cell[], cell: Cell, tolerance: number): number {
  let best = -1
  let overlap = 0
  for (let i = 0; i < header.length; i++) {
    const start = header[i]!.x - tolerance
    const end = (header[i + 1]?.x ?? Number.POSITIVE_INFINITY) - tolerance
    const o = Math.min(end, cell.end) - Math.max(start, cell.x)
    if (o > overlap) { overlap = o; best = i }
  }
  return best
}

/** A table found on a page: its rows as values under the header's columns, and the lines it spans. */
interface Table { first: number; last: number; header: string[]; rows: string[][] }

function findTables(lines: Line[]): Table[] {
  const tables: Table[] = []
  let i = 0
  while (i < lines.length) {
    const head = lines[i]!
    if (head.cells.length < 3) { i++; continue }
    const tolerance = head.size
    const rows: string[][] = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j]!
      if (line.cells.length < 2 || line.cells.length > head.cells.length + 1) break
      const values = head.cells.map(() => '')
      let fits = true
      for (const c of line.cells) {
        const col = columnOf(head.cells, c, tolerance)
        if (col < 0) { fits = false; break }
        values[col] = values[col] ? `${values[col]} ${c.text}` : c.text
      }
      if (!fits || values.filter((v) => v !== '').length < 2) break
      rows.push(values)
    }
    if (rows.length >= 2) {
      tables.push({ first: i, last: j - 1, header: head.cells.map((c) => c.text), rows })
      i = j
    } else i++
  }
  return tables
}

/**
 * The segments of a page with its tables as `table_row` blocks (cells named by the header line),
 * or undefined when the page holds no table (the caller keeps its plain text as before).
 */
export function pageWithTables(items: PositionedItem[], textBlocks: (text: string) => Segment[]): Segment[] | undefined {
  const lines = linesOf(items)
  const tables = findTables(lines)
  if (tables.length === 0) return undefined
  const inTable = new Set<number>()
  for (const t of tables) for (let l = t.first; l <= t.last; l++) for (const idx of lines[l]!.items) inTable.add(idx)
  // The other text in its own order, cut at each table by height on the page (y grows upwards).
  const segments: Segment[] = []
  const textWithin = (below: number | undefined, above: number | undefined) => {
    let s = ''
    items.forEach((it, idx) => {
      if (inTable.has(idx)) return
      const y = it.transform?.[5] ?? 0
      if ((below === undefined || y < below) && (above === undefined || y > above)) s += (it.str ?? '') + (it.hasEOL ? '\n' : '')
    })
    return s
  }
  let previousBottom: number | undefined
  for (const t of tables) {
    const top = lines[t.first]!.y + lines[t.first]!.size / 2
    segments.push(...textBlocks(textWithin(previousBottom, top)))
    const columns = columnNames(t.header, t.header.length)
    for (const values of [t.header, ...t.rows]) {
      segments.push({ kind: 'table_row', text: values.map((v) => v.replaceAll('|', '/')).join(' | '), cells: values.map((value, c) => ({ column: columns[c]!, value })) })
    }
    previousBottom = lines[t.last]!.y - lines[t.last]!.size / 2
  }
  segments.push(...textBlocks(textWithin(previousBottom, undefined)))
  return segments
}
