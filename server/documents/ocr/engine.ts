/**
 * The OCR engine of a parser process: the native `tesseract` command when installed, else
 * Tesseract as WebAssembly (tesseract.js) with the English model from the npm registry
 * (`@tesseract.js-data/eng`), so nothing is downloaded at run time.
 *
 * A page is looked at once before it is read (analyse.ts: which way up its text is, how tall its
 * lines are), turned upright and scaled to the text height OCR needs, then recognised once. Only
 * when the orientation was unsure and the reading is poor is it read once more, turned half way,
 * and the better reading kept. A page's time limit ends the work on that page, not its result: the
 * reading obtained is kept. Every other limit turns into an unreadable page with its reason: pixels
 * per page, pages per document, and the document's time bound.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
// The English model (LSTM, integer) from the npm registry, as a file `bun build --compile` embeds.
import englishModel from '../../../node_modules/@tesseract.js-data/eng/4.0.0_best_int/eng.traineddata.gz' with { type: 'file' }
import { createWorker, OEM, PSM, type Worker } from 'tesseract.js'
import { imageSize } from 'image-size'
import type { OcrEngine, RecognizedPage, RenderablePdf, Segment } from '../adapters/types'
import { renderPdfPage } from './render'
import { nativeTesseract, recognizeNative, type TesseractParagraph } from './native'
import { analysePage, preparePage, type PageAnalysis } from './analyse'

/** The limits OCR works within (SVC_OCR_*). */
export interface OcrLimits {
  /** Largest image (width x height) recognised or rendered (SVC_OCR_MAX_PIXELS). */
  maxPixels: number
  /** One page's time limit (SVC_OCR_PAGE_TIMEOUT_MS): no further pass starts after it; a reading obtained is kept. */
  pageTimeoutMs: number
  /** Pages recognised per document; later ones are unreadable (SVC_OCR_MAX_PAGES). */
  maxPages: number
  /** `native`: the `tesseract` command; `wasm`: tesseract.js; `auto`: native when installed (SVC_OCR_ENGINE). */
  engine: 'auto' | 'native' | 'wasm'
  /** Pages of one document prepared and recognised at once (the service's OCR slots, SVC_OCR_CONCURRENCY). */
  parallel?: number
  /** Set when OCR is off for the document (a workspace's evaluation policy): every page it would read is unreadable for this reason. */
  disabledReason?: string
}

/** A page whose words average under this confidence is noise, not text: unreadable. */
export const MIN_PAGE_CONFIDENCE = 30

/** A reading under this mean confidence of a page whose orientation was unsure is read once more, turned half way. */
const SECOND_READING_UNDER = 70

/** Resolution pages are rendered at for recognition (less when the page is too large for the pixel limit). */
const RENDER_DPI = 200

/** A page with no words but more dark pixels than this share is not blank: it held something illegible. */
const BLANK_INK_SHARE = 0.02

const compiled = import.meta.url.includes('$bunfs')

/**
 * A directory holding `eng.traineddata.gz` (Tesseract reads `{langPath}/{lang}.traineddata.gz`):
 * the package's own from source; from the compiled binary, the embedded model copied once into
 * the temporary directory (atomically, so parser processes starting together agree).
 */
function modelDirectory(): string {
  if (!compiled) return dirname(englishModel)
  const size = statSync(englishModel).size
  const dir = join(process.env.SVC_SHARED_TMPDIR || tmpdir(), `svc-ocr-eng-${size}`)
  const target = join(dir, 'eng.traineddata.gz')
  if (!existsSync(target)) {
    mkdirSync(dir, { recursive: true })
    const partial = `${target}.${process.pid}`
    writeFileSync(partial, readFileSync(englishModel))
    renameSync(partial, target)
  }
  return dir
}

/**
 * The OCR thread's script. The compiled binary embeds it as its own entry point (scripts/build.ts);
 * embedded entries are named from the entry points' common folder (`server/`), as `.js`.
 */
