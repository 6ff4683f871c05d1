/**
 * What a caller of the parser pool sees: how a parse is followed and stopped, how it ended, and the
 * errors that are not a document's outcome (a crash to retry, a cancel). The pool itself is in
 * parser-pool.ts.
 */
import type { AdapterName } from '../registry'
import type { DocumentLimits, ParseOutcome } from './extract'
import type { OcrStats } from '../ocr/engine'

/** A parser process ended without answering for a reason that was not a limit (a crash): retry. */
export class ParserCrashed extends Error {
  /** Content-free; may reach a document's error_detail once the job gives up. */
  readonly publicReason: string
  constructor(detail: string) {
    super(`worker crashed: ${detail}`)
    this.publicReason = `worker crashed: ${detail}`
  }
}

/** How one parse ended, kept for operators and tests (the last few only). */
export interface ParseRecord {
  documentId: string
  end: 'done' | 'memory_limit' | 'timeout' | 'canceled' | 'crashed'
  ms: number
  peakRssBytes: number
  pid: number
  /** The lane it ended in; what its OCR did (recognitions, pages whose time limit was reached). */
  lane: Lane
  ocr?: OcrStats
}

/** Which parser processes a document runs in: text parsing, or OCR (see the module's doc). */
export type Lane = 'text' | 'ocr'

/** How a caller follows and stops one parse. */
export interface ParseControl {
  /** Called with the pages done (`page` of `pages`) of a long document, at most twice a second. */
  onProgress?: (page: number, pages: number) => void
  /** Aborting kills the parse (its parser process is replaced); the parse then rejects with ParseCanceled. */
  signal?: AbortSignal
  /** Tighter limits for this document (a workspace's evaluation policy): fewer pages, or no OCR. */
  limits?: { maxPages?: number; ocr?: boolean }
  /** The workspace the document belongs to: OCR is shared fairly between workspaces. */
  workspace?: string
}

/** The deployment's limits narrowed by a document's own (never widened). */
export function narrowLimits(limits: DocumentLimits, narrower: ParseControl['limits'] = {}): DocumentLimits {
  return {
    ...limits,
    ...(narrower.maxPages !== undefined && narrower.maxPages < limits.maxPages
      ? { maxPages: narrower.maxPages, maxPagesSource: "the workspace's evaluation policy" }
      : {}),
    ocr: narrower.ocr === false ? { ...limits.ocr, disabledReason: "not recognised: OCR is off in this workspace's evaluation policy" } : limits.ocr,
  }
}

/** The parse was stopped by its caller (a reingest superseded it, or the service is draining). */
export class ParseCanceled extends Error {}

/** Parses documents in isolated, bounded processes. */
export interface DocumentParser {
  /** Parses one document; a limit breach is an `unreadable` outcome naming it; a crash throws ParserCrashed. */
  parse(documentId: string, type: { adapter: AdapterName; label: string }, bytes: DocumentBytes, control?: ParseControl): Promise<ParseOutcome>
  /** Parser processes alive, busy (of them in the OCR lane), documents waiting (of them for the OCR lane); OCR slots in use and pages waiting for one. */
  stats(): { processes: number; busy: number; busyOcr: number; queued: number; queuedOcr: number; ocrInUse: number; ocrWaiting: number }
  /** The last parses, newest last. */
  recent(): readonly ParseRecord[]
  /** Starts one parser process ahead of the first document when SVC_PARSE_WARM is on (the service asks at start). */
  warm(): void
  /** Kills every parser process and refuses what waits. */
  close(): Promise<void>
}

/** A document's bytes: in memory, or a file of this machine that holds them (a local blob, never changed in place). */
export type DocumentBytes = Uint8Array | { path: string }
