/**
 * TIFF frames (pages), found by walking the file's image file directories ourselves, strictly and
 * within bounds (a directory chain that loops, a directory outside the file, a tag whose values
 * run past the end, more frames than the walk allows: each is caught here, never handed to the
 * decoder), then decoded one at a time by `utif2` (uncompressed, PackBits, LZW, Deflate, JPEG and
 * CCITT G3/G4 fax) only once the frame is admitted: its size is read from its directory, so a
 * frame over the pixel limit is refused before any pixel is allocated. Scanners and libtiff often
 * write the directories after the image data, at the end of the file: the walk starts wherever
 * the header points.
 */
import UTIF from 'utif2'
import { rgbaPng } from './png'
import { isTiff } from './tiff-header'

/** One frame of a TIFF: its size and coding, and a way to get it as PNG (decoded only when asked). */
export interface TiffFrame {
  width: number
  height: number
  /** The TIFF compression code (1 none, 3/4 CCITT fax, 5 LZW, 7 JPEG, 8 Deflate, 32773 PackBits). */
  compression: number
  /** Decodes the frame and encodes it as PNG; throws when the frame cannot be decoded. */
  png(): Uint8Array
}

/** The frames of a TIFF, and whether the walk stopped at its frame bound with directories left. */
export interface TiffDirectories { frames: TiffFrame[]; truncated: boolean }

/** A TIFF that cannot be walked: the reason is short and content-free. */
export class InvalidTiff extends Error {}

const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 }

/**
 * Walks the directory chain of a TIFF: at most `maxFrames` frames (the rest is `truncated`).
 * Throws InvalidTiff for a file whose header or first directory is unusable; a later directory
 * that is broken ends the walk there (the frames before it are kept).
 */
export function tiffDirectories(bytes: Uint8Array, maxFrames: number): TiffDirectories {
  if (!isTiff(bytes)) throw new InvalidTiff('not a TIFF')
  const little = bytes[0] === 0x49
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const seen = new Set<number>()
  const frames: TiffFrame[] = []
  let offset = v.getUint32(4, little)
  let truncated = false
  while (offset !== 0) {
    if (frames.length >= maxFrames) { truncated = true; break }
    const dir = readDirectory(v, little, offset, seen)
    if (!dir) {
      if (frames.length === 0) throw new InvalidTiff('the first image directory is invalid')
      break
    }
    const at = offset
    frames.push({ width: dir.width, height: dir.height, compression: dir.compression, png: () => framePng(bytes, at) })
    offset = dir.next
  }
  if (frames.length === 0 && !truncated) throw new InvalidTiff('no image directory')
  return { frames, truncated }
}

interface Directory { width: number; height: number; compression: number; next: number }

/** One directory, checked: inside the file, not seen before, every tag's values inside the file. */
function readDirectory(v: DataView, little: boolean, at: number, seen: Set<number>): Directory | undefined {
  if (at < 8 || at + 2 > v.byteLength || seen.has(at)) return undefined
  seen.add(at)
  const count = v.getUint16(at, little)
  if (count === 0 || at + 2 + count * 12 + 4 > v.byteLength) return undefined
  const tags = new Map<number, number>()
  for (let i = 0; i < count; i++) {
    const e = at + 2 + i * 12
    const tag = v.getUint16(e, little)
    const type = v.getUint16(e + 2, little)
    const n = v.getUint32(e + 4, little)
    const size = TYPE_SIZE[type]
    if (size === undefined) continue // unknown type: the decoder skips it too
    const bytes = size * n
    if (bytes > 4 && (bytes > v.byteLength || v.getUint32(e + 8, little) + bytes > v.byteLength)) return undefined
    if (n >= 1 && (type === 3 || type === 4)) tags.set(tag, type === 3 ? v.getUint16(e + 8, little) : v.getUint32(e + 8, little))
  }
  const width = tags.get(256) ?? 0
  const height = tags.get(257) ?? 0
  if (width === 0 || height === 0) return undefined
  const bps = tags.get(258) ?? 1
  const spp = tags.get(277) ?? 1
  if (bps > 32 || spp > 8) return undefined
  return { width, height, compression: tags.get(259) ?? 1, next: v.getUint32(at + 2 + count * 12, little) }
}

/** Tags utif2 follows into other directories (sub-images, EXIF, GPS, DNG, maker notes): never needed for the page itself. */
const FOLLOWED_TAGS = new Set([330, 34665, 34853, 50740, 61440, 37500])

/**
 * Decodes the frame whose directory is at `ifd` and encodes it as PNG. utif2 reads a whole chain
 * from the header and follows sub-directories unchecked, so for the call the header points at this
 * frame, its next pointer is cleared and the tags it would follow are renamed (all restored after):
 * the library sees one directory that the walk already checked.
 */
function framePng(bytes: Uint8Array, ifd: number): Uint8Array {
  const little = bytes[0] === 0x49
  const buffer = (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer) as ArrayBuffer
  const view = new DataView(buffer)
  const count = view.getUint16(ifd, little)
  const patches: [at: number, value: number, bytes: 2 | 4][] = [[4, ifd, 4], [ifd + 2 + count * 12, 0, 4]]
  for (let i = 0; i < count; i++) if (FOLLOWED_TAGS.has(view.getUint16(ifd + 2 + i * 12, little))) patches.push([ifd + 2 + i * 12, 0xffff, 2])
  const saved = patches.map(([at, , n]) => (n === 4 ? view.getUint32(at, little) : view.getUint16(at, little)))
  let frame: ReturnType<typeof UTIF.decode>[number]
  try {
    for (const [at, value, n] of patches) n === 4 ? view.setUint32(at, value, little) : view.setUint16(at, value, little)
    frame = (UTIF.decode as (b: ArrayBuffer, prm: object) => ReturnType<typeof UTIF.decode>)(buffer, { parseMN: false, debug: false })[0]!
    UTIF.decodeImage(buffer, frame)
  } finally {
    patches.forEach(([at, , n], i) => (n === 4 ? view.setUint32(at, saved[i]!, little) : view.setUint16(at, saved[i]!, little)))
  }
  const rgba = UTIF.toRGBA8(frame)
  if (!frame.width || !frame.height || rgba.length < frame.width * frame.height * 4) throw new InvalidTiff('the frame could not be decoded')
  return rgbaPng(frame.width, frame.height, rgba)
}
