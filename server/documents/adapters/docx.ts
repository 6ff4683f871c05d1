/**
 * DOCX, read with `mammoth` (which keeps headings, paragraphs, lists and tables as HTML) and then
 * cut like HTML. Errors mammoth reports while still producing a document make the parse degraded.
 */
import mammoth from 'mammoth'
import { htmlSegments } from './html'
import { UnreadableDocument, type Adapter } from './types'

/** The DOCX adapter. */
export const readDocx: Adapter = async (bytes) => {
  let result: { value: string; messages: Array<{ type: string; message: string }> }
  try {
    result = await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })
  } catch {
    throw new UnreadableDocument('the DOCX package could not be read')
  }
  const errors = result.messages.filter((m) => m.type === 'error')
  return {
    pages: [{ page: 1, segments: htmlSegments(result.value) }],
    degraded: errors.length > 0,
    notes: errors.length > 0 ? [`${errors.length} part${errors.length === 1 ? '' : 's'} of the document could not be read`] : [],
  }
}
