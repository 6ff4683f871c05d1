/**
 * Plain text: in its declared charset, else as its BOM or the detector says, else UTF-8
 * (encoding.ts); paragraphs at blank lines, pages at form feeds. Invalid byte sequences are
 * replaced and the parse is reported degraded.
 */
import { decodeText, replacedNote } from './encoding'
import { paragraphs, requireReadable, type Adapter } from './types'

/** The plain-text adapter. */
export const readText: Adapter = async (bytes, options) => {
  const { text, lossy, encoding } = decodeText(bytes, options?.charset)
  requireReadable(text, 'text file')
  const chunks = text.split('\f')
  if (chunks.length > 1 && chunks[chunks.length - 1]!.trim() === '') chunks.pop() // a closing form feed ends the last page
  const pages = chunks.map((chunk, i) => ({ page: i + 1, segments: paragraphs(chunk) }))
  return { pages, degraded: lossy, notes: lossy ? [replacedNote(encoding)] : [], encoding }
}
