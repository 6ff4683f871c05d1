/**
 * Decoded pixels as PNG for the OCR engine, written here: the rows as they are (filter none),
 * deflated by the native zlib at its fastest level. A frame handed to OCR is decoded again at
 * once, so its size matters less than the time to write it: Skia's PNG encoder (through a canvas,
 * which also premultiplies the pixels) took longer than decoding a HEIC or a G4 fax frame itself.
 * Opaque pixels are written as RGB, others as RGBA; the values are kept exactly.
 */
import { deflateSync } from 'node:zlib'

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

/** One PNG chunk: length, type, data, CRC-32 of type and data. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(data, 8)
  view.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)) >>> 0)
  return out
}

/** RGBA pixels (`width` x `height`, 4 bytes a pixel, row by row) as a PNG file. */
export function rgbaPng(width: number, height: number, rgba: Uint8Array | Uint8ClampedArray): Uint8Array {
  if (width <= 0 || height <= 0 || rgba.length < width * height * 4) throw new RangeError('the pixels do not fill the image')
  let opaque = true
  for (let i = 3; i < width * height * 4; i += 4) if (rgba[i] !== 255) { opaque = false; break }
  const channels = opaque ? 3 : 4
  const stride = width * channels + 1
  const raw = new Uint8Array(stride * height)
  for (let y = 0; y < height; y++) {
    const row = y * stride // its first byte is the filter: 0, none
    const from = y * width * 4
    if (!opaque) { raw.set(rgba.subarray(from, from + width * 4), row + 1); continue }
    for (let x = 0, s = from, d = row + 1; x < width; x++, s += 4, d += 3) {
      raw[d] = rgba[s]!
      raw[d + 1] = rgba[s + 1]!
      raw[d + 2] = rgba[s + 2]!
    }
  }
  const header = new Uint8Array(13)
  const view = new DataView(header.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  header[8] = 8 // bits per channel
  header[9] = opaque ? 2 : 6 // colour type: RGB or RGBA
  const parts = [SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 1 })), chunk('IEND', new Uint8Array(0))]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
