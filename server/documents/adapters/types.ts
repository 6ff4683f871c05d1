/**
 * What an ingestion adapter produces: the text of a document as pages of typed segments, in
 * reading order, before it is cut into blocks. An adapter never keeps content anywhere else.
 */

/** The kinds of block a document is cut into. */
export const BLOCK_KINDS = ['paragraph', 'heading', 'table_row', 'page_text'] as const
export type BlockKind = (typeof BLOCK_KINDS)[number]

/** Where a segment's text came from: the file's own text, or optical character recognition. */
export type TextSource = 'text' | 'ocr'

/** A table cell: its column's name (the header row's) and its value as text. */
export interface Cell { column: string; value: string }

/**
 * One run of text of one kind; OCR text carries its source and mean word confidence (0-100); a
 * table row its cells; a spreadsheet row its sheet's name.
 */
export interface Segment { kind: BlockKind; text: string; source?: TextSource; confidence?: number; cells?: Cell[]; sheet?: string }

/**
 * How one page ended: read from its text layer, read by OCR, genuinely empty, unreadable (with
 * the reason), or a picture in which OCR found no legible text (`image_no_text`: kept, never read
 * text, never a failure). Every page of a document ends with exactly one.
 */
export const PAGE_OUTCOMES = ['text_layer', 'ocr', 'blank', 'unreadable', 'image_no_text'] as const
export type PageOutcome = (typeof PAGE_OUTCOMES)[number]

/**
 * The segments of one page (1-based); formats without pages put everything on page 1. `outcome`
 * defaults to `text_layer` when the page has segments and `blank` when it has none; `reason` is
 * short and content-free, set for `unreadable`.
 */
export interface ExtractedPage { page: number; segments: Segment[]; outcome?: PageOutcome; reason?: string }

/** A file inside a file (an email's attachment): it becomes a document of the same case. */
export interface Attachment { filename: string; contentType: string; bytes: Uint8Array }

/** The result of reading one file. */
export interface Extraction {
  /** Files it carries, to be ingested as documents of their own (emails' attachments). */
  attachments?: Attachment[]
  /** Every page of the file, blank ones included, in order. */
  pages: ExtractedPage[]
  /** True when part of the file could not be read (the rest was). */
  degraded: boolean
  /** Why the parse is degraded: short, content-free notes (never document text). */
  notes: string[]
  /** For text formats: the character encoding read, and whether the declaration, a BOM, the detector or the default chose it. */
  encoding?: { charset: string; source: 'declared' | 'bom' | 'detected' | 'default' }
}

/** The bounds an adapter reads a file within (the rest of the limits apply to its blocks, later). */
export interface ReadLimits {
  /** Pages read; later pages are left out and the extraction degraded. */
  maxPages: number
  /** What set maxPages, as a page's reason names it (default: the variable SVC_PARSE_MAX_PAGES). */
  maxPagesSource?: string
  /** Most bytes one compressed part (zip entry, PDF stream) may inflate to, and a package's parts in sum. */
  maxInflatedBytes: number
  /** Blocks kept; an adapter may stop reading once it has this many (a sheet of a million rows). */
  maxBlocks?: number
  /** Attachments kept of one email, and their bytes in sum (SVC_EMAIL_MAX_ATTACHMENTS, SVC_EMAIL_MAX_ATTACHMENT_MB). */
  maxAttachments?: number
  maxAttachmentBytes?: number
}

/** The defaults of SVC_PARSE_MAX_PAGES and SVC_PARSE_MAX_INFLATED_MB. */
export const DEFAULT_READ_LIMITS: ReadLimits = { maxPages: 2000, maxInflatedBytes: 128 * 1_048_576 }

/** What OCR made of one page: its segments (source `ocr`), or why it is blank or unreadable. */
export interface RecognizedPage { segments: Segment[]; outcome: 'ocr' | 'blank' | 'unreadable'; reason?: string }

/** A PDF document as pdf.js opened it (only what OCR needs to render a page). */
export interface RenderablePdf { getPage(n: number): Promise<unknown> }

