/**
 * The parser process: a child of the service that reads one document at a time for the parser
 * pool, over Bun's IPC channel. It holds no credentials and touches no database; the pool watches
 * its memory and time from outside and kills it on a breach. It exits when its parent goes away.
 */
import { extractDocument, type DocumentLimits, type ParseOutcome } from './extract'
import type { OcrRecognizer, DocumentOcr } from '../ocr/engine'
import type { OcrEngine, RenderablePdf } from '../adapters/types'
import type { AdapterName } from '../registry'
import { prepareCanvasBinding } from '../native-canvas'

/**
 * A request from the pool: one document and how to read it. Its bytes wait in a private file (a
 * large buffer sent over the channel would stall the service's event loop while it is copied).
 */
export interface ParseRequest {
  id: number
  documentId: string
  type: { adapter: AdapterName; label: string }
  bytesPath: string
  /** Where the parse writes the files it found inside the document (an email's attachments). */
  attachmentsDir: string
  limits: DocumentLimits
}

/** The answer to one request, or a progress note while it runs. */
export type ParseReply = { id: number; outcome: ParseOutcome } | { id: number; error: string } | { id: number; progress: { page: number; pages: number } }

/** A parser process's OCR slot traffic: it asks for a slot (`acquire`), gets it (`grant`), gives it back (`release`). */
export type OcrSlotMessage = { ocr: 'acquire'; ticket: number } | { ocr: 'release'; ticket: number } | { ocr: 'grant'; ticket: number }

/** Progress notes are sent at most this often. */
const PROGRESS_EVERY_MS = 500

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
  process.on('message', async (message: ParseRequest | OcrSlotMessage) => {
    if ('ocr' in message) {
      granted.get(message.ticket)?.()
      granted.delete(message.ticket)
      return
    }
    const request = message
    let reply: ParseReply
    try {
      const started = Date.now()
      const bytes = await Bun.file(request.bytesPath).bytes()
      // OCR stops at 80% of the parse's time limit, so what it read is handed back before the kill.
      // The engine (Tesseract, a canvas) is loaded only when a page needs it.
      let documentOcr: DocumentOcr | undefined
      const engine = async () => {
        recognizer ??= new (await import('../ocr/engine')).OcrRecognizer(request.limits.ocr, slot)
        return (documentOcr ??= recognizer.forDocument(started + request.limits.timeoutMs * 0.8))
      }
      const ocr: OcrEngine = {
        maxPixels: request.limits.ocr.maxPixels,
        image: async (b) => (await engine()).image(b),
        pdfPage: async (pdf: RenderablePdf, n: number) => (await engine()).pdfPage(pdf, n),
      }
      let last = 0
      const onPage = (page: number, pages: number) => {
        const now = Date.now()
        if (now - last < PROGRESS_EVERY_MS && page < pages) return
        last = now
        process.send!({ id: request.id, progress: { page, pages } } satisfies ParseReply)
      }
      const outcome = await extractDocument(request.documentId, request.type, bytes, request.limits, ocr, onPage)
      // Attachments travel as files (a channel message of megabytes would stall the service's event loop).
      if (outcome.kind === 'parsed' && outcome.attachments) {
        outcome.attachments = await Promise.all(outcome.attachments.map(async (a, i) => {
          const path = `${request.attachmentsDir}/${i}.bin`
          await Bun.write(path, a.bytes)
          return { filename: a.filename, contentType: a.contentType, bytes: new Uint8Array(0), path } as typeof a
        }))
      }
      reply = { id: request.id, outcome }
    } catch (e) {
      reply = { id: request.id, error: String((e as Error)?.message ?? e).slice(0, 200) }
    }
    process.send!(reply)
  })
  process.on('disconnect', () => process.exit(0))
  // A parent killed with SIGKILL may not close the channel in time: an orphan stops by itself.
  setInterval(() => { if (process.ppid !== parent) process.exit(0) }, 1000).unref()
}

if (import.meta.main) serveParseRequests()
