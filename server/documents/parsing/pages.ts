/**
 * Per-page accounting: every page of a document ends with one outcome (text layer, OCR, blank,
 * unreadable), the document shows the counts, and its detail names the unreadable pages. This is
 * what keeps a document from losing content silently: a page that held something and gave no text
 * is counted as unreadable, and a document with content but no text is never `ready`.
 */
import type { ExtractedPage, Extraction, PageOutcome } from '../adapters/types'

/** The page counts a document shows (`pages` on the resource). */
export interface PageSummary {
  total: number
  text_layer: number
  ocr: number
  blank: number
  unreadable: number
  /** Pictures in which OCR found no legible text. */
  image_no_text: number
  /** OCR blocks whose confidence is under LOW_CONFIDENCE: kept, counted, shown. */
  low_confidence_blocks: number
  /** Text formats: the character encoding read and what chose it (the declared charset, a BOM, the detector (chardet), or the UTF-8 default). */
  text_encoding?: { charset: string; source: 'declared' | 'bom' | 'detected' | 'default' }
}

/** A summary as stored: those written before an outcome existed lack its count. */
export type StoredPageSummary = Omit<PageSummary, 'image_no_text'> & { image_no_text?: number }

/** An OCR block under this mean word confidence (0-100) is counted as low confidence. */
export const LOW_CONFIDENCE = 60

/** The outcome of a page: its own, or text_layer with segments and blank without. */
export function outcomeOf(page: ExtractedPage): PageOutcome {
  return page.outcome ?? (page.segments.length > 0 ? 'text_layer' : 'blank')
}

/** Counts the outcomes of an extraction's pages. */
export function summarisePages(extraction: Extraction): PageSummary {
  const summary: PageSummary = { total: extraction.pages.length, text_layer: 0, ocr: 0, blank: 0, unreadable: 0, image_no_text: 0, low_confidence_blocks: 0 }
  if (extraction.encoding) summary.text_encoding = { ...extraction.encoding }
  for (const page of extraction.pages) {
    summary[outcomeOf(page)]++
    for (const s of page.segments) if (s.source === 'ocr' && (s.confidence ?? 0) < LOW_CONFIDENCE) summary.low_confidence_blocks++
  }
  return summary
}

/** A stored summary with every outcome counted (summaries written before an outcome existed lack its count: 0). */
export function withAllOutcomes(summary: StoredPageSummary): PageSummary {
  return { ...summary, image_no_text: summary.image_no_text ?? 0 }
}

/**
 * Names the pages that are pictures without text ("image without text: page 1 holds a picture
 * with no legible text"), so the document's detail says plainly what it holds.
 */
export function imageDetail(extraction: Extraction): string | undefined {
  const pages = extraction.pages.filter((p) => outcomeOf(p) === 'image_no_text').map((p) => p.page)
  if (pages.length === 0) return undefined
  const which = pages.length === 1 ? `page ${pages[0]} holds` : pages.length <= 10 ? `pages ${pages.join(', ')} hold` : `${pages.length} pages hold`
  return `image without text: ${which} a picture with no legible text`
}

/** The longest list of unreadable pages a detail carries; the rest is summed up. */
const MAX_DETAIL_CHARS = 600

/**
 * Names the unreadable pages, consecutive pages with the same reason as one range
 * ("page 2 unreadable: ...; pages 5-9 unreadable: ..."), shortened past a few hundred characters.
 */
export function unreadableDetail(extraction: Extraction): string | undefined {
  const runs: { from: number; to: number; reason: string }[] = []
  for (const page of extraction.pages) {
    if (outcomeOf(page) !== 'unreadable') continue
    const reason = page.reason ?? 'the page could not be read'
    const last = runs.at(-1)
    if (last && last.to === page.page - 1 && last.reason === reason) last.to = page.page
    else runs.push({ from: page.page, to: page.page, reason })
  }
  if (runs.length === 0) return undefined
  let out = ''
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i]!
    const part = `${r.from === r.to ? `page ${r.from}` : `pages ${r.from}-${r.to}`} unreadable: ${r.reason}`
    if (out.length + part.length > MAX_DETAIL_CHARS) {
      const rest = runs.slice(i).reduce((n, x) => n + x.to - x.from + 1, 0)
      return `${out}; and ${rest} more unreadable page${rest === 1 ? '' : 's'}`
    }
    out = out ? `${out}; ${part}` : part
  }
  return out
}
