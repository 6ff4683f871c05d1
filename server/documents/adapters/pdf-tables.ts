/**
 * Tables in born-digital PDFs, recovered from the lines and cells of the page's layout
 * (pdf-layout.ts): three or more consecutive lines of two or more cells that line up under the
 * columns of a first line of three or more cells are a table (with or without ruling lines, which
 * are not needed). The first line names the columns. A line right under a row whose cells all fall
 * under columns other than the first, and that is no further below than a line and a half, continues
 * that row's cells (a cell wrapped onto a second line). The page's other text keeps its order,
 * before and after each table.
 */
import type { Segment } from './types'
import { columnNames } from './columns'
import { linesText, type LayoutCell, type LayoutLine } from './pdf-layout'

/**
 * The header column a cell belongs to: the one whose span (from its start to the next column's
 * start, widened by `tolerance` to the left) overlaps the cell most; -1 when none does.
 */
function columnOf(header: LayoutCell[], cell: LayoutCell, tolerance: number): number {
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

/** The values of a line under the header's columns, or undefined when a cell falls under none. */
function placed(head: LayoutLine, line: LayoutLine): string[] | undefined {
  const values = head.cells.map(() => '')
  for (const c of line.cells) {
    const col = columnOf(head.cells, c, head.size)
    if (col < 0) return undefined
    values[col] = values[col] ? `${values[col]} ${c.text}` : c.text
  }
  return values
}

function findTables(lines: LayoutLine[]): Table[] {
  const tables: Table[] = []
  let i = 0
  while (i < lines.length) {
    const head = lines[i]!
    if (head.cells.length < 3) { i++; continue }
    const rows: string[][] = []
    // The smallest distance between the baselines of two rows' first lines (a wrapped cell's line is closer).
    let pitch = Number.POSITIVE_INFINITY
    let rowY = head.y
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j]!
      if (line.break || line.cells.length > head.cells.length + 1) break
      const values = placed(head, line)
      if (!values) break
      const previous = lines[j - 1]!
      const continues = rows.length > 0 && values[0] === '' && line.cells.length < head.cells.length
        && previous.y - line.y < 0.8 * pitch
      if (continues) {
        const row = rows.at(-1)!
        values.forEach((v, c) => { if (v) row[c] = row[c] ? `${row[c]} ${v}` : v })
        continue
      }
      if (line.cells.length < 2 || values.filter((v) => v !== '').length < 2) break
      pitch = Math.min(pitch, rowY - line.y)
      rowY = line.y
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
 * The segments of a page laid out as `lines`: its tables as `table_row` blocks (cells named by
 * the header line), the other text cut into blocks by `textBlocks`, in reading order.
 */
export function pageSegments(lines: LayoutLine[], textBlocks: (text: string) => Segment[]): Segment[] {
  const tables = findTables(lines)
  const segments: Segment[] = []
  let next = 0
  for (const t of tables) {
    segments.push(...textBlocks(linesText(lines.slice(next, t.first))))
    const columns = columnNames(t.header, t.header.length)
    for (const values of [t.header, ...t.rows]) {
      segments.push({ kind: 'table_row', text: values.map((v) => v.replaceAll('|', '/')).join(' | '), cells: values.map((value, c) => ({ column: columns[c]!, value })) })
    }
    next = t.last + 1
  }
  segments.push(...textBlocks(linesText(lines.slice(next))))
  return segments
}
