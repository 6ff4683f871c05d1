/**
 * The TIFF walk and decoders of the image adapter, without OCR: CCITT G4 and G3 fax frames decode
 * to the very pixels that were encoded, directories at the end of the file are found, a hostile
 * directory chain (a loop, a directory outside the file, a tag running past the end) is caught
 * before the decoder sees it, and the upload sniffer recognises a TIFF whose directory lies past
 * the bytes it sees. HEIF sizes are read from the headers.
 */
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { loadImage, createCanvas } from '@napi-rs/canvas'
import { bilevel, faxTiff, tiffFile } from '../helpers/tiff'
import { textPage } from '../helpers/scans'
import { heifClaiming } from '../helpers/heic'
import { tiffDirectories } from '../../server/documents/adapters/tiff'
import { heifDeclaredPixels, isHeif } from '../../server/documents/adapters/heic'
import { findFileType, sniffContradiction, SNIFF_BYTES } from '../../server/documents/registry'
import { readImage, pictureWithoutText } from '../../server/documents/adapters/image'

setDefaultTimeout(60_000) // decoding three full fax pages, twice, on a shared machine

/** The bilevel pixels of a PNG. */
async function pixelsOf(png: Uint8Array) {
  const img = await loadImage(Buffer.from(png))
  const c = createCanvas(img.width, img.height)
  c.getContext('2d').drawImage(img, 0, 0)
  return bilevel(c)
}

const pages = [
  textPage(['Facsimile cover sheet', 'To: underwriting desk', 'Pages: 3 including this one']),
  textPage(['Schedule of values', 'Building 1: 1,200,000.00', 'Building 2: 640,000.00']),
  textPage(['Signed and dated', 'March 14, 2024']),
]

describe('TIFF frames', () => {
  for (const compression of [4, 3] as const) {
    test(`a three-page CCITT ${compression === 4 ? 'G4' : 'G3'} TIFF with its directories at the end decodes to the encoded pixels, frame by frame`, async () => {
      const tiff = faxTiff(pages, { compression })
      const first = new DataView(tiff.buffer, tiff.byteOffset).getUint32(4, true)
      expect(first).toBeGreaterThan(tiff.length - 3 * 200) // the directories are the file's last bytes
      const { frames, truncated } = tiffDirectories(tiff, 100)
      expect(truncated).toBe(false)
      expect(frames.map((f) => [f.width, f.height, f.compression])).toEqual(pages.map((p) => [p.width, p.height, compression]))
      for (const [i, f] of frames.entries()) {
        const got = await pixelsOf(f.png())
        expect(got.bits).toEqual(bilevel(pages[i]!).bits)
      }
    })
  }

  test('a directory chain that loops, a directory past the end, and a tag whose values run past the end are caught before decoding', () => {
    const tiny = { width: 8, height: 8, strip: new Uint8Array(64), compression: 1, photometric: 1, bitsPerSample: 8 }
    const two = tiffFile([tiny, tiny])
    const v = new DataView(two.buffer, two.byteOffset)
    const firstIfd = v.getUint32(4, true)
    const secondIfd = v.getUint32(firstIfd + 2 + v.getUint16(firstIfd, true) * 12, true)
    // The second directory points back at the first: two frames, then the loop ends the walk.
    const loop = new Uint8Array(two)
    new DataView(loop.buffer).setUint32(secondIfd + 2 + v.getUint16(secondIfd, true) * 12, firstIfd, true)
    expect(tiffDirectories(loop, 100).frames).toHaveLength(2)
    // The header points past the end: no frame at all.
    const outside = new Uint8Array(two)
    new DataView(outside.buffer).setUint32(4, two.length + 100, true)
    expect(() => tiffDirectories(outside, 100)).toThrow()
    // The strip offsets tag (type LONG) claims a billion values: the directory is refused.
    const huge = new Uint8Array(two)
    const hv = new DataView(huge.buffer)
    for (let i = 0; i < hv.getUint16(firstIfd, true); i++) {
      const e = firstIfd + 2 + i * 12
      if (hv.getUint16(e, true) === 273) hv.setUint32(e + 4, 1_000_000_000, true)
    }
    expect(() => tiffDirectories(huge, 100)).toThrow()
    // The walk stops at its frame bound and says so.
    expect(tiffDirectories(tiffFile(Array.from({ length: 5 }, () => tiny)), 3)).toMatchObject({ truncated: true })
  })

  test('the upload sniffer recognises a TIFF whose directory lies past the bytes it sees', async () => {
    const tiff = faxTiff([textPage(Array.from({ length: 30 }, (_, i) => `Line ${i + 1} of a long faxed schedule with amounts ${i * 1000}.00`))], { compression: 3 })
    expect(tiff.length).toBeGreaterThan(SNIFF_BYTES)
    expect(new DataView(tiff.buffer, tiff.byteOffset).getUint32(4, true)).toBeGreaterThan(SNIFF_BYTES)
    const head = tiff.subarray(0, SNIFF_BYTES)
    expect(await sniffContradiction(findFileType('image/tiff')!, head, tiff.length)).toBeNull()
    // The same head declared as a PNG is refused, and a directory offset past the file is not a TIFF.
    expect(await sniffContradiction(findFileType('image/png')!, head, tiff.length)).toBe('image/tiff')
    expect(await sniffContradiction(findFileType('image/tiff')!, head, SNIFF_BYTES)).toBe('unrecognised bytes')
  })
})

