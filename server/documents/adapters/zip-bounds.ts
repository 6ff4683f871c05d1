/**
 * Bounds on a zip package (DOCX, and next XLSX) before a parser library inflates it: the parts a
 * reader will open are inflated here once, streaming, counting bytes and keeping none, so a zip
 * bomb is refused after at most `maxInflatedBytes` of work whatever sizes its headers declare.
 */
import { Unzip, UnzipInflate } from 'fflate'
import { mib, UnreadableDocument } from './types'

/** Feed size: one pushed chunk of a bomb inflates to at most ~1000 times this before we can stop. */
const CHUNK = 16 * 1024

/**
 * Refuses (UnreadableDocument, naming the limit) a package whose parts chosen by `include`
 * inflate past `maxInflatedBytes`, one part or all of them together.
 */
export function assertZipInflatesWithin(bytes: Uint8Array, maxInflatedBytes: number, include: (name: string) => boolean): void {
  let total = 0
  let breach = false
  const unzip = new Unzip()
  unzip.register(UnzipInflate)
  unzip.onfile = (file) => {
    if (breach || !include(file.name)) return
    file.ondata = (err, chunk) => {
      if (err) return // damaged: the reader below says what it can of it
      total += chunk.length
      if (total > maxInflatedBytes && !breach) {
        breach = true
        file.terminate()
      }
    }
    file.start()
  }
  try {
    for (let at = 0; at < bytes.length && !breach; at += CHUNK) {
      unzip.push(bytes.subarray(at, Math.min(bytes.length, at + CHUNK)), at + CHUNK >= bytes.length)
    }
  } catch {
    // A damaged package: the reader below says what it can of it.
  }
  if (breach) throw new UnreadableDocument(`the package inflates past the ${mib(maxInflatedBytes)} limit (SVC_PARSE_MAX_INFLATED_MB)`)
}
