/**
 * HTML, text only, through `html-to-text`: headings, paragraphs, list items and table rows become
 * blocks; scripts, styles, images and link targets are dropped. A check box or radio button is its
 * state, as the form shows it (☒ checked, ☐ not; ◉ and ○ for radio buttons): a form's answer is
 * often nothing but which box is ticked. Also the second half of the DOCX adapter (mammoth turns a
 * DOCX into HTML, its form and content-control check boxes into check box inputs).
 */
import { convert, type FormatCallback } from 'html-to-text'
import { CHECK_GLYPHS, decodeUtf8, requireReadable, tidy, type Adapter, type Segment } from './types'
import { columnNames } from './columns'

// Private-use markers put in front of a block's text to carry its kind through the formatter.
const HEADING = '\ue000'
const ROW = '\ue001'
const BLOCK_BREAK = '\ue002'

/** Depth of table cells being walked: block elements inside a cell stay inline in its row. */
let inCell = 0

/** Inside a table cell: a block element's text joins the cell's, separated by a space. */
const cellPart: FormatCallback = (elem, walk, builder) => {
  builder.addWordBreakOpportunity()
  walk(elem.children, builder)
  builder.addInline(' ', { noWordTransform: true })
}

/** A heading: its own block, text kept as written (html-to-text would upper-case it). */
const heading: FormatCallback = (elem, walk, builder, options) => {
  if (inCell > 0) return cellPart(elem, walk, builder, options)
  builder.openBlock({ leadingLineBreaks: 2 })
  builder.addInline(BLOCK_BREAK + HEADING, { noWordTransform: true })
  walk(elem.children, builder)
  builder.closeBlock({ trailingLineBreaks: 2 })
}

/** A block of its own (paragraph, list item, division). */
const block: FormatCallback = (elem, walk, builder, options) => {
  if (inCell > 0) return cellPart(elem, walk, builder, options)
  builder.openBlock({ leadingLineBreaks: 2 })
  builder.addInline(BLOCK_BREAK, { noWordTransform: true })
  walk(elem.children, builder)
  builder.closeBlock({ trailingLineBreaks: 2 })
}

/** A table row: its cells' text joined by " | ", one block per row. */
const tableRow: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 })
  builder.addInline(BLOCK_BREAK + ROW, { noWordTransform: true })
  const cells = (elem.children ?? []).filter((c: { name?: string }) => c.name === 'td' || c.name === 'th')
  inCell++
  try {
    cells.forEach((cell: { children?: unknown[] }, i: number) => {
      if (i > 0) builder.addInline(' | ', { noWordTransform: true })
      walk(cell.children as never, builder)
    })
  } finally {
    inCell--
  }
  builder.closeBlock({ trailingLineBreaks: 2 })
}

/** A check box or radio button: its state as a glyph (a text field's typed value is not in the markup). */
const formInput: FormatCallback = (elem, _walk, builder) => {
  const attribs = (elem as { attribs?: Record<string, string> }).attribs ?? {}
  const type = (attribs.type ?? '').toLowerCase()
  if (type !== 'checkbox' && type !== 'radio') return
  const on = 'checked' in attribs
  const glyph = type === 'checkbox' ? (on ? CHECK_GLYPHS.checked : CHECK_GLYPHS.unchecked) : (on ? CHECK_GLYPHS.chosen : CHECK_GLYPHS.unchosen)
  builder.addInline(glyph, { noWordTransform: true })
}

/** An element whose children are walked with no block of its own (a table cell outside a row). */
const inline: FormatCallback = (elem, walk, builder) => walk(elem.children, builder)

const OPTIONS = {
  wordwrap: false as const,
  formatters: { svcHeading: heading, svcBlock: block, svcRow: tableRow, svcInline: inline, svcInput: formInput },
  selectors: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'svcHeading' })),
    ...['p', 'li', 'div', 'section', 'article', 'blockquote', 'pre', 'dd', 'dt', 'caption', 'figcaption'].map((selector) => ({ selector, format: 'svcBlock' })),
    ...['ul', 'ol', 'dl', 'table', 'thead', 'tbody', 'tfoot'].map((selector) => ({ selector, format: 'svcInline' })),
    { selector: 'tr', format: 'svcRow' },
    { selector: 'input', format: 'svcInput' },
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'hr', format: 'skip' },
    { selector: 'head', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
    { selector: 'noscript', format: 'skip' },
    { selector: 'template', format: 'skip' },
  ],
}

/** The segments of an HTML string, in reading order. */
export function htmlSegments(html: string): Segment[] {
  inCell = 0
  const text = convert(html, OPTIONS)
  const out: Segment[] = []
  for (const chunk of text.split(BLOCK_BREAK)) {
    let kind: Segment['kind'] = 'paragraph'
    let body = chunk
    if (body.startsWith(HEADING)) { kind = 'heading'; body = body.slice(1) }
    else if (body.startsWith(ROW)) { kind = 'table_row'; body = body.slice(1) }
    const clean = tidy(body.replaceAll(HEADING, '').replaceAll(ROW, ''))
    if (clean === '') continue
    if (kind === 'paragraph') {
      // Loose text between blocks may hold blank lines of its own: one paragraph each.
      for (const p of clean.split(/\n\s*\n/)) if (tidy(p) !== '') out.push({ kind, text: tidy(p) })
    } else out.push({ kind, text: kind === 'heading' ? clean.replace(/\s*\n\s*/g, ' ') : clean })
  }
  return withCells(out)
}

/**
 * Names the cells of each table (a run of consecutive rows) by its first row, as spreadsheets do:
 * DOCX and HTML tables give `cells` and column facts like a CSV.
 */
function withCells(segments: Segment[]): Segment[] {
  let header: string[] | undefined
  return segments.map((s) => {
    if (s.kind !== 'table_row') { header = undefined; return s }
    const values = s.text.split(' | ').map((v) => v.replace(/\s+/g, ' ').trim())
    header ??= values
    const columns = columnNames(header, Math.max(values.length, header.length))
    return { ...s, cells: values.map((value, i) => ({ column: columns[i]!, value })) }
  })
}

/** The HTML adapter. */
export const readHtml: Adapter = async (bytes) => {
  const { text, lossy } = decodeUtf8(bytes)
  requireReadable(text, 'HTML file')
  return { pages: [{ page: 1, segments: htmlSegments(text) }], degraded: lossy, notes: lossy ? ['invalid UTF-8 byte sequences were replaced'] : [] }
}
