/**
 * The parser process: a child of the service that reads one document at a time for the parser
 * pool, over Bun's IPC channel. It holds no credentials and touches no database; the pool watches
 * its memory and time from outside and kills it on a breach. It exits when its parent goes away.
 */
import { readdirSync } from 'node:fs'
import { extractDocument, type DocumentLimits, type ParseOutcome } from './extract'
import type { OcrRecognizer, DocumentOcr, OcrStats } from '../ocr/engine'
import type { OcrEngine, RenderablePdf } from '../adapters/types'
import type { AdapterName } from '../registry'
import { prepareCanvasBinding } from '../native-canvas'
import { epochMs, type StageTimes } from './stage-times'
import { attachmentFile, blocksFile } from './request-files'

/**
 * A request from the pool: one document and how to read it. Its bytes wait in a private file (a
 * large buffer sent over the channel would stall the service's event loop while it is copied).
 */
export interface ParseRequest {
  id: number
  documentId: string
  /** The adapter, the type's label, and the declared content type's charset parameter (text formats). */
  type: { adapter: AdapterName; label: string; charset?: string }
  bytesPath: string
  /** Where the parse writes the files it found inside the document (an email's attachments). */
  attachmentsDir: string
  limits: DocumentLimits
}

/** The answer to one request (with what its OCR did, its stages' times, and whether a parsed outcome's blocks wait in its blocks file (request-files.ts)), or a progress note while it runs. */
export type ParseReply = { id: number; outcome: ParseOutcome; ocrStats?: OcrStats; stages?: StageTimes; sentAt?: number; blocksInFile?: true } | { id: number; error: string } | { id: number; progress: { page: number; pages: number } }

/** Sent once, when the process has loaded its modules and listens: the pool starts a document's clock from it. */
export type ReadyMessage = { ready: true }

/**
 * A parser process's OCR traffic: it asks for a slot for a page (`acquire`), gets it (`grant`),
 * gives it back (`release`); the pool says when the document's time bound is reached (`expire`:
 * no more pages are started, a first reading still running is stopped).
 */
export type OcrSlotMessage = { ocr: 'acquire'; ticket: number } | { ocr: 'release'; ticket: number } | { ocr: 'grant'; ticket: number } | { ocr: 'expire'; id: number }

/** Progress notes are sent at most this often. */
const PROGRESS_EVERY_MS = 500

/** How long a parse's answer waits for its library's temporary files to go (exceljs removes them asynchronously). */
const SCRATCH_SETTLE_MS = 250

/**
 * Waits until this process's private TMPDIR is empty, for at most `ms`: a library that spilled
 * into it may still be closing and unlinking its files after it returned. The pool retires a
 * process that answers with files still there (it never deletes them under a live process).
 */
async function scratchSettled(ms: number): Promise<void> {
  const dir = process.env.TMPDIR
  if (!dir) return
  const until = Date.now() + ms
  for (;;) {
    let left = 0
    try { left = readdirSync(dir).length } catch { return }
    if (left === 0 || Date.now() >= until) return
    await Bun.sleep(5)
  }
}

