/**
 * OpenDocument text (ODT): the package's `content.xml` (inflated once with the native zlib,
 * bounded by SVC_PARSE_MAX_INFLATED_MB: xlsx-bounds.ts) is walked once with `htmlparser2`'s streaming XML parser and cut into
 * blocks as it goes, the way HTML is cut (html.ts): headings, paragraphs and list items each a
 * block, one `table_row` block per table row (its cells' text joined by " | ", paragraphs inside a
 * cell joined by a space) with its cells named by the table's first row. Whitespace runs read as
 * one space (`text:s`, `text:tab` included); a line break stays inside its block. Tracked
 * deletions, annotations, note citations and everything outside the body (styles, fonts) are left
 * out. A check box form field (`field:fieldmark` of type FORMCHECKBOX, as LibreOffice writes Word's)
 * reads as its state, ☒ or ☐ (content-control check boxes hold their glyph as text already). Then the page headers and footers, which live in `styles.xml` (its master pages), read the
 * same way, each text once, as the DOC and DOCX adapters read theirs. (An earlier reader wrote HTML
 * and cut it with html-to-text: the same blocks at six times the cost of the XML walk.)
 */
import { Parser } from 'htmlparser2'
import { TableRows } from './table-rows'
import { inflatePackage } from './xlsx-bounds'
import { CHECK_GLYPHS, DEFAULT_READ_LIMITS, eachTextOnce, tidy, UnreadableDocument, type Adapter, type Segment } from './types'

/** Elements that are a block of their own, and its kind. */
const BLOCKS: Record<string, 'heading' | 'paragraph'> = { 'text:h': 'heading', 'text:p': 'paragraph', 'text:list-item': 'paragraph' }
/** Elements whose content is not body text. */
const SKIPPED = new Set(['text:tracked-changes', 'office:annotation', 'text:note-citation', 'text:bookmark-ref', 'draw:image', 'svg:desc', 'svg:title'])
const CELLS = new Set(['table:table-cell', 'table:covered-table-cell'])

/** The region of content.xml that is read: the body. */
const BODY = new Set(['office:body'])
/** The regions of styles.xml that are read: the master pages' headers and footers. */
const MARGINS = new Set(['style:header', 'style:header-left', 'style:header-first', 'style:footer', 'style:footer-left', 'style:footer-first'])

/** The blocks of the `regions` of an ODT part (content.xml's body by default), in reading order. */
export function odtSegments(xml: string, regions: ReadonlySet<string> = BODY): Segment[] {
  const out: Segment[] = []
  const table = new TableRows()
  let inBody = 0
  let skip = 0
  let text = '' // the block (or loose text) being read
  let kind: 'heading' | 'paragraph' = 'paragraph'
  let rowDepth = 0
  let cellDepth = 0
  let cells: string[] = []
  let cell = ''
  let box: { ticked: boolean } | undefined // a check box form field being read
  const flush = () => {
    // Whitespace runs read as one space; a line break (marked U+2028 while reading) stays.
    const spaced = text.replace(/[ \t\r\n]+/g, ' ')
    const lines = spaced.includes('\u2028')
    const t = lines ? tidy(spaced.replaceAll('\u2028', '\n').replace(/ ?\n ?/g, '\n')) : spaced.trim()
    text = ''
    if (t === '') return
    table.end()
    if (!lines) out.push({ kind, text: t })
    else if (kind === 'heading') out.push({ kind, text: t.replace(/\s*\n\s*/g, ' ') })
    else for (const p of t.split(/\n\s*\n/)) if (p.trim() !== '') out.push({ kind, text: p.trim() })
    kind = 'paragraph'
  }
  const parser = new Parser({
    onopentag(name, attrs) {
      if (regions.has(name)) { inBody++; return }
      if (inBody === 0) return
      if (skip > 0 || SKIPPED.has(name)) { skip++; return }
      if (name === 'field:fieldmark' && /FORMCHECKBOX$/.test(attrs['field:type'] ?? '')) { box = { ticked: false }; return }
      if (name === 'field:param' && box && attrs['field:name'] === 'Checkbox_Checked') { box.ticked = attrs['field:value'] === 'true'; return }
      if (cellDepth > 0) {
        if (name === 'text:line-break' || name === 'text:tab' || name === 'text:s') cell += ' '
        return
      }
      if (name === 'table:table-row') { flush(); rowDepth++; cells = []; return }
      if (rowDepth > 0 && CELLS.has(name)) { cellDepth++; cell = ''; return }
      const block = BLOCKS[name]
      if (block) { flush(); kind = block; return }
      if (name === 'text:line-break') text += '\u2028'
      else if (name === 'text:s' || name === 'text:tab') text += ' '
    },
    ontext(t) {
      if (inBody === 0 || skip > 0) return
      if (cellDepth > 0) cell += t
      else if (rowDepth === 0) text += t
    },
    onclosetag(name) {
      if (regions.has(name)) { flush(); inBody--; return }
      if (inBody === 0) return
      if (skip > 0) { skip--; return }
      if (name === 'field:fieldmark' && box) {
        const glyph = box.ticked ? CHECK_GLYPHS.checked : CHECK_GLYPHS.unchecked
        if (cellDepth > 0) cell += glyph
        else if (rowDepth === 0) text += glyph
        box = undefined
        return
      }
      if (cellDepth > 0) {
        if (CELLS.has(name)) { cellDepth--; if (cellDepth === 0) cells.push(cell) }
        else if (BLOCKS[name]) cell += ' '
        return
      }
      if (name === 'table:table-row') {
        rowDepth--
        const row = table.row(cells)
        if (row) out.push(row)
        cells = []
        return
      }
      if (BLOCKS[name]) flush()
    },
  }, { xmlMode: true, decodeEntities: true })
  parser.write(xml)
  parser.end()
  flush()
  return out
}

/** The ODT adapter. */
export const readOdt: Adapter = async (bytes, limits = DEFAULT_READ_LIMITS) => {
  let content: Uint8Array | undefined
  let styles: Uint8Array | undefined
  try {
    // One inflation, bounded as it goes (a zip bomb is refused naming the limit).
    const parts = inflatePackage(bytes, limits.maxInflatedBytes, (name) => name === 'content.xml' || name === 'styles.xml')
    content = parts['content.xml']
    styles = parts['styles.xml']
  } catch (e) {
    if (e instanceof UnreadableDocument && /SVC_PARSE_MAX_INFLATED_MB/.test(e.message)) throw e
    throw new UnreadableDocument('the ODT package could not be read')
  }
  if (!content) throw new UnreadableDocument('the ODT package holds no content.xml')
  const segments = odtSegments(new TextDecoder().decode(content))
  // The headers and footers, each text once (a first page's header often repeats the others').
  const margins = styles ? eachTextOnce(odtSegments(new TextDecoder().decode(styles), MARGINS)) : []
  return { pages: [{ page: 1, segments: [...segments, ...margins] }], degraded: false, notes: [] }
}
