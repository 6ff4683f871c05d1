/**
 * OpenDocument text (ODT): the package's `content.xml` (bounded by SVC_PARSE_MAX_INFLATED_MB,
 * inflated with fflate) is walked with `htmlparser2`'s streaming XML parser and written as plain
 * HTML (headings, paragraphs, list items, tables, line breaks), then cut like HTML: headings,
 * paragraphs and one `table_row` block per table row with its cells named by the first row.
 * Tracked deletions, annotations, note citations and everything outside the body (styles, fonts,
 * headers and footers, which live in `styles.xml`) are left out.
 */
import { unzipSync } from 'fflate'
import { Parser } from 'htmlparser2'
import { htmlSegments } from './html'
import { assertZipInflatesWithin } from './zip-bounds'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter } from './types'

/** ODF elements and the HTML they are written as (opening tag; closed alike). */
const ELEMENTS: Record<string, string> = {
  'text:h': 'h2', 'text:p': 'p', 'text:list-item': 'li', 'text:list': 'ul',
  'table:table': 'table', 'table:table-row': 'tr', 'table:table-cell': 'td', 'table:covered-table-cell': 'td',
}
/** Elements whose content is not body text. */
const SKIPPED = new Set(['text:tracked-changes', 'office:annotation', 'text:note-citation', 'text:bookmark-ref', 'draw:image', 'svg:desc', 'svg:title'])

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The body of an ODT's content.xml as plain HTML. */
export function odtHtml(xml: string): string {
  const out: string[] = []
  let inBody = 0
  let skip = 0
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'office:body') { inBody++; return }
      if (inBody === 0) return
      if (skip > 0 || SKIPPED.has(name)) { skip++; return }
      const tag = ELEMENTS[name]
      if (tag) out.push(`<${tag}>`)
      else if (name === 'text:s') out.push(' '.repeat(Math.min(100, Math.max(1, Number(attrs['text:c'] ?? 1) || 1))))
      else if (name === 'text:tab') out.push(' ')
      else if (name === 'text:line-break') out.push('<br>')
    },
    ontext(text) { if (inBody > 0 && skip === 0) out.push(escape(text)) },
    onclosetag(name) {
      if (name === 'office:body') { inBody--; return }
      if (inBody === 0) return
      if (skip > 0) { skip--; return }
      const tag = ELEMENTS[name]
      if (tag) out.push(`</${tag}>`)
    },
  }, { xmlMode: true, decodeEntities: true })
  parser.write(xml)
  parser.end()
  return out.join('')
}

/** The ODT adapter. */
export const readOdt: Adapter = async (bytes, limits = DEFAULT_READ_LIMITS) => {
  assertZipInflatesWithin(bytes, limits.maxInflatedBytes, (name) => name === 'content.xml')
  let content: Uint8Array | undefined
  try {
    content = unzipSync(bytes, { filter: (f) => f.name === 'content.xml' })['content.xml']
  } catch {
    throw new UnreadableDocument('the ODT package could not be read')
  }
  if (!content) throw new UnreadableDocument('the ODT package holds no content.xml')
  const segments = htmlSegments(odtHtml(new TextDecoder().decode(content)))
  return { pages: [{ page: 1, segments }], degraded: false, notes: [] }
}