/** Serves parse requests on the IPC channel until the parent disconnects. */
export function serveParseRequests(): void {
  prepareCanvasBinding()
  const parent = process.ppid
  let recognizer: OcrRecognizer | undefined
  // OCR slots are the service's (SVC_OCR_CONCURRENCY): ask the pool for one per page.
  let tickets = 0
  const granted = new Map<number, () => void>()
  const slot = () => new Promise<() => void>((resolve) => {
    const ticket = ++tickets
    granted.set(ticket, () => resolve(() => process.send!({ ocr: 'release', ticket } satisfies OcrSlotMessage)))
    process.send!({ ocr: 'acquire', ticket } satisfies OcrSlotMessage)
  })
  let documentOcr: DocumentOcr | undefined
  let currentId = 0
  process.on('message', async (message: ParseRequest | OcrSlotMessage) => {
    if ('ocr' in message) {
      if (message.ocr === 'expire') { if (message.id === currentId) documentOcr?.expire(); return }
      if (message.ocr !== 'grant') return
      granted.get(message.ticket)?.()
      granted.delete(message.ticket)
      return
    }
    const request = message
    currentId = request.id
    documentOcr = undefined
    let reply: ParseReply
    const stages: StageTimes = {}
    try {
      let t = epochMs()
      const bytes = await Bun.file(request.bytesPath).bytes()
      stages.parser_read = epochMs() - t
      t = epochMs()
      // The engine (Tesseract, a canvas) is loaded only when a page needs it. The pool says when
      // the document's time bound is near (`expire`), so what OCR read is handed back before a kill.
      let loading: Promise<DocumentOcr> | undefined
      const engine = () => (loading ??= (async () => {
        recognizer ??= new (await import('../ocr/engine')).OcrRecognizer(request.limits.ocr, slot)
        return (documentOcr = recognizer.forDocument(request.limits.ocr))
      })())
      const ocr: OcrEngine = {
        maxPixels: request.limits.ocr.maxPixels,
        parallel: request.limits.ocr.parallel ?? 1,
        image: async (b) => (await engine()).image(b),
        pdfPage: async (pdf: RenderablePdf, n: number) => (await engine()).pdfPage(pdf, n),
      }
      // Pages recognised in parallel finish out of order: progress only moves forward. The first
      // note comes PROGRESS_EVERY_MS into the parse, and the last page is noted once any was: a
      // parse shorter than that notes nothing (its ready comes next), where each note is a case
      // event written while the parse still needs the cores.
      let last = Date.now()
      let noted = false
      let furthest = 0
      const onPage = (page: number, pages: number) => {
        if (page <= furthest) return
        furthest = page
        const now = Date.now()
        if (now - last < PROGRESS_EVERY_MS && !(page === pages && noted)) return
        last = now
        noted = true
        process.send!({ id: request.id, progress: { page, pages } } satisfies ParseReply)
      }
      const outcome = await extractDocument(request.documentId, request.type, bytes, request.limits, ocr, onPage)
      stages.parser_extract = epochMs() - t
      t = epochMs()
      // Attachments travel as files (a channel message of megabytes would stall the service's event loop).
      if (outcome.kind === 'parsed' && outcome.attachments) {
        outcome.attachments = await Promise.all(outcome.attachments.map(async (a, i) => {
          await Bun.write(attachmentFile(request.attachmentsDir, i), a.bytes)
          return { filename: a.filename, contentType: a.contentType, bytes: new Uint8Array(0) }
        }))
      }
      const used = documentOcr as DocumentOcr | undefined // set by engine() while the document was read
      await recognizer?.trim()
      stages.parser_after = epochMs() - t
      reply = { id: request.id, outcome, ...(used ? { ocrStats: { ...used.stats } } : {}), stages }
    } catch (e) {
      reply = { id: request.id, error: String((e as Error)?.message ?? e).slice(0, 200) }
    }
    await scratchSettled(SCRATCH_SETTLE_MS)
    // Blocks travel as one JSON text in a file of the request's private directory, as the bytes and
    // attachments do: the channel's structured clone of 10,000 block objects took 100-140 ms, and
    // even as one string the channel took 120-180 ms for 4,000-10,000 blocks (1-3 MB) on the shared
    // 2-core machine, against a few milliseconds to write and read the file.
    if ('outcome' in reply && reply.outcome.kind === 'parsed') {
      const t = epochMs()
      await Bun.write(blocksFile(request.attachmentsDir), JSON.stringify(reply.outcome.blocks))
      reply = { ...reply, outcome: { ...reply.outcome, blocks: [] }, blocksInFile: true, stages: { ...reply.stages, parser_encode: epochMs() - t } }
    }
    process.send!('outcome' in reply ? { ...reply, sentAt: epochMs() } : reply)
  })
  process.on('disconnect', () => process.exit(0))
  process.send!({ ready: true } satisfies ReadyMessage)
  // A parent killed with SIGKILL may not close the channel in time: an orphan stops by itself.
  setInterval(() => { if (process.ppid !== parent) process.exit(0) }, 1000).unref()
}

if (import.meta.main) serveParseRequests()
