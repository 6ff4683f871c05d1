/**
 * Images (PNG, JPEG, WebP; TIFF and HEIC/HEIF with one page per frame or image), read by OCR.
 * Each page ends `ocr`, `blank`, `unreadable` with its reason, or `image_no_text`: a picture in
 * which OCR found no legible text (a property photo, a logo) is kept as what it is, not a failure
 * and never read text. Without an OCR engine every page is unreadable. A frame over the pixel limit
 * is refused from its header, before any pixel is decoded.
 */
import { heifDeclaredPixels, isHeif, openHeif } from './heic'
import { InvalidTiff, tiffDirectories } from './tiff'
import { isTiff } from './tiff-header'
import { pagesInFlight } from '../ocr/in-flight'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter, type ExtractedPage, type ReadOptions, type RecognizedPage } from './types'

const noEngine: RecognizedPage = { segments: [], outcome: 'unreadable', reason: 'no OCR engine in this process' }

/** The most TIFF directories walked: past it the file is cut short, and says so. */
export const MAX_TIFF_FRAMES = 100_000

/**
 * A page OCR read as a picture without text: it ended unreadable because no legible text was
 * found (the engine's reasons for that start "no legible text": no words on a page with ink, or
 * words too unsure to be text), not for a limit or a decoding failure.
 */
export function pictureWithoutText(page: RecognizedPage): boolean {
  return page.outcome === 'unreadable' && (page.reason ?? '').startsWith('no legible text')
}

/** What OCR made of one image page, a picture without text named as such. */
function asPage(n: number, page: RecognizedPage): ExtractedPage {
  if (pictureWithoutText(page)) return { page: n, segments: [], outcome: 'image_no_text', reason: page.reason }
  return { page: n, ...page }
}

const overPixels = (pixels: number, max: number) => `the image has ${pixels} pixels, over the limit of ${max} (SVC_OCR_MAX_PIXELS)`

/** One page per frame: limits applied to each before it is decoded (`decode` runs only once the page is admitted). */
async function readFrames(frames: { width: number; height: number; decode: () => Uint8Array | Promise<Uint8Array> }[], options: ReadOptions): Promise<ExtractedPage[]> {
  const ocr = options.ocr
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
      pages.push({ page: n, segments: [], outcome: 'unreadable', reason: overPixels(pixels, ocr.maxPixels) })
      continue
    }
    const at = pages.push({ page: n, segments: [], outcome: 'unreadable', reason: 'the image could not be recognised' }) - 1
    await inFlight.add(async () => {
      pages[at] = asPage(n, await ocr.image(frame.decode))
      options.onPage?.(n, frames.length)
    })
  }
  await inFlight.drain()
  return pages
}

async function readTiff(bytes: Uint8Array, options: ReadOptions) {
  let walked: ReturnType<typeof tiffDirectories>
  try {
    walked = tiffDirectories(bytes, MAX_TIFF_FRAMES)
  } catch (e) {
    if (e instanceof InvalidTiff) throw new UnreadableDocument('the TIFF structure is invalid')
    throw e
  }
  const pages = await readFrames(walked.frames.map((f) => ({ width: f.width, height: f.height, decode: () => f.png() })), options)
  const notes = walked.truncated ? [`only the first ${MAX_TIFF_FRAMES} frames of the TIFF were looked at`] : []
  return { pages, degraded: walked.truncated, notes }
}

async function readHeif(bytes: Uint8Array, options: ReadOptions) {
  const ocr = options.ocr
  if (!ocr) return { pages: [{ page: 1, ...noEngine }], degraded: false, notes: [] }
  // The headers' sizes first: a file claiming too many pixels never reaches libheif.
  const declared = heifDeclaredPixels(bytes)
  if (declared !== undefined && declared > ocr.maxPixels) {
    return { pages: [{ page: 1, segments: [], outcome: 'unreadable' as const, reason: overPixels(declared, ocr.maxPixels) }], degraded: false, notes: [] }
  }
  let file: Awaited<ReturnType<typeof openHeif>>
  try {
    file = await openHeif(bytes)
  } catch {
    throw new UnreadableDocument('the HEIC image could not be decoded')
  }
  try {
    if (file.images.length === 0) throw new UnreadableDocument('the HEIC file holds no image')
    const pages = await readFrames(file.images.map((img) => ({ width: img.width, height: img.height, decode: () => img.png() })), options)
    return { pages, degraded: false, notes: [] }
  } finally {
    file.close()
  }
}

/** The image adapter. */
export const readImage: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  if (isTiff(bytes)) return readTiff(bytes, options)
  if (isHeif(bytes)) return readHeif(bytes, options)
  const page = options.ocr ? await options.ocr.image(bytes) : noEngine
  return { pages: [asPage(1, page)], degraded: false, notes: [] }
}
