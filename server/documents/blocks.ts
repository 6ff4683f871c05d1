/**
 * Cutting an extraction into blocks: one block per segment, in reading order, each with a stable
 * id, its kind, its page and its character offsets in the document text.
 *
 * The document text is every block's text in order, joined by a blank line ("\n\n") within a page
 * and by one form feed ("\f") per page boundary crossed. Offsets count Unicode code points, end
 * exclusive, so `[...documentText].slice(char_start, char_end).join('') === block.text`.
 */
import type { BlockKind, Cell, Extraction, TextSource } from './adapters/types'

/** One block of a processed document. */
export interface Block {
  id: string
  /** 0-based position in reading order. */
  position: number
  page: number
  kind: BlockKind
  text: string
  charStart: number
  charEnd: number
  /** `ocr` when recognised from an image; `text` otherwise. */
  source: TextSource
  /** Mean OCR word confidence (0-100) of an OCR block; null for text. */
  confidence: number | null
  /** The cells of a table row, by column name; null for other blocks. */
  cells: Cell[] | null
  /** The sheet of a spreadsheet block; null otherwise. */
  sheet: string | null
}

/**
 * The id of the block at `position` of a document: a UUIDv5 in the document's namespace, so
 * re-reading the same bytes gives the same ids and two documents never share one.
 */
export function blockId(documentId: string, position: number): string {
  return Bun.randomUUIDv5(`block:${position}`, documentId)
}

/** Code points of a string, as `for...of` counts them: UTF-16 units less one per surrogate pair (a native search, not a walk). */
const SURROGATE_PAIR = /[\ud800-\udbff][\udc00-\udfff]/g
const codePoints = (s: string): number => s.length - (s.match(SURROGATE_PAIR)?.length ?? 0)

const NUL = /\u0000/g
const noNul = (s: string): string => (s.includes('\u0000') ? s.replace(NUL, '\ufffd') : s)

/**
 * The extraction with every NUL (U+0000) in a segment's text, cells and sheet name replaced by
 * U+FFFD, and whether any was: PostgreSQL's text and jsonb cannot hold NUL (a write of it fails, so
 * the document could never be stored), and one character for one keeps every offset.
 */
export function withoutNul(extraction: Extraction): { extraction: Extraction; replaced: boolean } {
  let replaced = false
  const pages = extraction.pages.map((page) => {
    if (!page.segments.some((g) => g.text.includes('\u0000') || g.sheet?.includes('\u0000') || g.cells?.some((c) => c.column.includes('\u0000') || c.value.includes('\u0000')))) return page
    replaced = true
    return {
      ...page,
      segments: page.segments.map((g) => ({
        ...g,
        text: noNul(g.text),
        ...(g.sheet !== undefined ? { sheet: noNul(g.sheet) } : {}),
        ...(g.cells ? { cells: g.cells.map((c) => ({ column: noNul(c.column), value: noNul(c.value) })) } : {}),
      })),
    }
  })
  return replaced ? { extraction: { ...extraction, pages }, replaced } : { extraction, replaced }
}

/** Cuts an extraction into blocks (see the file comment for ids and offsets). */
export function toBlocks(documentId: string, extraction: Extraction): Block[] {
  const blocks: Block[] = []
  let offset = 0
  let lastPage: number | null = null
  for (const page of extraction.pages) {
    for (const segment of page.segments) {
      if (lastPage !== null) offset += page.page === lastPage ? 2 : page.page - lastPage
      const length = codePoints(segment.text)
      blocks.push({
        id: blockId(documentId, blocks.length),
        position: blocks.length,
        page: page.page,
        kind: segment.kind,
        text: segment.text,
        charStart: offset,
        charEnd: offset + length,
        source: segment.source ?? 'text',
        confidence: segment.confidence ?? null,
        cells: segment.cells ?? null,
        sheet: segment.sheet ?? null,
      })
      offset += length
      lastPage = page.page
    }
  }
  return blocks
}

/** Rebuilds the document text that block offsets refer to (for tests and exports). */
export function documentText(blocks: readonly Pick<Block, 'page' | 'text'>[]): string {
  let out = ''
  let lastPage: number | null = null
  for (const b of blocks) {
    if (lastPage !== null) out += b.page === lastPage ? '\n\n' : '\f'.repeat(b.page - lastPage)
    out += b.text
    lastPage = b.page
  }
  return out
}
