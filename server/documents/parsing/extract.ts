/**
 * One document's parse, as the parser process runs it: the type's adapter within the read limits,
 * then the cut into blocks, then the block and character limits. Pure: bytes in, outcome out; no
 * database, no blob store, no credentials (the parser process is given none).
 */
import { defaultLogger } from '../../observability/log'
import { ADAPTERS, UnreadableDocument, type Extraction, type Segment } from '../adapters'
import type { AdapterName } from '../registry'
import { toBlocks, withoutNul, type Block } from '../blocks'
import { imageDetail, summarisePages, unreadableDetail, type PageSummary } from './pages'
import type { OcrLimits } from '../ocr/engine'
import type { Attachment, OcrEngine, UnreadableCode } from '../adapters/types'
import type { StageTimes } from './stage-times'

/** The limits of one document's parse (SVC_PARSE_MAX_*, SVC_OCR_*). */
export interface DocumentLimits {
  maxPages: number
  /** What set maxPages when it is not SVC_PARSE_MAX_PAGES (a workspace's evaluation policy). */
  maxPagesSource?: string
  maxInflatedBytes: number
  maxBlocks: number
  maxChars: number
  /** The parse's wall-clock limit: OCR stops early enough to hand back what it read. */
  timeoutMs: number
  maxAttachments: number
  maxAttachmentBytes: number
  ocr: OcrLimits
}

/** What a parse found: blocks (maybe degraded, with content-free notes), or why nothing could be read; with the wall time of its stages when it ran in a parser process. */
export type ParseOutcome =
  | { kind: 'unreadable'; reason: string; pages?: PageSummary; code?: UnreadableCode; stages?: StageTimes }
  | { kind: 'parsed'; blocks: Block[]; pageCount: number; degraded: boolean; notes: string[]; pages: PageSummary; attachments?: Attachment[]; stages?: StageTimes }

/**
 * Keeps the leading segments of an extraction within the block and character limits (before the
 * cut into blocks, so a huge file never becomes a huge list of blocks); says what was left out.
 */
export function withinBlockLimits(extraction: Extraction, limits: Pick<DocumentLimits, 'maxBlocks' | 'maxChars'>): { extraction: Extraction; note?: string } {
  let chars = 0
  let kept = 0
  let total = 0
  let cut: 'blocks' | 'chars' | undefined
  const pages = extraction.pages.map((page) => {
    total += page.segments.length
    if (cut) return { page: page.page, segments: [] }
    const segments: Segment[] = []
    for (const segment of page.segments) {
      if (kept >= limits.maxBlocks) { cut = 'blocks'; break }
      if (chars + segment.text.length > limits.maxChars) { cut = 'chars'; break }
      chars += segment.text.length
      kept++
      segments.push(segment)
    }
    return { page: page.page, segments }
  })
  if (!cut) return { extraction }
  const which = cut === 'blocks' ? `block limit ${limits.maxBlocks}, SVC_PARSE_MAX_BLOCKS` : `character limit ${limits.maxChars}, SVC_PARSE_MAX_CHARS`
  return { extraction: { ...extraction, pages }, note: `only the first ${kept} of ${total} blocks were kept (${which})` }
}

/** Parses one document's bytes with the named adapter within `limits`. */
export async function extractDocument(documentId: string, type: { adapter: AdapterName; label: string; charset?: string }, bytes: Uint8Array, limits: DocumentLimits, ocr?: OcrEngine, onPage?: (page: number, pages: number) => void): Promise<ParseOutcome> {
  const { adapter, label, charset } = type
  try {
    const read = await ADAPTERS[adapter](bytes, { maxPages: limits.maxPages, ...(limits.maxPagesSource ? { maxPagesSource: limits.maxPagesSource } : {}), maxInflatedBytes: limits.maxInflatedBytes, maxBlocks: limits.maxBlocks, maxAttachments: limits.maxAttachments, maxAttachmentBytes: limits.maxAttachmentBytes, ocr, onPage, ...(charset ? { charset } : {}) })
    const limited = withinBlockLimits(read, limits)
    const { note } = limited
    const { extraction, replaced: nulReplaced } = withoutNul(limited.extraction)
    const pages = summarisePages(extraction)
    const unreadable = unreadableDetail(extraction)
    const images = imageDetail(extraction)
    const notes = [...(images ? [images] : []), ...(unreadable ? [unreadable] : []), ...extraction.notes, ...(note ? [note] : []), ...(nulReplaced ? ['NUL characters were replaced (U+FFFD)'] : [])]
    const blocks = toBlocks(documentId, extraction)
    // Content but no text is never `ready`: every page that was not blank was unreadable. A picture
    // without text is kept (`ready_degraded`, its detail saying so): it holds no text to have lost.
    if (blocks.length === 0 && pages.unreadable > 0) return { kind: 'unreadable', reason: notes.join('; '), pages }
    return {
      kind: 'parsed', blocks, pageCount: extraction.pages.length, degraded: extraction.degraded || pages.unreadable > 0 || pages.image_no_text > 0 || note !== undefined || nulReplaced, notes, pages,
      ...(read.attachments?.length ? { attachments: read.attachments } : {}),
    }
  } catch (e) {
    if (e instanceof UnreadableDocument) return { kind: 'unreadable', reason: e.reason, ...(e.code ? { code: e.code } : {}) }
    // A parser library that throws on odd input: the bytes will not read better on a retry.
    defaultLogger().warn('document adapter failed', { document_id: documentId, adapter, error: (e as Error)?.message })
    return { kind: 'unreadable', reason: `the ${label} could not be parsed` }
  }
}