const threadScript = compiled ? '/$bunfs/root/documents/ocr/tesseract-thread.js' : fileURLToPath(new URL('./tesseract-thread.ts', import.meta.url))

/** A page with no text lines and under this share of dark pixels is blank, not worth a recognition. */
const NO_INK_SHARE = 0.0005

/** What a document's OCR did, for the parse's record (tests count recognitions with it). */
export interface OcrStats {
  /** Pages given to the recogniser. */
  pages: number
  /** Full recognitions run (at most two a page). */
  recognitions: number
  /** Pages whose time limit was reached; their reading was kept. */
  pageLimitReached: number
}

/** One document's OCR: counts its pages; `expire` stops it (its time bound is reached). */
export type DocumentOcr = OcrEngine & { expire(): void; readonly stats: OcrStats }

class DocumentExpired extends Error {}

/** The process's recogniser, shared by its documents and their pages. */
export class OcrRecognizer {
  /** WebAssembly workers not in use (one per page being recognised at once, created on demand). */
  #idle: Promise<Worker>[] = []
  /** The native command when this recogniser uses it. */
  readonly native: string | null

  /**
   * `slot` waits for one of the service's OCR slots (SVC_OCR_CONCURRENCY, shared fairly by the
   * documents of the parser processes) and resolves with its release; the default admits at once.
   */
  constructor(private readonly limits: OcrLimits, private readonly slot: () => Promise<() => void> = async () => () => {}) {
    this.native = limits.engine === 'wasm' ? null : nativeTesseract()
    if (limits.engine === 'native' && !this.native) throw new Error('SVC_OCR_ENGINE=native but no tesseract command with the English model is on PATH')
  }

