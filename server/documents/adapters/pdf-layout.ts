/**
 * Geometry-aware text assembly of a PDF page: the text runs pdf.js reports (strings with a
 * position, a width and a font size, in drawing order) become lines and cells by where they sit,
 * not by the order they were drawn. Runs drawn twice at (almost) the same place (bold by
 * overprint) are kept once; runs on one baseline form a line, read left to right; a gap wider than
 * CELL_GAP font sizes separates two cells; lines are read top to bottom, except where the page is
 * set in two columns of prose, which are read one after the other.
 */

/** A text item of pdf.js's text content (only what layout needs). */
export interface PositionedItem { str?: string; hasEOL?: boolean; transform?: number[]; width?: number }

/** A horizontal run of text: its string, left edge, baseline, right edge, and font size. */
interface Run { str: string; x: number; y: number; end: number; size: number }

/** A cell of a line: its text and horizontal extent. */
export interface LayoutCell { text: string; x: number; end: number }

/** A line of a page: its baseline, font size, and cells left to right. */
export interface LayoutLine { y: number; size: number; cells: LayoutCell[]; break?: boolean }

/** A gap between two runs wider than this many font sizes separates cells (a word space is about 0.25). */
export const CELL_GAP = 1

/** A gap under this many font sizes joins two runs without a space (kerning, a font change in a word). */
const GLUE_GAP = 0.1

/** Two runs of the same text closer than this many font sizes (and 2 pt) are one run drawn twice. */
const OVERPRINT_TOLERANCE = 0.3

/** Inside one run, this many spaces or more separate cells (text laid out with spaces, as by a typewriter font). */
const SPACED_CELLS = /\s{3,}/

/**
 * The runs of a page's items: horizontal text only (rotated text is returned apart, in drawing
 * order), strings with runs of spaces cut into runs of their own, whitespace-only items dropped.
 */
function runsOf(items: readonly PositionedItem[]): { runs: Run[]; rotated: string[] } {
  const runs: Run[] = []
  const rotated: string[] = []
  for (const it of items) {
    const str = it.str ?? ''
    if (str.trim() === '') continue
    const t = it.transform ?? [1, 0, 0, 1, 0, 0]
    const size = Math.hypot(t[2] ?? 0, t[3] ?? 0) || Math.hypot(t[0] ?? 0, t[1] ?? 0) || 10
    if (Math.abs(t[1] ?? 0) > 0.01 * size || Math.abs(t[2] ?? 0) > 0.01 * size || (t[0] ?? 1) < 0) {
      rotated.push(str.replace(/\s+/g, ' ').trim())
      continue
    }
    const x = t[4] ?? 0
    const y = t[5] ?? 0
    const width = Math.max(0, it.width ?? 0)
    if (!SPACED_CELLS.test(str.trim())) {
      const lead = str.length - str.trimStart().length
      const perChar = str.length > 0 ? width / str.length : 0
      const text = str.trim()
      runs.push({ str: text, x: x + lead * perChar, y, end: x + (lead + text.length) * perChar, size })
      continue
    }
    // Spaced text: each part placed by its share of the characters (monospaced layouts are exact).
    const perChar = width / str.length
    for (const m of str.matchAll(/\S+(?:\s{1,2}\S+)*/g)) {
      runs.push({ str: m[0], x: x + m.index * perChar, y, end: x + (m.index + m[0].length) * perChar, size })
    }
  }
  return { runs, rotated }
}

/** Drops runs that repeat a kept run's text at (almost) the same position: overprinted (fake bold) text. */
function withoutOverprint(runs: Run[]): Run[] {
  // Kept runs by text and a 2 pt grid cell: a repeat is looked for in the 3 x 3 cells around (linear time).
  const kept = new Map<string, Run[]>()
  const out: Run[] = []
  for (const r of runs) {
    const tolerance = Math.min(2, OVERPRINT_TOLERANCE * r.size)
    const gx = Math.floor(r.x / 2)
    const gy = Math.floor(r.y / 2)
    let repeat = false
    for (let dx = -1; dx <= 1 && !repeat; dx++) {
      for (let dy = -1; dy <= 1 && !repeat; dy++) {
        repeat = kept.get(`${gx + dx},${gy + dy},${r.str}`)?.some((k) => Math.abs(k.x - r.x) <= tolerance && Math.abs(k.y - r.y) <= tolerance) ?? false
      }
    }
    if (repeat) continue
    const key = `${gx},${gy},${r.str}`
    const cell = kept.get(key)
    if (cell) cell.push(r)
    else kept.set(key, [r])
    out.push(r)
  }
  return out
}

