/**
 * The headers and footers of a DOCX, which mammoth does not read: a policy number, the insured's
 * name or a reference printed in a page header was lost. Each header and footer part is read by
 * mammoth itself, as the body of a package whose main part it becomes (its own relationships, the
 * package's content types), so its paragraphs and tables come out as the body's do. Text a
 * part repeats from an earlier one (the first page's header and the others', section after
 * section) is kept once. Headers come before footers, each in part order.
 */
import mammoth from 'mammoth'
import { unzipSync, zipSync } from 'fflate'
import { htmlSegments } from './html'
import { eachTextOnce, type Segment } from './types'

/** A header or footer part. */
const HEADER_PART = /^word\/(header|footer)(\d*)\.xml$/
/** What is read of the package: the header and footer parts, their relationships and the package's own. */
const READ_PART = /^(word\/(_rels\/)?(header|footer)\d*\.xml(\.rels)?|\[Content_Types\]\.xml)$/

const utf8 = (text: string) => new TextEncoder().encode(text)
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/package/2006/relationships'
/** The package relationship naming the stand-in main part. */
const PACKAGE_RELS = utf8(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${RELATIONSHIPS}"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`)
/** A part without relationships of its own. */
const NO_RELS = utf8(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${RELATIONSHIPS}"/>`)

/** Header and footer parts read, at most. */
export const MAX_MARGIN_PARTS = 32

/** The root of a header or footer part: its prefix, its name, its namespace declarations and its content. */
const ROOT = /<([\w.-]+):(hdr|ftr)\b([^>]*)>([\s\S]*)<\/\1:\2\s*>/

/** Parts in reading order: headers first, each kind by its number. */
const order = (a: string, b: string) => {
  const [, ka, na] = HEADER_PART.exec(a)!
  const [, kb, nb] = HEADER_PART.exec(b)!
  return ka === kb ? Number(na || 0) - Number(nb || 0) : ka === 'header' ? -1 : 1
}

/**
 * The segments of every header and footer of the package `bytes` (already bounded by the caller),
 * with the number of parts mammoth reported errors in and the number left unread. `convertImage` is the body's image handler.
 */
export async function headerFooterSegments(bytes: Uint8Array, convertImage: unknown): Promise<{ segments: Segment[]; failed: number; left: number }> {
  const parts = unzipSync(bytes, { filter: (f) => READ_PART.test(f.name) })
  const names = Object.keys(parts).filter((n) => HEADER_PART.test(n)).sort(order)
  const segments: Segment[] = []
  let failed = 0
  for (const name of names.slice(0, MAX_MARGIN_PARTS)) {
    const root = ROOT.exec(new TextDecoder().decode(parts[name]))
    if (!root) continue
    const [, prefix, , attributes, content] = root
    const rels = parts[name.replace(/^word\/(.*)$/, 'word/_rels/$1.rels')]
    const main = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><${prefix}:document${attributes}><${prefix}:body>${content}</${prefix}:body></${prefix}:document>`
    const pkg = zipSync({
      '[Content_Types].xml': parts['[Content_Types].xml'] ?? new Uint8Array(),
      '_rels/.rels': PACKAGE_RELS,
      'word/document.xml': utf8(main),
      'word/_rels/document.xml.rels': rels ?? NO_RELS,
    }, { level: 0 })
    let result: { value: string; messages: Array<{ type: string }> }
    try {
      result = await mammoth.convertToHtml({ buffer: Buffer.from(pkg.buffer, pkg.byteOffset, pkg.byteLength) }, { convertImage } as never)
    } catch {
      failed++
      continue
    }
    if (result.messages.some((m) => m.type === 'error')) failed++
    segments.push(...htmlSegments(result.value))
  }
  return { segments: eachTextOnce(segments), failed, left: Math.max(0, names.length - MAX_MARGIN_PARTS) }
}