  #worker(): Promise<Worker> {
    return this.#idle.pop() ?? createWorker('eng', OEM.LSTM_ONLY, {
      langPath: modelDirectory(),
      workerPath: threadScript,
      cacheMethod: 'none',
      gzip: true,
      logger: () => {},
      errorHandler: () => {},
    }).then(async (w) => {
      await w.setParameters({ tessedit_pageseg_mode: PSM.AUTO, user_defined_dpi: '300' })
      return w
    })
  }

  /** Keeps one idle WebAssembly worker (the next page reuses it) and ends the others. */
  async trim(): Promise<void> {
    for (const w of this.#idle.splice(1)) await w.then((x) => x.terminate()).catch(() => {})
  }

  /** One recognition of a prepared image; aborting stops it (a WebAssembly worker is then ended, not reused). */
  async #recognise(image: Uint8Array, signal: AbortSignal): Promise<Reading> {
    if (signal.aborted) throw new DocumentExpired()
    if (this.native) return reading(await recognizeNative(this.native, image, signal))
    const worker = this.#worker()
    let ended = false
    const end = () => { ended = true; worker.then((w) => w.terminate()).catch(() => {}) }
    signal.addEventListener('abort', end, { once: true })
    try {
      const w = await worker
      if (signal.aborted) throw new DocumentExpired()
      const job = w.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength), {}, { blocks: true, text: false })
      job.catch(() => {}) // an aborted job's worker is ended: its rejection is expected
      const result = await Promise.race([
        job,
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new DocumentExpired()), { once: true })),
      ])
      return reading(result.data.blocks ?? [])
    } catch (e) {
      if (!ended) end()
      throw e
    } finally {
      signal.removeEventListener('abort', end)
      if (!ended) this.#idle.push(worker)
    }
  }

  /**
   * Recognises one encoded image within the pixel limit: looked at, turned and scaled, recognised
   * once (twice at most). `documentSignal` aborts when the document's time bound is reached.
   */
  async recognize(bytes: Uint8Array, documentSignal: AbortSignal = new AbortController().signal, stats: OcrStats = { pages: 0, recognitions: 0, pageLimitReached: 0 }): Promise<RecognizedPage> {
    let size: { width?: number; height?: number }
    try {
      size = imageSize(bytes)
    } catch {
      return { segments: [], outcome: 'unreadable', reason: 'the image could not be decoded' }
    }
    const pixels = (size.width ?? 0) * (size.height ?? 0)
    if (pixels === 0) return { segments: [], outcome: 'unreadable', reason: 'the image could not be decoded' }
    if (pixels > this.limits.maxPixels) {
      return { segments: [], outcome: 'unreadable', reason: `the image has ${pixels} pixels, over the limit of ${this.limits.maxPixels} (SVC_OCR_MAX_PIXELS)` }
    }
    const release = await this.slot()
    stats.pages++
    const started = performance.now()
    try {
      const analysis = await analysePage(bytes)
      if (!analysis) return { segments: [], outcome: 'unreadable', reason: 'the image could not be decoded' }
      let best: Reading
      // A page showing text lines is read to the end once, however long that takes (only the
      // document's bound stops it): its reading is kept even past the page's limit. A page where
      // the analysis found no lines and much ink (a picture, noise) gets its page limit and no
      // more; one with no lines and no ink at all is blank without being recognised.
      if (analysis.lineHeight === undefined && analysis.ink < NO_INK_SHARE) return { segments: [], outcome: 'blank' }
      const pageLimit = analysis.lineHeight === undefined && analysis.ink > BLANK_INK_SHARE ? AbortSignal.timeout(this.limits.pageTimeoutMs) : undefined
      try {
        stats.recognitions++
        best = await this.#recognise(preparePage(analysis, analysis.turns, bytes), pageLimit ? AbortSignal.any([documentSignal, pageLimit]) : documentSignal)
      } catch (e) {
        if (documentSignal.aborted) return { segments: [], outcome: 'unreadable', reason: DOCUMENT_BOUND_REASON }
        if (pageLimit?.aborted) {
          stats.pageLimitReached++
          return { segments: [], outcome: 'unreadable', reason: `no text lines found, and OCR took longer than the ${Math.round(this.limits.pageTimeoutMs / 1000)} s page limit (SVC_OCR_PAGE_TIMEOUT_MS)` }
        }
        return { segments: [], outcome: 'unreadable', reason: 'the image could not be recognised' }
      }
      const left = this.limits.pageTimeoutMs - (performance.now() - started)
      if (left <= 0) stats.pageLimitReached++
      else if (!analysis.sure && best.meanConfidence < SECOND_READING_UNDER) best = await this.#secondReading(analysis, bytes, best, left, documentSignal, stats)
      if (best.words === 0 && analysis.ink > BLANK_INK_SHARE) return { segments: [], outcome: 'unreadable', reason: 'no legible text found on a page that is not blank' }
      return best.page
    } finally {
      release()
    }
  }

  /** The page read turned half way, within what is left of its time limit; the better of the two readings. */
  async #secondReading(analysis: PageAnalysis, bytes: Uint8Array, first: Reading, leftMs: number, documentSignal: AbortSignal, stats: OcrStats): Promise<Reading> {
    const limit = new AbortController()
    const timer = setTimeout(() => limit.abort(), leftMs)
    try {
      stats.recognitions++
      const other = await this.#recognise(preparePage(analysis, analysis.alternative, bytes), AbortSignal.any([limit.signal, documentSignal]))
      return score(other) > score(first) ? other : first
    } catch {
      if (limit.signal.aborted) stats.pageLimitReached++
      return first
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * The engine of one document: pages beyond its OCR page limit, all of them when OCR is off for
   * it, or asked for once its time bound is reached (`expire`), are unreadable for that reason.
   */
  forDocument(documentLimits: Pick<OcrLimits, 'maxPages' | 'disabledReason'> = this.limits): DocumentOcr {
    // The document's own page limit and OCR switch (a workspace's evaluation policy narrows them);
    // the recogniser outlives the document, so they are never taken from it.
    const limits = { ...this.limits, maxPages: documentLimits.maxPages, disabledReason: documentLimits.disabledReason }
    const expired = new AbortController()
    const stats: OcrStats = { pages: 0, recognitions: 0, pageLimitReached: 0 }
    let pagesDone = 0
    const gate = (): RecognizedPage | undefined => {
      if (limits.disabledReason) return { segments: [], outcome: 'unreadable', reason: limits.disabledReason }
      if (pagesDone >= limits.maxPages) return { segments: [], outcome: 'unreadable', reason: `not recognised: beyond the OCR page limit ${limits.maxPages} (SVC_OCR_MAX_PAGES)` }
      if (expired.signal.aborted) return { segments: [], outcome: 'unreadable', reason: DOCUMENT_BOUND_REASON }
      pagesDone++
      return undefined
    }
    return {
      maxPixels: limits.maxPixels,
      parallel: Math.max(1, limits.parallel ?? 1),
      stats,
      expire: () => expired.abort(),
      image: async (bytes) => {
        const refused = gate()
        if (refused) return refused
        let image: Uint8Array
        try {
          image = typeof bytes === 'function' ? await bytes() : bytes
        } catch {
          return { segments: [], outcome: 'unreadable', reason: 'the image could not be decoded' }
        }
        return this.recognize(image, expired.signal, stats)
      },
      pdfPage: async (pdf: RenderablePdf, pageNumber: number) => {
        const refused = gate()
        if (refused) return refused
        const png = await renderPdfPage(pdf, pageNumber, { dpi: RENDER_DPI, maxPixels: limits.maxPixels })
        if (!png) return { segments: [], outcome: 'unreadable', reason: 'the page could not be rendered' }
        return this.recognize(png, expired.signal, stats)
      },
    }
  }
}

