/**
 * Bounds on a PDF before pdf.js reads it: every Flate-compressed stream that text extraction may
 * decode (content streams, object streams; image XObjects are left to rendering) is inflated once
 * here with an output cap, so a stream bomb is refused instead of growing the parser by gigabytes.
 * pdf.js has no such limit of its own.
 */
import { inflateSync } from 'node:zlib'
import { mib, UnreadableDocument } from './types'

/** How far before a `stream` keyword its dictionary is looked for. */
const DICT_WINDOW = 4096

/** Refuses (UnreadableDocument, naming the limit) a PDF with a Flate stream inflating past `maxInflatedBytes`. */
export function assertPdfStreamsWithin(bytes: Uint8Array, maxInflatedBytes: number): void {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const text = buf.toString('latin1')
  let at = 0
  for (;;) {
    const keyword = text.indexOf('stream', at)
    if (keyword < 0) return
    at = keyword + 6
    if (text.startsWith('end', keyword - 3)) continue // "endstream"
    // The data starts after the keyword's end of line.
    let start = at
    if (text[start] === '\r') start++
    if (text[start] === '\n') start++
    else if (start === at) continue // not the keyword of a stream
    const dictStart = text.lastIndexOf('obj', keyword)
    const dict = text.slice(Math.max(dictStart, keyword - DICT_WINDOW), keyword)
    if (!/>>\s*$/.test(dict)) continue
    const end = text.indexOf('endstream', start)
    if (end < 0) return
    at = end + 9
    if (!/\/(FlateDecode|Fl)\b/.test(dict) || /\/Subtype\s*\/Image\b/.test(dict)) continue
    try {
      inflateSync(buf.subarray(start, end), { maxOutputLength: maxInflatedBytes })
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new UnreadableDocument(`a PDF stream inflates past the ${mib(maxInflatedBytes)} limit (SVC_PARSE_MAX_INFLATED_MB)`)
      }
      // Damaged or not zlib: pdf.js decides what it can read of it.
    }
  }
}
