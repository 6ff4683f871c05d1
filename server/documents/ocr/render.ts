/**
 * Images for OCR: a PDF page rendered by pdf.js onto a `@napi-rs/canvas` canvas (Skia, prebuilt,
 * MIT), and TIFF frames decoded by `utif2` and re-encoded as PNG. Sizes are checked before any
 * pixel is allocated, so a page or frame over the pixel limit costs nothing.
 */
import { renderPageAsImage } from 'unpdf'
import UTIF from 'utif2'
import { createCanvas } from '@napi-rs/canvas'
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

/** One frame of a TIFF: its size, and a way to get it as PNG (decoded only when asked). */
export interface TiffFrame { width: number; height: number; png(): Uint8Array }

/** The frames (pages) of a TIFF file, decoded lazily; throws on a file that is not a TIFF. */
export function tiffFrames(bytes: Uint8Array): TiffFrame[] {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  const ifds = UTIF.decode(buffer)
  return ifds.map((ifd) => {
    const width = Number((ifd as Record<string, unknown>).t256?.toString().split(',')[0] ?? 0)
    const height = Number((ifd as Record<string, unknown>).t257?.toString().split(',')[0] ?? 0)
    return {
      width,
      height,
      png() {
        UTIF.decodeImage(buffer, ifd)
        const rgba = UTIF.toRGBA8(ifd)
        const canvas = createCanvas(ifd.width, ifd.height)
        const ctx = canvas.getContext('2d')
        const data = ctx.createImageData(ifd.width, ifd.height)
        data.data.set(rgba)
        ctx.putImageData(data, 0, 0)
        return new Uint8Array(canvas.toBuffer('image/png'))
      },
    }
  })
}
