/**
 * PDF, read with `unpdf` (Mozilla's pdf.js built for server runtimes): the text of each page, in
 * page order, cut into `page_text` blocks at line boundaries. A page that cannot be read is left
 * empty and makes the parse degraded; a file pdf.js cannot open at all is unreadable.
 */
import { getDocumentProxy } from 'unpdf'
import { DEFAULT_READ_LIMITS, tidy, UnreadableDocument, type Adapter, type ExtractedPage, type Segment } from './types'
import { assertPdfStreamsWithin } from './pdf-bounds'

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

/**
 * The PDF adapter. Streams that would inflate past the limit refuse the file; pages past
 * `maxPages` are left out and the parse is degraded, with a note saying so.
 */
export const readPdf: Adapter = async (bytes, limits = DEFAULT_READ_LIMITS) => {
  assertPdfStreamsWithin(bytes, limits.maxInflatedBytes)
  // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, stopAtErrors: false })
  } catch {
    throw new UnreadableDocument('the PDF structure is invalid')
  }
  try {
    const pages: ExtractedPage[] = []
    let broken = 0
    const readable = Math.min(pdf.numPages, limits.maxPages)
    for (let n = 1; n <= readable; n++) {
      // pdf.js chains promises: let timers and channel events of the parser process run now and then.
      if (n % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 0))
      try {
        const page = await pdf.getPage(n)
        const content = await page.getTextContent()
        const text = (content.items as TextItem[]).map((i) => (i.str ?? '') + (i.hasEOL ? '\n' : '')).join('')
        pages.push({ page: n, segments: pageBlocks(text) })
        page.cleanup()
      } catch {
        broken++
        pages.push({ page: n, segments: [] })
      }
    }
    if (broken === readable && broken > 0) throw new UnreadableDocument('no page of the PDF could be read')
    const notes: string[] = []
    if (broken > 0) notes.push(`${broken} of ${pdf.numPages} pages could not be read`)
    if (readable < pdf.numPages) notes.push(`the PDF has ${pdf.numPages} pages; pages ${readable + 1}-${pdf.numPages} were not read (page limit ${limits.maxPages}, SVC_PARSE_MAX_PAGES)`)
    return { pages, degraded: notes.length > 0, notes }
  } finally {
    await pdf.loadingTask.destroy().catch(() => {})
  }
}
