/**
 * Images (PNG, JPEG, WebP; TIFF with one page per frame), read by OCR. Each frame ends `ocr`,
 * `blank` or `unreadable` with its reason; without an OCR engine every frame is unreadable.
 * A frame over the pixel limit is refused from its header, before any pixel is decoded.
 */
import { tiffFrames } from '../ocr/render'
import { pagesInFlight } from '../ocr/in-flight'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter, type ExtractedPage, type RecognizedPage } from './types'

const isTiff = (b: Uint8Array) =>
  b.length > 4 && ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))

const noEngine: RecognizedPage = { segments: [], outcome: 'unreadable', reason: 'no OCR engine in this process' }

/** The image adapter. */
export const readImage: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  const ocr = options.ocr
  if (!isTiff(bytes)) {
    const page = ocr ? await ocr.image(bytes) : noEngine
    return { pages: [{ page: 1, ...page }], degraded: false, notes: [] }
  }
  let frames: ReturnType<typeof tiffFrames>
  try {
    frames = tiffFrames(bytes)
  } catch {
    throw new UnreadableDocument('the TIFF structure is invalid')
  }
  if (frames.length === 0) throw new UnreadableDocument('the TIFF holds no image')
  const pages: ExtractedPage[] = []
  // Frames are read in parallel (up to the engine's `parallel`), each filling its own place.
  const inFlight = pagesInFlight(ocr?.parallel ?? 1)
  for (let i = 0; i < frames.length; i++) {
    const n = i + 1
    if (n > options.maxPages) {
      pages.push({ page: n, segments: [], outcome: 'unreadable', reason: `beyond the page limit ${options.maxPages} (${options.maxPagesSource ?? 'SVC_PARSE_MAX_PAGES'})` })
      continue
    }
    if (!ocr) { pages.push({ page: n, ...noEngine }); continue }
    const frame = frames[i]!
    const pixels = frame.width * frame.height
    if (pixels > ocr.maxPixels) {
      pages.push({ page: n, segments: [], outcome: 'unreadable', reason: `the image has ${pixels} pixels, over the limit of ${ocr.maxPixels} (SVC_OCR_MAX_PIXELS)` })
      continue
    }
    const at = pages.push({ page: n, segments: [], outcome: 'unreadable', reason: 'the image could not be recognised' }) - 1
    await inFlight.add(async () => {
      pages[at] = { page: n, ...(await ocr.image(() => frame.png())) }
      options.onPage?.(n, frames.length)
    })
  }
  await inFlight.drain()
  return { pages, degraded: false, notes: [] }
}