/** Lines from runs: runs whose baselines are within half a font size share a line; cells split at wide gaps. */
function linesOf(runs: Run[]): LayoutLine[] {
  runs.sort((a, b) => b.y - a.y || a.x - b.x)
  const groups: Run[][] = []
  let lineY = Number.NaN
  let lineSize = 0
  for (const r of runs) {
    const group = groups.at(-1)
    if (group && Math.abs(lineY - r.y) < Math.min(lineSize, r.size) / 2) {
      group.push(r)
      lineSize = Math.max(lineSize, r.size)
    } else {
      groups.push([r])
      lineY = r.y
      lineSize = r.size
    }
  }
  return groups.map((group) => {
    group.sort((a, b) => a.x - b.x)
    const size = group.reduce((m, r) => Math.max(m, r.size), 0)
    const cells: LayoutCell[] = []
    for (const r of group) {
      const last = cells.at(-1)
      const gap = last ? r.x - last.end : Number.POSITIVE_INFINITY
      const em = Math.max(r.size, 1)
      if (last && gap < CELL_GAP * em) {
        last.text += gap > GLUE_GAP * em ? ` ${r.str}` : r.str
        last.end = Math.max(last.end, r.end)
      } else cells.push({ text: r.str, x: r.x, end: r.end })
    }
    return { y: group[0]!.y, size, cells }
  })
}

/** Words in a cell's text. */
const words = (text: string) => text.split(/\s+/).length

/**
 * Reading order with two columns of prose: where a run of consecutive lines leaves a vertical
 * gutter free (no cell crosses it) and both sides hold prose (one cell a line, four or more words
 * a line on average, most lines filling the column's width, at least MIN_COLUMN_LINES lines a side),
 * the left side's lines come before the right side's. Tables (several cells a line) and label/value
 * forms (labels and values of varying width) are not split.
 */
const MIN_COLUMN_LINES = 3
const MIN_COLUMN_WORDS = 4
/** Gutter positions tried on one page, at most (a hostile page of many lines stays linear). */
const MAX_GUTTERS = 16
/** A vertical gap of more than this many font sizes ends a stretch of columns. */
const COLUMN_BREAK = 3

interface Split { from: number; to: number; gutter: number }

function columnSplit(lines: LayoutLine[], pageWidth: number): Split | undefined {
  // Gutters: the middles of the gaps of two-cell lines (to 2 pt), the most frequent first, a bounded number.
  // Lines of one cell (columns whose baselines differ) offer the left edge of the cell, a few points to its left.
  const counts = new Map<number, number>()
  const count = (at: number) => counts.set(at, (counts.get(at) ?? 0) + 1)
  const left = lines.reduce((m, l) => Math.min(m, l.cells[0]!.x), Number.POSITIVE_INFINITY)
  for (const l of lines) {
    if (l.cells.length === 2) count(Math.round((l.cells[0]!.end + l.cells[1]!.x) / 4) * 2)
    else if (l.cells.length === 1 && l.cells[0]!.x > left + pageWidth * 0.2) count(Math.round((l.cells[0]!.x - 4) / 2) * 2)
  }
  const candidates = [...counts].filter(([, n]) => n >= MIN_COLUMN_LINES).sort((a, b) => b[1] - a[1]).slice(0, MAX_GUTTERS).map(([at]) => at)
  let best: Split | undefined
  for (const gutter of candidates) {
    let from = 0
    for (let i = 0; i <= lines.length; i++) {
      const line = lines[i]
      const crosses = line?.cells.some((c) => c.x < gutter && c.end > gutter) ?? true
      // A stretch of columns also ends at a wide vertical gap (a footer under the columns).
      const apart = line !== undefined && i > from && lines[i - 1]!.y - line.y > COLUMN_BREAK * Math.max(line.size, lines[i - 1]!.size)
      if (!crosses && !apart) continue
      // lines[from, i) respect the gutter: do both sides hold prose?
      if (i - from >= MIN_COLUMN_LINES) {
        let left = 0
        let right = 0
        let prose = true
        let leftWidth = 0
        for (let j = from; j < i && prose; j++) {
          const l = lines[j]!.cells.filter((c) => c.end <= gutter)
          const r = lines[j]!.cells.filter((c) => c.x >= gutter)
          if (l.length > 1 || r.length > 1) prose = false
          if (l.length === 1) { left++; leftWidth = Math.max(leftWidth, gutter - l[0]!.x) }
          if (r.length === 1) right++
        }
        // Prose: several words a line on average, and most lines filling the column (text that wraps),
        // unlike a form's labels and values, whose widths vary with what they say.
        const wordy = (side: (c: LayoutCell) => boolean) => {
          const cells = lines.slice(from, i).flatMap((l) => l.cells.filter(side))
          const widest = cells.reduce((m, c) => Math.max(m, c.end - c.x), 0)
          const filled = cells.filter((c) => c.end - c.x >= 0.7 * widest).length
          return cells.reduce((n, c) => n + words(c.text), 0) >= MIN_COLUMN_WORDS * cells.length && filled * 2 >= cells.length
        }
        if (prose && left >= MIN_COLUMN_LINES && right >= MIN_COLUMN_LINES && leftWidth >= pageWidth * 0.2 && wordy((c) => c.end <= gutter) && wordy((c) => c.x >= gutter)) {
          if (!best || i - from > best.to - best.from) best = { from, to: i, gutter }
        }
      }
      from = crosses ? i + 1 : i
    }
  }
  return best
}

