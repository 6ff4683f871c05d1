/**
 * Images for OCR: a PDF page rendered by pdf.js onto a `@napi-rs/canvas` canvas (Skia, prebuilt,
 * MIT). Sizes are checked before any pixel is allocated, so a page over the pixel limit costs
 * nothing. (TIFF frames are decoded by the image adapter: adapters/tiff.ts.)
 */
import { renderPageAsImage } from 'unpdf'
import { createCanvas, loadImage } from '@napi-rs/canvas'
import type { RenderablePdf } from '../adapters/types'

interface PdfPage { getViewport(o: { scale: number }): { width: number; height: number } }

/**
 * Renders one page at `dpi`, lowered so the image stays within `maxPixels`; PNG bytes, or
 * undefined when pdf.js cannot draw the page.
 */
export async function renderPdfPage(pdf: RenderablePdf, pageNumber: number, opts: { dpi: number; maxPixels: number }): Promise<Uint8Array | undefined> {
  try {
    const page = (await pdf.getPage(pageNumber)) as PdfPage
    const { width, height } = page.getViewport({ scale: 1 })
    const wanted = opts.dpi / 72
    const fitting = Math.sqrt(opts.maxPixels / Math.max(1, width * height))
    const scale = Math.min(wanted, fitting)
    const png = await renderPageAsImage(pdf as never, pageNumber, { canvasImport: () => import('@napi-rs/canvas'), scale })
    return new Uint8Array(png)
  } catch {
    return undefined
  }
}

/** Whether the bytes are a JPEG (they may carry an EXIF orientation). */
export const isJpeg = (b: Uint8Array) => b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff

/**
 * The EXIF orientation (1-8) of a JPEG, 1 when it has none. Only the orientation tag of IFD0 is
 * read (a few header bytes), so an upright image is not decoded and re-encoded for nothing.
 */
export function jpegOrientation(b: Uint8Array): number {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
  let at = 2
  while (at + 4 <= b.length && b[at] === 0xff) {
    const marker = b[at + 1]!
    const length = v.getUint16(at + 2)
    if (marker === 0xda || marker === 0xd9) break // image data: no EXIF before it
    const tiff = at + 10
    if (marker === 0xe1 && length >= 16 && String.fromCharCode(...b.subarray(at + 4, at + 8)) === 'Exif' && tiff + 8 <= b.length) {
      const little = b[tiff] === 0x49
      const ifd = tiff + v.getUint32(tiff + 4, little)
      if (ifd + 2 > b.length) return 1
      const entries = v.getUint16(ifd, little)
      for (let i = 0; i < entries; i++) {
        const e = ifd + 2 + i * 12
        if (e + 10 > b.length) break
        if (v.getUint16(e, little) === 0x0112) {
          const o = v.getUint16(e + 8, little)
          return o >= 1 && o <= 8 ? o : 1
        }
      }
      return 1
    }
    at += 2 + length
  }
  return 1
}

/**
 * The image as PNG, turned by `quarterTurns` x 90 degrees clockwise, with its EXIF orientation
 * applied first (Skia's decoder honours it), or undefined when it cannot be decoded.
 */
export async function orientedPng(bytes: Uint8Array, quarterTurns: 0 | 1 | 2 | 3): Promise<Uint8Array | undefined> {
  try {
    const img = await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    const sideways = quarterTurns % 2 === 1
    const canvas = createCanvas(sideways ? img.height : img.width, sideways ? img.width : img.height)
    const ctx = canvas.getContext('2d')
    ctx.translate(canvas.width / 2, canvas.height / 2)
    ctx.rotate((quarterTurns * Math.PI) / 2)
    ctx.drawImage(img, -img.width / 2, -img.height / 2)
    return new Uint8Array(canvas.toBuffer('image/png'))
  } catch {
    return undefined
  }
}

/**
 * The share of dark pixels of an image (0-1), measured on a small copy: a blank page has almost
 * none, a page of text a few percent, a photo or noise much more. Undefined when undecodable.
 */
export async function inkShare(bytes: Uint8Array): Promise<number | undefined> {
  try {
    const img = await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    const w = 120
    const h = Math.max(1, Math.round((img.height / Math.max(1, img.width)) * w))
    const canvas = createCanvas(w, h)
    const ctx = canvas.getContext('2d')
    ctx.fillStyle = '#ffffff'
    ctx.fillRect(0, 0, w, h)
    ctx.drawImage(img, 0, 0, w, h)
    const { data } = ctx.getImageData(0, 0, w, h)
    let dark = 0
    for (let i = 0; i < data.length; i += 4) if ((data[i]! + data[i + 1]! + data[i + 2]!) / 3 < 160) dark++
    return dark / (w * h)
  } catch {
    return undefined
  }
}
