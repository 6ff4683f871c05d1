/**
 * Which character encoding a text file is read in, and who decided: the `charset` parameter of
 * its declared content type when it names an encoding iconv-lite knows; else a byte-order mark;
 * else bytes that are valid UTF-8 are UTF-8; else the `chardet` detector's best guess (Shift_JIS,
 * EUC-JP, GB18030, Windows-1252, ...) when it is confident (jschardet was tried: it gave a
 * Shift_JIS page 0.45 and stray bytes in ASCII a guess too; chardet gives 100 and 44); else UTF-8 with invalid sequences
 * replaced (a lossy read). The document's page summary records the encoding and its source.
 */
import iconv from 'iconv-lite'
import chardet from 'chardet'

/** How an encoding was chosen. */
export type EncodingSource = 'declared' | 'bom' | 'detected' | 'default'

/** The encoding a text was read in and how it was chosen. */
export interface TextEncoding { charset: string; source: EncodingSource }

/** A decoded text: its encoding, and whether bytes had to be replaced. */
export interface Decoded { text: string; lossy: boolean; encoding: TextEncoding }

/** The detector reads this much of a file (it is slow on megabytes, and this is plenty to decide). */
const DETECT_BYTES = 256 * 1024

/** The detector's guesses below this confidence (0-100) are not trusted (UTF-8 with replacement instead). */
const MIN_CONFIDENCE = 60

const BOMS: [number[], string][] = [[[0xef, 0xbb, 0xbf], 'utf-8'], [[0xff, 0xfe], 'utf-16le'], [[0xfe, 0xff], 'utf-16be']]

/** Whether iconv-lite can decode an encoding label. */
export const knownCharset = (label: string) => iconv.encodingExists(label)

/** Decodes with iconv-lite; lossy when a replacement character appears that the bytes did not spell. */
function decodeWith(bytes: Uint8Array, charset: string, skip = 0): { text: string; lossy: boolean } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset + skip, bytes.byteLength - skip)
  if (charset.replace(/[-_]/g, '') === 'utf8') {
    try {
      return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buffer), lossy: false }
    } catch {
      return { text: new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(buffer), lossy: true }
    }
  }
  const text = iconv.decode(buffer, charset, { stripBOM: true })
  return { text, lossy: text.includes('\ufffd') }
}

/** What a lossy decode notes (content-free). */
export const replacedNote = (encoding: TextEncoding) => `invalid ${encoding.charset === 'utf-8' ? 'UTF-8' : encoding.charset} byte sequences were replaced`

/** Decodes a text file's bytes as described above. */
export function decodeText(bytes: Uint8Array, declared?: string): Decoded {
  if (declared && knownCharset(declared)) return { ...decodeWith(bytes, declared), encoding: { charset: declared, source: 'declared' } }
  for (const [mark, charset] of BOMS) {
    if (mark.every((b, i) => bytes[i] === b)) return { ...decodeWith(bytes, charset, mark.length), encoding: { charset, source: 'bom' } }
  }
  // Valid UTF-8 is UTF-8 (a strict decode stops at the first invalid byte: no lossy decode of the
  // whole file is made unless it is the answer).
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
    return { text, lossy: false, encoding: { charset: 'utf-8', source: 'default' } }
  } catch { /* not UTF-8: detect */ }
  const sample = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, DETECT_BYTES))
  const guess = chardet.analyse(sample)[0]
  const charset = guess?.name.toLowerCase()
  if (guess && charset && guess.confidence >= MIN_CONFIDENCE && charset !== 'utf-8' && charset !== 'ascii' && knownCharset(charset)) {
    const decoded = decodeWith(bytes, charset)
    if (!decoded.lossy) return { ...decoded, encoding: { charset, source: 'detected' } }
  }
  return { ...decodeWith(bytes, 'utf-8'), encoding: { charset: 'utf-8', source: 'default' } }
}