/** The OCR engine an adapter may use for pages without text (see server/documents/ocr). */
export interface OcrEngine {
  /** The largest image (width x height) it recognises; callers refuse larger ones before decoding. */
  readonly maxPixels: number
  /** Pages of one document an adapter may have in recognition at once (see ocr/in-flight.ts); 1 when absent. */
  readonly parallel?: number
  /**
   * Recognises one encoded image (PNG, JPEG, WebP, ...), within the pixel and time limits; a
   * function is called only once the page is admitted (so refused pages are never decoded).
   */
  image(bytes: Uint8Array | (() => Uint8Array | Promise<Uint8Array>)): Promise<RecognizedPage>
  /** Renders one page of an open PDF and recognises it. */
  pdfPage(pdf: RenderablePdf, pageNumber: number): Promise<RecognizedPage>
}

/** The limits an adapter reads within, the OCR engine when the process has one, and a page-progress hook. */
export interface ReadOptions extends ReadLimits {
  ocr?: OcrEngine
  /** The `charset` parameter of the document's declared content type (text formats decode with it). */
  charset?: string
  /** Called as pages are done (`page` of `pages`), for progress on long documents. */
  onPage?: (page: number, pages: number) => void
}

/**
 * Reads the bytes of one file into an Extraction within `options`; throws UnreadableDocument when
 * nothing can be read (a breached inflation limit included).
 */
export type Adapter = (bytes: Uint8Array, options?: ReadOptions) => Promise<Extraction>

/**
 * How a check box or radio button of a form is written in text, whatever the format it came from:
 * its state as the form shows it. The answers read a row of them (evaluation/values.ts).
 */
export const CHECK_GLYPHS = { checked: '\u2612', unchecked: '\u2610', chosen: '\u25c9', unchosen: '\u25cb' } as const

/**
 * Page headers and footers (`margins`) with each text kept once: every section, the first page and
 * the others, repeat their own.
 */
export function eachTextOnce(margins: readonly Segment[]): Segment[] {
  const seen = new Set<string>()
  return margins.filter((m) => !seen.has(m.text) && seen.add(m.text))
}

/** A size in MiB for messages ("128 MiB"). */
export const mib = (bytes: number): string => `${Math.round(bytes / 1_048_576)} MiB`

/** Why a file cannot be read, as a machine-readable code, where it is other than damage or a limit. */
export type UnreadableCode = 'password_protected'

/**
 * The file cannot be parsed at all. `reason` is short and content-free: it goes into notifications;
 * `code` tells a client apart a file it can fix itself (a password to remove).
 */
export class UnreadableDocument extends Error {
  constructor(readonly reason: string, readonly code?: UnreadableCode) { super(reason) }
}

/** Tidies extracted text: unified newlines, no trailing spaces, no runs of blank lines, trimmed. */
export function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\u00a0]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

/** Splits text into paragraphs at blank lines, dropping empty ones. */
export function paragraphs(text: string): Segment[] {
  return tidy(text).split(/\n[ \t]*\n/).map((p) => tidy(p)).filter((p) => p !== '').map((text) => ({ kind: 'paragraph' as const, text }))
}

/**
 * Decodes UTF-8 (a byte-order mark dropped). Invalid sequences become U+FFFD and mark the result
 * lossy, so an adapter can report a degraded parse instead of failing.
 */
export function decodeUtf8(bytes: Uint8Array): { text: string; lossy: boolean } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes), lossy: false }
  } catch {
    return { text: new TextDecoder('utf-8', { fatal: false, ignoreBOM: false }).decode(bytes), lossy: true }
  }
}

/**
 * Refuses text that holds nothing readable: everything replaced, control characters, or Unicode
 * noncharacters (U+FFFE, U+FFFF, U+FDD0-U+FDEF: what bytes decode to that are not text in the
 * encoding chosen, e.g. FF FF after a UTF-16 byte-order mark).
 */
export function requireReadable(text: string, what: string): void {
  const readable = text.replace(/[\ufffd\ufffe\uffff\ufdd0-\ufdef\s\u0000-\u001f\u007f]/g, '')
  if (readable.length === 0 && text.length > 0) throw new UnreadableDocument(`the ${what} holds no readable text`)
}
