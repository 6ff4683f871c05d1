/**
 * DOCX, read with `mammoth` (which keeps headings, paragraphs, lists and tables as HTML) and then
 * cut like HTML; the headers and footers after the body (docx-headers.ts), as the DOC adapter
 * reads them. Errors mammoth reports while still producing a document make the parse degraded.
 */
import mammoth from 'mammoth'
import { htmlSegments } from './html'
import { headerFooterSegments, MAX_MARGIN_PARTS } from './docx-headers'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter } from './types'
import { assertZipInflatesWithin } from './zip-bounds'

/** The parts of a DOCX that mammoth reads as text: XML and relationships (media is never inflated). */
const textPart = (name: string) => /\.(xml|rels)$/i.test(name)

/** Images are dropped, not read: blocks carry text only, and reading them costs memory. */
const skipImage = mammoth.images.imgElement(async () => ({ src: '' }))

/** The DOCX adapter. A package whose text parts inflate past the limit is refused before mammoth opens it. */
export const readDocx: Adapter = async (bytes, limits = DEFAULT_READ_LIMITS) => {
  assertZipInflatesWithin(bytes, limits.maxInflatedBytes, textPart)
  let result: { value: string; messages: Array<{ type: string; message: string }> }
  try {
    result = await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }, { convertImage: skipImage })
  } catch {
    throw new UnreadableDocument('the DOCX package could not be read')
  }
  const margins = await headerFooterSegments(bytes, skipImage)
  const errors = result.messages.filter((m) => m.type === 'error').length + margins.failed
  const notes: string[] = []
  if (errors > 0) notes.push(`${errors} part${errors === 1 ? '' : 's'} of the document could not be read`)
  if (margins.left > 0) notes.push(`only the first ${MAX_MARGIN_PARTS} header and footer parts were read (${margins.left} more)`)
  return {
    pages: [{ page: 1, segments: [...htmlSegments(result.value), ...margins.segments] }],
    degraded: notes.length > 0,
    notes,
  }
}
