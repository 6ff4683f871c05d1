/**
 * The OCR engine of a parser process: Tesseract (tesseract.js, WebAssembly) with the English model
 * from the npm registry (`@tesseract.js-data/eng`), so nothing is downloaded at run time. One
 * recogniser per process, created on first use and kept; a page that outlasts its time limit ends
 * `unreadable` and the recogniser is replaced. Every limit turns into an unreadable page with its
 * reason: pixels per page, pages per document, seconds per page, and the document's time budget.
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
import { inkShare, isJpeg, jpegOrientation, orientedPng, renderPdfPage } from './render'
import { nativeTesseract, recognizeNative, type TesseractParagraph } from './native'

/** The limits OCR works within (SVC_OCR_*), and when the whole document's parse must be done. */
export interface OcrLimits {
  /** Largest image (width x height) recognised or rendered (SVC_OCR_MAX_PIXELS). */
  maxPixels: number
  /** One page's recognition time limit (SVC_OCR_PAGE_TIMEOUT_MS). */
  pageTimeoutMs: number
  /** Pages recognised per document; later ones are unreadable (SVC_OCR_MAX_PAGES). */
  maxPages: number
  /** `native`: the `tesseract` command; `wasm`: tesseract.js; `auto`: native when installed (SVC_OCR_ENGINE). */
  engine: 'auto' | 'native' | 'wasm'
  /** Set when OCR is off for the document (a workspace's evaluation policy): every page it would read is unreadable for this reason. */
  disabledReason?: string
}

/** A page whose words average under this confidence is noise, not text: unreadable. */
export const MIN_PAGE_CONFIDENCE = 30

/** A first reading under this mean confidence is tried again turned by 90, 180 and 270 degrees. */
const RETRY_TURNS_UNDER = 70

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

class PageTimeout extends Error {}

/** One document's OCR: counts its pages and stops at its deadline. */
export type DocumentOcr = OcrEngine

/** The process's recogniser, shared by its documents one at a time. */
export class OcrRecognizer {
  #worker: Promise<Worker> | undefined
  /** The native command when this recogniser uses it. */
  readonly native: string | null

  /**
   * `slot` waits for one of the service's OCR slots (SVC_OCR_CONCURRENCY, shared by its parser
   * processes) and resolves with its release; the default admits at once.
   */
  constructor(private readonly limits: OcrLimits, private readonly slot: () => Promise<() => void> = async () => () => {}) {
    this.native = limits.engine === 'wasm' ? null : nativeTesseract()
    if (limits.engine === 'native' && !this.native) throw new Error('SVC_OCR_ENGINE=native but no tesseract command with the English model is on PATH')
  }

  #get(): Promise<Worker> {
    this.#worker ??= createWorker('eng', OEM.LSTM_ONLY, {
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
    return this.#worker
  }

  /** Drops the recogniser (after a timeout its state is unknown); the next page starts a new one. */
  async reset(): Promise<void> {
    const w = this.#worker
    this.#worker = undefined
    if (w) await w.then((x) => x.terminate()).catch(() => {})
  }

  /** Recognises one encoded image within the pixel and per-page time limits. */
  async recognize(bytes: Uint8Array): Promise<RecognizedPage> {
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
    let timer: Timer | undefined
    const abort = new AbortController()
    const release = await this.slot()
    try {
      const reading = await Promise.race([
        this.#read(bytes, abort.signal),
        new Promise<never>((_, reject) => { timer = setTimeout(() => { abort.abort(); reject(new PageTimeout()) }, this.limits.pageTimeoutMs) }),
      ])
      if (reading.words === 0 && ((await inkShare(bytes)) ?? 0) > BLANK_INK_SHARE) {
        return { segments: [], outcome: 'unreadable', reason: 'no legible text found on a page that is not blank' }
      }
      return reading.page
    } catch (e) {
      await this.reset()
      if (e instanceof PageTimeout) return { segments: [], outcome: 'unreadable', reason: `OCR took longer than the ${Math.round(this.limits.pageTimeoutMs / 1000)} s page limit (SVC_OCR_PAGE_TIMEOUT_MS)` }
      return { segments: [], outcome: 'unreadable', reason: 'the image could not be recognised' }
    } finally {
      clearTimeout(timer)
      release()
    }
  }

  /**
   * Reads an image upright: a JPEG's EXIF orientation applied, and a weak first reading tried again
   * at the other three quarter turns (a page scanned sideways or upside down), keeping the best.
   */
  async #read(bytes: Uint8Array, signal: AbortSignal): Promise<Reading> {
    const native = this.native
    const worker = native ? undefined : await this.#get()
    const once = async (image: Uint8Array): Promise<Reading> => {
      if (native) return reading(await recognizeNative(native, image, signal))
      const result = await worker!.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength), {}, { blocks: true, text: false })
      return reading(result.data.blocks ?? [])
    }
    const upright = isJpeg(bytes) && jpegOrientation(bytes) !== 1 ? (await orientedPng(bytes, 0)) ?? bytes : bytes
    let best = await once(upright)
    if (best.words === 0 || best.meanConfidence >= RETRY_TURNS_UNDER) return best
    for (const turns of [1, 2, 3] as const) {
      const turned = await orientedPng(upright, turns)
      if (!turned) break
      const r = await once(turned)
      if (r.meanConfidence * Math.sqrt(r.words) > best.meanConfidence * Math.sqrt(best.words)) best = r
      if (best.meanConfidence >= RETRY_TURNS_UNDER) break
    }
    return best
  }

  /**
   * The engine of one document: `deadline` (epoch ms) is when its parse must be done, so pages
   * not recognised by then are unreadable for that reason instead of the whole parse being killed.
   */
  forDocument(deadline: number): DocumentOcr {
    const limits = this.limits
    let pagesDone = 0
    const gate = (): RecognizedPage | undefined => {
      if (limits.disabledReason) return { segments: [], outcome: 'unreadable', reason: limits.disabledReason }
      if (pagesDone >= limits.maxPages) return { segments: [], outcome: 'unreadable', reason: `not recognised: beyond the OCR page limit ${limits.maxPages} (SVC_OCR_MAX_PAGES)` }
      if (Date.now() > deadline) return { segments: [], outcome: 'unreadable', reason: 'not recognised: the document\'s time limit was reached (SVC_PARSE_TIMEOUT_MS)' }
      pagesDone++
      return undefined
    }
    return {
      maxPixels: limits.maxPixels,
      image: async (bytes) => {
        const refused = gate()
        if (refused) return refused
        let image: Uint8Array
        try {
          image = typeof bytes === 'function' ? await bytes() : bytes
        } catch {
          return { segments: [], outcome: 'unreadable', reason: 'the image could not be decoded' }
        }
        return this.recognize(image)
      },
      pdfPage: async (pdf: RenderablePdf, pageNumber: number) => {
        const refused = gate()
        if (refused) return refused
        const png = await renderPdfPage(pdf, pageNumber, { dpi: RENDER_DPI, maxPixels: limits.maxPixels })
        if (!png) return { segments: [], outcome: 'unreadable', reason: 'the page could not be rendered' }
        return this.recognize(png)
      },
    }
  }
}

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
