/**
 * TIFF files as scanners and fax software write them, built in the test run: bilevel pages
 * compressed with CCITT Group 4 (T.6) or Group 3 (T.4, one-dimensional), and the image file
 * directories written after the image data, at the end of the file (as libtiff does when it
 * writes a file in one pass). The CCITT code tables are utif2's own (its decoder's tables,
 * inverted), so the encoder and the decoder under test agree on the standard's codes by
 * construction and only the encoding logic here is new.
 */
import type { Canvas } from '@napi-rs/canvas'
import UTIF from 'utif2'
import type { Bytes } from './samples'

/** One frame: its size, its bytes (one strip) and how they are coded. */
export interface TiffFrameData {
  width: number
  height: number
  strip: Uint8Array
  /** 1 none, 3 CCITT T.4, 4 CCITT T.6. */
  compression: number
  /** 0 WhiteIsZero (fax), 1 BlackIsZero. */
  photometric: number
  bitsPerSample: number
}

/**
 * A TIFF (little-endian) of the frames. `ifdAtEnd`: every directory after all image data, the
 * header's first-directory offset pointing near the end of the file.
 */
export function tiffFile(frames: TiffFrameData[], opts: { ifdAtEnd?: boolean } = {}): Bytes {
  const ifdSize = (n: number) => 2 + n * 12 + 4
  const entriesOf = (f: TiffFrameData, stripAt: number): [number, number, number][] => [
    [256, 4, f.width], [257, 4, f.height], [258, 3, f.bitsPerSample], [259, 3, f.compression], [262, 3, f.photometric],
    [273, 4, stripAt], [277, 3, 1], [278, 4, f.height], [279, 4, f.strip.length],
    ...(f.compression === 3 ? [[292, 4, 0] as [number, number, number]] : []),
    ...(f.compression === 4 ? [[293, 4, 0] as [number, number, number]] : []),
  ]
  const sizes = frames.map((f) => ifdSize(entriesOf(f, 0).length))
  const total = 8 + frames.reduce((n, f) => n + f.strip.length, 0) + sizes.reduce((a, b) => a + b, 0)
  const out = new Uint8Array(total + (total % 2))
  const v = new DataView(out.buffer)
  v.setUint16(0, 0x4949, true)
  v.setUint16(2, 42, true)
  // Layout: data then directories (ifdAtEnd), or each directory followed by its data.
  const stripAt: number[] = []
  const ifdAt: number[] = []
  let at = 8
  if (opts.ifdAtEnd) {
    for (const f of frames) { stripAt.push(at); out.set(f.strip, at); at += f.strip.length }
    at += at % 2
    for (const s of sizes) { ifdAt.push(at); at += s }
  } else {
    frames.forEach((f, i) => { ifdAt.push(at); at += sizes[i]!; stripAt.push(at); out.set(f.strip, at); at += f.strip.length; at += at % 2 })
  }
  v.setUint32(4, ifdAt[0]!, true)
  frames.forEach((f, i) => {
    const entries = entriesOf(f, stripAt[i]!)
    let p = ifdAt[i]!
    v.setUint16(p, entries.length, true)
    p += 2
    for (const [tag, type, value] of entries) {
      v.setUint16(p, tag, true); v.setUint16(p + 2, type, true); v.setUint32(p + 4, 1, true)
      if (type === 3) v.setUint16(p + 8, value, true)
      else v.setUint32(p + 8, value, true)
      p += 12
    }
    v.setUint32(p, i < frames.length - 1 ? ifdAt[i + 1]! : 0, true)
  })
  return out.subarray(0, Math.max(at, total))
}

/** A page as bilevel pixels, one byte per pixel: 1 black (darker than mid grey), 0 white. */
export function bilevel(page: Canvas): { width: number; height: number; bits: Uint8Array } {
  const { data } = page.getContext('2d').getImageData(0, 0, page.width, page.height)
  const bits = new Uint8Array(page.width * page.height)
  for (let i = 0; i < bits.length; i++) bits[i] = (data[i * 4]! + data[i * 4 + 1]! + data[i * 4 + 2]!) / 3 < 128 ? 1 : 0
  return { width: page.width, height: page.height, bits }
}

/** The CCITT run-length codes (white, black) by run length, from utif2's decoder tables. */
const RUN_CODES: [Map<number, string>, Map<number, string>] = (() => {
  const lens = (UTIF as unknown as { decode: { _lens: [Record<string, number>, Record<string, number>] } }).decode._lens
  return [0, 1].map((c) => new Map(Object.entries(lens[c]!).map(([code, n]) => [n, code]))) as [Map<number, string>, Map<number, string>]
})()