/** Orders lines for reading: top to bottom, and a stretch set in two columns one column after the other. */
function readingOrder(lines: LayoutLine[], pageWidth: number, depth = 0): LayoutLine[] {
  if (lines.length < MIN_COLUMN_LINES * 2 || depth > 4) return lines
  const split = columnSplit(lines, pageWidth)
  if (!split) return lines
  const stretch = lines.slice(split.from, split.to)
  const side = (keep: (c: LayoutCell) => boolean) => stretch
    .map((l) => ({ ...l, cells: l.cells.filter(keep) }))
    .filter((l) => l.cells.length > 0)
  const left = side((c) => c.end <= split.gutter)
  const right = side((c) => c.x >= split.gutter)
  right[0] = { ...right[0]!, break: true }
  const after = readingOrder(lines.slice(split.to), pageWidth, depth + 1)
  if (after.length > 0) after[0] = { ...after[0]!, break: true }
  return [...lines.slice(0, split.from), ...readingOrder(left, pageWidth, depth + 1), ...right, ...after]
}

/** A page's text as lines and cells in reading order; rotated text follows, one line per run. */
export interface PageLayout { lines: LayoutLine[]; rotated: string[] }

/**
 * Assembles a page's text items into lines of cells in reading order (see the module comment).
 * `pageWidth` (points) scales the column test.
 */
export function layoutPage(items: readonly PositionedItem[], pageWidth = 612): PageLayout {
  const { runs, rotated } = runsOf(items)
  const lines = linesOf(withoutOverprint(runs))
  return { lines: readingOrder(lines, pageWidth), rotated }
}

/** A "Label: value" cell. */
const LABELLED = /^[^:\t]{1,80}:\s*\S/

/**
 * The cells of a line that holds two or more "Label: value" pairs side by side (a label cell ending
 * in a colon taken with the cell after it), one pair per line; undefined for any other line.
 */
function labelledPairs(cells: readonly LayoutCell[]): string[] | undefined {
  if (cells.length < 2) return undefined
  const parts: string[] = []
  for (let i = 0; i < cells.length; i++) {
    const text = cells[i]!.text
    const next = cells[i + 1]?.text
    if (text.endsWith(':') && next !== undefined && !next.endsWith(':')) { parts.push(`${text} ${next}`); i++ } else parts.push(text)
  }
  return parts.length >= 2 && parts.every((p) => LABELLED.test(p)) ? parts : undefined
}

/**
 * The text of lines: cells joined by a tab, lines by newlines, a blank line where the reading jumps
 * (a column). A line of several "Label: value" pairs gives one line per pair, so no value runs into
 * the next label.
 */
export function linesText(lines: readonly LayoutLine[]): string {
  return lines.map((l, i) => (l.break && i > 0 ? '\n' : '') + (labelledPairs(l.cells) ?? [l.cells.map((c) => c.text).join('\t')]).join('\n')).join('\n')
}
