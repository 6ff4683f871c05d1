/**
 * The page writer of the findings report (pdf-lib): wrapped text lines, blocks kept on one page
 * (a question never splits across a page break unless it is taller than a page), and tables with
 * a repeated header row. The standard Helvetica font is used, so characters it cannot encode are
 * shown as "?".
 */
import { PDFDocument, rgb, type PDFFont, type PDFPage } from 'pdf-lib'

/** A4 portrait. */
export const PAGE: [number, number] = [595.28, 841.89]
/** The page margin. */
export const MARGIN = 50
/** The width between the margins. */
export const WIDTH = PAGE[0] - 2 * MARGIN
const BOTTOM = MARGIN + 20

/** How one run of text is drawn. */
export interface TextOptions { size?: number; bold?: boolean; indent?: number; gap?: number; color?: readonly [number, number, number] }

/** One column of a table: its title and width (points). */
export interface Column { title: string; width: number }

/** Writes pages top to bottom. */
export class Writer {
  page!: PDFPage
  y = 0
  readonly pages: PDFPage[] = []
  private readonly supported: Set<number>
  constructor(readonly pdf: PDFDocument, readonly regular: PDFFont, readonly bold: PDFFont) {
    this.supported = new Set(regular.getCharacterSet())
    this.newPage()
  }

  /** Starts a new page. */
  newPage() {
    this.page = this.pdf.addPage(PAGE)
    this.pages.push(this.page)
    this.y = PAGE[1] - MARGIN
  }

  /** True when the font can draw every character of `text`. */
  encodable = (text: string) => [...text].every((c) => this.supported.has(c.codePointAt(0)!))

  /** Replaces characters the font cannot encode. */
  clean(text: string): string {
    return [...text.replace(/[\r\n\t\f\v]+/g, ' ').replace(/[\u00a0\u202f]/g, ' ')].map((c) => (this.supported.has(c.codePointAt(0)!) ? c : '?')).join('')
  }

  /** The lines `text` wraps to at `width`. */
  wrap(text: string, font: PDFFont, size: number, width: number): string[] {
    const words = this.clean(text).split(/ +/)
    const lines: string[] = []
    let line = ''
    for (const word of words) {
      const candidate = line ? `${line} ${word}` : word
      if (font.widthOfTextAtSize(candidate, size) <= width) { line = candidate; continue }
      if (line) lines.push(line)
      let rest = word
      while (font.widthOfTextAtSize(rest, size) > width) {
        let n = rest.length
        while (n > 1 && font.widthOfTextAtSize(rest.slice(0, n), size) > width) n--
        lines.push(rest.slice(0, n))
        rest = rest.slice(n)
      }
      line = rest
    }
    if (line) lines.push(line)
    return lines.length ? lines : ['']
  }

  /** `text` cut to one line of `width`, with "..." when cut. */
  fit(text: string, font: PDFFont, size: number, width: number): string {
    const t = this.clean(text)
    if (font.widthOfTextAtSize(t, size) <= width) return t
    let n = t.length
    while (n > 0 && font.widthOfTextAtSize(`${t.slice(0, n)}...`, size) > width) n--
    return `${t.slice(0, n)}...`
  }

  private height(text: string, opts: TextOptions): number {
    const size = opts.size ?? 10
    return this.wrap(text, opts.bold ? this.bold : this.regular, size, WIDTH - (opts.indent ?? 0)).length * size * 1.35 + (opts.gap ?? 2)
  }

  /** Draws wrapped text (a new page when a line does not fit). */
  text(text: string, opts: TextOptions = {}) {
    const size = opts.size ?? 10
    const font = opts.bold ? this.bold : this.regular
    const indent = opts.indent ?? 0
    const leading = size * 1.35
    for (const line of this.wrap(text, font, size, WIDTH - indent)) {
      if (this.y - leading < BOTTOM) this.newPage()
      this.y -= leading
      this.page.drawText(line, { x: MARGIN + indent, y: this.y, size, font, color: rgb(...((opts.color ?? [0, 0, 0]) as [number, number, number])) })
    }
    this.y -= opts.gap ?? 2
  }

  /** Draws runs of text kept together: on a new page when they do not fit what is left of this one. */
  block(runs: readonly (readonly [string, TextOptions])[]) {
    const h = runs.reduce((s, [t, o]) => s + this.height(t, o), 0)
    if (this.y - h < BOTTOM && h <= PAGE[1] - MARGIN - BOTTOM) this.newPage()
    for (const [t, o] of runs) this.text(t, o)
  }

  /** Draws a table (after its title): on one page when it fits one, else a header row repeated on each new page; cells cut to fit. */
  table(columns: readonly Column[], rows: readonly { cells: string[]; color?: [number, number, number] }[], size = 8, title?: [string, TextOptions]) {
    const rowH = size * 1.6
    // A table that fits on one page starts on a new one rather than split (its title goes with it).
    const titleH = title ? this.height(...title) : 0
    const h = titleH + (rows.length + 1) * rowH
    if (this.y - h < BOTTOM && h <= PAGE[1] - MARGIN - BOTTOM) this.newPage()
    if (title) this.text(...title)
    const header = () => {
      if (this.y - 2 * rowH < BOTTOM) this.newPage()
      this.page.drawRectangle({ x: MARGIN, y: this.y - rowH, width: WIDTH, height: rowH, color: rgb(0.9, 0.9, 0.92) })
      let x = MARGIN + 2
      for (const c of columns) {
        this.page.drawText(this.fit(c.title, this.bold, size, c.width - 4), { x, y: this.y - rowH + size * 0.45, size, font: this.bold })
        x += c.width
      }
      this.y -= rowH
    }
    header()
    for (const row of rows) {
      if (this.y - rowH < BOTTOM) { this.newPage(); header() }
      let x = MARGIN + 2
      row.cells.forEach((cell, i) => {
        const col = columns[i]!
        this.page.drawText(this.fit(cell, this.regular, size, col.width - 4), { x, y: this.y - rowH + size * 0.45, size, font: this.regular, color: rgb(...(row.color ?? [0, 0, 0])) })
        x += col.width
      })
      this.page.drawLine({ start: { x: MARGIN, y: this.y - rowH }, end: { x: MARGIN + WIDTH, y: this.y - rowH }, thickness: 0.3, color: rgb(0.75, 0.75, 0.75) })
      this.y -= rowH
    }
    this.y -= 6
  }

  /** Moves down. */
  space(h: number) { this.y -= h }
}
