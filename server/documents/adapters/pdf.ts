/**
 * PDF, read with `unpdf` (Mozilla's pdf.js built for server runtimes): the text of each page, in
 * page order, cut into `page_text` blocks at line boundaries. A page that cannot be read is left
 * empty and makes the parse degraded; a file pdf.js cannot open at all is unreadable.
 */
import { getDocumentProxy, getResolvedPDFJS } from 'unpdf'
import { DEFAULT_READ_LIMITS, tidy, UnreadableDocument, type Adapter, type ExtractedPage, type Segment } from './types'
import { assertPdfStreamsWithin } from './pdf-bounds'
import { pageWithTables, type PositionedItem } from './pdf-tables'
import { pagesInFlight } from '../ocr/in-flight'

/** The longest page_text block; longer page text is cut at line ends. */
export const MAX_PAGE_BLOCK_CHARS = 2000

/** Cuts one page's text into blocks of at most MAX_PAGE_BLOCK_CHARS, at line ends where possible. */
export function pageBlocks(text: string): Segment[] {
  const clean = tidy(text)
  if (clean === '') return []
  const out: Segment[] = []
  let current = ''
  const flush = () => { if (current.trim() !== '') out.push({ kind: 'page_text', text: tidy(current) }); current = '' }
  for (const line of clean.split('\n')) {
    let rest = line
    while (rest.length > MAX_PAGE_BLOCK_CHARS) { // one very long line: hard cuts
      flush()
      current = rest.slice(0, MAX_PAGE_BLOCK_CHARS)
      flush()
      rest = rest.slice(MAX_PAGE_BLOCK_CHARS)
    }
    if (current.length + rest.length + 1 > MAX_PAGE_BLOCK_CHARS) flush()
    current = current === '' ? rest : `${current}\n${rest}`
  }
  flush()
  return out
}

interface TextItem { str?: string; hasEOL?: boolean }

/** Fewer non-space characters than this in a page's text layer: the page is read as an image, if it has one. */
const NEAR_EMPTY_CHARS = 10

/** Whether a page paints an image (pdf.js operator ids of image painting). */
async function paintsImage(page: { getOperatorList(): Promise<{ fnArray: number[] }> }): Promise<boolean> {
  const { OPS } = await getResolvedPDFJS()
  const imageOps = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageMaskXObject, OPS.paintImageXObjectRepeat, OPS.paintInlineImageXObjectGroup].filter((x) => x !== undefined))
  const { fnArray } = await page.getOperatorList()
  return fnArray.some((op) => imageOps.has(op))
}

/**
 * The PDF adapter. Streams that would inflate past the limit refuse the file. Each page ends as
 * `text_layer`, `ocr` (an image-only or near-empty page recognised by the OCR engine), `blank`, or
 * `unreadable` with its reason; pages past `maxPages` are unreadable for that reason.
 */
export const readPdf: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  assertPdfStreamsWithin(bytes, options.maxInflatedBytes)
  // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, stopAtErrors: false })
  } catch {
    throw new UnreadableDocument('the PDF structure is invalid')
  }
  try {
    const pages: ExtractedPage[] = []
    // OCR pages are read in parallel (up to the engine's `parallel`), each filling its own place.
    const ocrPages = pagesInFlight(options.ocr?.parallel ?? 1)
    const readable = Math.min(pdf.numPages, options.maxPages)
    for (let n = 1; n <= readable; n++) {
      // pdf.js chains promises: let timers and channel events of the parser process run now and then.
      if (n % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0))
      let page: Awaited<ReturnType<typeof pdf.getPage>>
      try {
        page = await pdf.getPage(n)
      } catch {
        pages.push({ page: n, segments: [], outcome: 'unreadable', reason: 'the page could not be read' })
        continue
      }
      try {
        const content = await page.getTextContent()
        const text = (content.items as TextItem[]).map((i) => (i.str ?? '') + (i.hasEOL ? '\n' : '')).join('')
        const segments = pageWithTables(content.items as PositionedItem[], pageBlocks) ?? pageBlocks(text)
        if (text.replace(/\s/g, '').length >= NEAR_EMPTY_CHARS || !(await paintsImage(page))) {
          pages.push({ page: n, segments })
        } else if (!options.ocr) {
          pages.push({ page: n, segments, outcome: 'unreadable', reason: 'image-only page and no OCR engine' })
        } else {
          const ocr = options.ocr
          const at = pages.push({ page: n, segments: [], outcome: 'unreadable', reason: 'the page could not be read' }) - 1
          await ocrPages.add(async () => { pages[at] = { page: n, ...(await ocr.pdfPage(pdf, n)) } })
        }
      } catch {
        pages.push({ page: n, segments: [], outcome: 'unreadable', reason: 'the page could not be read' })
      } finally {
        page.cleanup()
        options.onPage?.(n, pdf.numPages)
      }
    }
    await ocrPages.drain()
    if (pages.length > 0 && pages.every((p) => p.outcome === 'unreadable' && p.reason === 'the page could not be read')) throw new UnreadableDocument('no page of the PDF could be read')
    for (let n = readable + 1; n <= pdf.numPages; n++) {
      pages.push({ page: n, segments: [], outcome: 'unreadable', reason: `beyond the page limit ${options.maxPages} (${options.maxPagesSource ?? 'SVC_PARSE_MAX_PAGES'})` })
    }
    return { pages, degraded: false, notes: [] }
  } finally {
    await pdf.loadingTask.destroy().catch(() => {})
  }
}