/** Bits as a string of 0/1 packed MSB first (FillOrder 1), padded with zeros to a byte. */
class BitWriter {
  #bytes: number[] = []
  #acc = 0
  #n = 0
  put(code: string) {
    for (const ch of code) {
      this.#acc = (this.#acc << 1) | (ch === '1' ? 1 : 0)
      if (++this.#n === 8) { this.#bytes.push(this.#acc); this.#acc = 0; this.#n = 0 }
    }
  }
  /** Pads to the next byte boundary. */
  align() { while (this.#n !== 0) this.put('0') }
  bytes(): Uint8Array { this.align(); return new Uint8Array(this.#bytes) }
}

/** The codes of one run of `color` (0 white, 1 black): make-up codes, then a terminating code. */
function run(w: BitWriter, color: 0 | 1, length: number) {
  const codes = RUN_CODES[color]
  while (length >= 2560) { w.put(codes.get(2560)!); length -= 2560 }
  if (length >= 64) { const m = length - (length % 64); w.put(codes.get(m)!); length -= m }
  w.put(codes.get(length)!)
}

/** The first changing element at or after `from` whose new colour is `color` (imaginary white before pixel 0); `width` when none. */
function next(line: Uint8Array, from: number, color: number, width: number): number {
  for (let i = Math.max(0, from); i < width; i++) if (line[i] === color && (i === 0 ? color !== 0 : line[i - 1] !== color)) return i
  return width
}

const VERTICAL: Record<number, string> = { 0: '1', 1: '011', 2: '000011', 3: '0000011', [-1]: '010', [-2]: '000010', [-3]: '0000010' }

/** Bilevel pixels (1 black) coded as CCITT Group 4 (ITU-T T.6: pass, horizontal and vertical modes against the line above). */
export function g4Encode(width: number, height: number, bits: Uint8Array): Uint8Array {
  const w = new BitWriter()
  let ref: Uint8Array = new Uint8Array(width)
  for (let y = 0; y < height; y++) {
    const line = bits.subarray(y * width, (y + 1) * width)
    let a0 = -1
    let color: 0 | 1 = 0
    while (a0 < width) {
      const start = a0 < 0 ? 0 : a0 + 1
      const a1 = next(line, start, 1 - color, width)
      const b1 = next(ref, start, 1 - color, width)
      const b2 = next(ref, b1 + 1, color, width)
      if (b2 < a1) { w.put('0001'); a0 = b2; continue }
      if (Math.abs(a1 - b1) <= 3) { w.put(VERTICAL[a1 - b1]!); a0 = a1; color = (1 - color) as 0 | 1; continue }
      const a2 = next(line, a1 + 1, color, width)
      w.put('001')
      run(w, color, a1 - Math.max(0, a0))
      run(w, (1 - color) as 0 | 1, a2 - a1)
      a0 = a2
    }
    ref = line
  }
  w.put('000000000001000000000001') // end of facsimile block
  return w.bytes()
}

/** Bilevel pixels (1 black) coded as CCITT Group 3, one-dimensional (T.4 Modified Huffman): an EOL, then each line's runs. */
export function g3Encode(width: number, height: number, bits: Uint8Array): Uint8Array {
  const w = new BitWriter()
  for (let y = 0; y < height; y++) {
    w.put('000000000001')
    const line = bits.subarray(y * width, (y + 1) * width)
    let at = 0
    let color: 0 | 1 = 0
    while (at < width) {
      const end = next(line, at === 0 ? 0 : at + 1, 1 - color, width)
      run(w, color, end - at)
      at = end
      color = (1 - color) as 0 | 1
    }
  }
  return w.bytes()
}

/** A fax TIFF of pages: bilevel, CCITT G4 (or G3), WhiteIsZero, directories at the end of the file by default. */
export function faxTiff(pages: Canvas[], opts: { compression?: 3 | 4; ifdAtEnd?: boolean } = {}): Bytes {
  const compression = opts.compression ?? 4
  return tiffFile(pages.map((p) => {
    const { width, height, bits } = bilevel(p)
    return { width, height, compression, photometric: 0, bitsPerSample: 1, strip: compression === 4 ? g4Encode(width, height, bits) : g3Encode(width, height, bits) }
  }), { ifdAtEnd: opts.ifdAtEnd ?? true })
}
