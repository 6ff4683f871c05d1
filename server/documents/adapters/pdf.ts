/**
 * PDF, read with `unpdf` (Mozilla's pdf.js built for server runtimes, its CMaps and font data from
 * the package): the text of each page placed by position into lines and cells (pdf-layout.ts), its
 * tables as `table_row` blocks, the rest cut into `page_text` blocks at line boundaries, then the
 * values of its filled form fields. A page that cannot be read is left empty and makes the parse
 * degraded; a file pdf.js cannot open at all is unreadable, a password-protected one saying so.
 */
import { getDocumentProxy, getResolvedPDFJS } from 'unpdf'
import { DEFAULT_READ_LIMITS, tidy, UnreadableDocument, type Adapter, type ExtractedPage, type RecognizedPage, type Segment } from './types'
import { assertPdfStreamsWithin } from './pdf-bounds'
import { pageSegments } from './pdf-tables'
import { layoutPage, type PositionedItem } from './pdf-layout'
import { formLines, type WidgetAnnotation } from './pdf-forms'
import { packagedDataOptions, type PdfDataUse } from './pdf-data'

/** Why a PDF that needs a user password to be opened is not read. */
export const PASSWORD_REASON = 'the PDF is password-protected: remove the password and upload it again'
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

/**
 * Characters pdf.js gives for glyphs it could not map to Unicode: the replacement character,
 * private-use code points, and control characters (a font's raw codes).
 */
const UNMAPPED = /[\ufffd\ue000-\uf8ff\u0000-\u0008\u000b\u000c\u000e-\u001f]/
const UNMAPPED_ALL = new RegExp(UNMAPPED.source, 'g')

/** "page 3", "pages 2, 5-7" (at most 20 ranges, then "and more"). */
export function pageList(pages: readonly number[]): string {
  const ranges: string[] = []
  for (let i = 0; i < pages.length; ) {
    let j = i
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++
    ranges.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`)
    i = j + 1
  }
  const shown = ranges.length > 20 ? [...ranges.slice(0, 20), 'and more'] : ranges
  return `${pages.length === 1 ? 'page' : 'pages'} ${shown.join(', ')}`
}

/** Fewer non-space characters than this in a page's text layer: the page is read as an image, if it has one. */
const NEAR_EMPTY_CHARS = 10

/** Whether a page paints an image (pdf.js operator ids of image painting). */
async function paintsImage(page: { getOperatorList(): Promise<{ fnArray: number[] }> }): Promise<boolean> {
  const { OPS } = await getResolvedPDFJS()
  const imageOps = new Set<number>([OPS.paintImageXObject, OPS.paintInlineImageXObject, OPS.paintImageMaskXObject, OPS.paintImageXObjectRepeat, OPS.paintInlineImageXObjectGroup].filter((x) => x !== undefined))
  const { fnArray } = await page.getOperatorList()
  return fnArray.some((op) => imageOps.has(op))
}

/** Words of a text, lower-cased, for comparing what OCR read with the text layer. */
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/**
 * A page with a short text layer over an image, after OCR: the text layer is always kept; OCR
 * paragraphs are added when they hold a word the text layer lacks (OCR reads the text layer's words
 * too). The page is `ocr` when OCR added something, else `text_layer`; with a text layer it is never
 * `blank`, and an OCR failure keeps the text layer and names its reason (`unreadable`, degraded).
 */
export function withTextLayer(text: Segment[], recognized: RecognizedPage): Omit<ExtractedPage, 'page'> {
  if (text.length === 0) return recognized
  const known = new Set(text.flatMap((s) => wordsOf(s.text)))
  const added = recognized.segments.filter((s) => wordsOf(s.text).some((w) => !known.has(w)))
  if (recognized.outcome === 'unreadable') return { segments: text, outcome: 'unreadable', reason: recognized.reason }
  return added.length > 0 ? { segments: [...text, ...added], outcome: 'ocr' } : { segments: text, outcome: 'text_layer' }
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
  const data: PdfDataUse = { missingCMaps: 0 }
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, stopAtErrors: false, ...packagedDataOptions(data) } as Parameters<typeof getDocumentProxy>[1])
  } catch (e) {
    // pdf.js opens a file with an owner password only (the empty user password) as any other.
    if ((e as { name?: string })?.name === 'PasswordException') throw new UnreadableDocument(PASSWORD_REASON, 'password_protected')
    throw new UnreadableDocument('the PDF structure is invalid')
  }
  try {
    const pages: ExtractedPage[] = []
    const unmappedPages: number[] = []
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
        const missingBefore = data.missingCMaps
        const content = await page.getTextContent()
        const items = content.items as PositionedItem[]
        let unmapped = 0
        for (const item of items) {
          if (!item.str || !UNMAPPED.test(item.str)) continue
          unmapped += item.str.match(UNMAPPED_ALL)!.length
          item.str = item.str.replace(UNMAPPED_ALL, '')
        }
        if (unmapped > 0 || data.missingCMaps > missingBefore) unmappedPages.push(n)
        const layout = layoutPage(items, page.view[2]! - page.view[0]!)
        const fields = formLines(await page.getAnnotations({ intent: 'display' }) as WidgetAnnotation[], layout.lines)
        const segments = [...pageSegments(layout.lines, pageBlocks), ...pageBlocks(layout.rotated.join('\n')), ...pageBlocks(fields.join('\n'))]
        const chars = segments.reduce((n, s) => n + s.text.replace(/\s/g, '').length, 0)
        if (chars >= NEAR_EMPTY_CHARS || !(await paintsImage(page))) {
          // Glyphs without a mapping and nothing else: the page held text that cannot be read.
          if (segments.length === 0 && unmapped > 0) pages.push({ page: n, segments, outcome: 'unreadable', reason: 'characters without a Unicode mapping' })
          else pages.push({ page: n, segments })
        } else if (!options.ocr) {
          pages.push({ page: n, segments, outcome: 'unreadable', reason: 'image-only page and no OCR engine' })
        } else {
          const ocr = options.ocr
          const at = pages.push({ page: n, segments, outcome: 'unreadable', reason: 'the page could not be read' }) - 1
          await ocrPages.add(async () => { pages[at] = { page: n, ...withTextLayer(segments, await ocr.pdfPage(pdf, n)) } })
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
    // Text whose characters pdf.js could not map to Unicode is left out: the document says where.
    const notes = unmappedPages.length > 0 ? [`${pageList(unmappedPages)}: characters without a Unicode mapping were left out`] : []
    return { pages, degraded: notes.length > 0, notes }
  } finally {
    await pdf.loadingTask.destroy().catch(() => {})
  }
}
