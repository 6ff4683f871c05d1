/**
 * Plain text: UTF-8, paragraphs at blank lines, pages at form feeds. Invalid UTF-8 byte sequences
 * are replaced and the parse is reported degraded.
 */
import { decodeUtf8, paragraphs, requireReadable, type Adapter } from './types'

/** The plain-text adapter. */
export const readText: Adapter = async (bytes) => {
  const { text, lossy } = decodeUtf8(bytes)
  requireReadable(text, 'text file')
  const chunks = text.split('\f')
  if (chunks.length > 1 && chunks[chunks.length - 1]!.trim() === '') chunks.pop() // a closing form feed ends the last page
  const pages = chunks.map((chunk, i) => ({ page: i + 1, segments: paragraphs(chunk) }))
  return { pages, degraded: lossy, notes: lossy ? ['invalid UTF-8 byte sequences were replaced'] : [] }
}