/** The reason of a page not read because its document's time bound was reached. */
const DOCUMENT_BOUND_REASON = "not recognised: the document's time limit was reached (SVC_PARSE_TIMEOUT_MS, plus SVC_OCR_PAGE_TIMEOUT_MS for each page recognised)"

/** How good a reading is: confident words count, more words count (sublinearly). */
const score = (r: Reading) => r.meanConfidence * Math.sqrt(r.words)

export type { TesseractParagraph } from './native'

/** One reading of an image: the page it gives, and its word count and mean word confidence. */
interface Reading { page: RecognizedPage; words: number; meanConfidence: number }

function reading(blocks: { paragraphs: TesseractParagraph[] }[]): Reading {
  let words = 0
  let sum = 0
  for (const b of blocks) for (const p of b.paragraphs) for (const l of p.lines) for (const w of l.words) if (w.text.trim() !== '') { words++; sum += w.confidence }
  return { page: toRecognizedPage(blocks), words, meanConfidence: words === 0 ? 0 : sum / words }
}

/** Paragraphs of recognised text as OCR segments; no words is a blank page, noise an unreadable one. */
export function toRecognizedPage(blocks: { paragraphs: TesseractParagraph[] }[]): RecognizedPage {
  const segments: Segment[] = []
  let words = 0
  let confidenceSum = 0
  for (const block of blocks) {
    for (const p of block.paragraphs) {
      const text = p.lines.map((l) => l.words.map((w) => w.text).join(' ')).join('\n').trim()
      if (text === '') continue
      for (const l of p.lines) for (const w of l.words) { words++; confidenceSum += w.confidence }
      segments.push({ kind: 'paragraph', text, source: 'ocr', confidence: Math.max(0, Math.min(100, p.confidence)) })
    }
  }
  if (words === 0) return { segments: [], outcome: 'blank' }
  const mean = confidenceSum / words
  if (mean < MIN_PAGE_CONFIDENCE) return { segments: [], outcome: 'unreadable', reason: `no legible text (OCR confidence ${Math.round(mean)})` }
  return { segments, outcome: 'ocr' }
}