describe('HEIF headers', () => {
  test('the declared size is read from the headers, before any decoder is loaded', () => {
    const claim = heifClaiming(100_000, 100_000)
    expect(isHeif(claim)).toBe(true)
    expect(heifDeclaredPixels(claim)).toBe(10_000_000_000)
  })

  test('a HEIF over the pixel limit is refused from its header; without an OCR engine a page says so', async () => {
    const ocr = { maxPixels: 40_000_000, image: async () => { throw new Error('must not be called') }, pdfPage: async () => { throw new Error('no') } }
    const read = await readImage(heifClaiming(100_000, 100_000), { maxPages: 10, maxInflatedBytes: 1 << 20, ocr })
    expect(read.pages).toEqual([{ page: 1, segments: [], outcome: 'unreadable', reason: 'the image has 10000000000 pixels, over the limit of 40000000 (SVC_OCR_MAX_PIXELS)' }])
  })
})

describe('pictures without text', () => {
  test('only a page OCR found no legible text on is a picture without text (not a limit or a decoding failure)', () => {
    expect(pictureWithoutText({ segments: [], outcome: 'unreadable', reason: 'no legible text found on a page that is not blank' })).toBe(true)
    expect(pictureWithoutText({ segments: [], outcome: 'unreadable', reason: 'no legible text (OCR confidence 12)' })).toBe(true)
    expect(pictureWithoutText({ segments: [], outcome: 'unreadable', reason: 'the image could not be decoded' })).toBe(false)
    expect(pictureWithoutText({ segments: [], outcome: 'unreadable', reason: 'not recognised: beyond the OCR page limit 10 (SVC_OCR_MAX_PAGES)' })).toBe(false)
    expect(pictureWithoutText({ segments: [], outcome: 'blank' })).toBe(false)
  })
})

describe('PNG written for OCR (png.ts)', () => {
  test('Skia reads back the very pixels, opaque (RGB) and translucent (RGBA)', async () => {
    const { rgbaPng } = await import('../../server/documents/adapters/png')
    const [w, h] = [37, 23]
    const px = new Uint8Array(w * h * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 7919) % 256))
    for (const translucent of [false, true]) {
      if (translucent) px[3] = 128
      const png = rgbaPng(w, h, px)
      expect(png[25]).toBe(translucent ? 6 : 2) // IHDR colour type
      const img = await loadImage(Buffer.from(png))
      const c = createCanvas(w, h)
      c.getContext('2d').drawImage(img, 0, 0)
      const back = c.getContext('2d').getImageData(0, 0, w, h).data
      expect([img.width, img.height]).toEqual([w, h])
      // The first pixel is the translucent one (a canvas keeps it premultiplied): every other byte exactly.
      expect(Array.from(back.subarray(4))).toEqual(Array.from(px.subarray(4)))
    }
    expect(() => rgbaPng(w, h, px.subarray(0, 10))).toThrow(RangeError)
  })
})
