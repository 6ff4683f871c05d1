/**
 * Server-sent-event streams of case events: one `id:`/`event:`/`data:` record per event (id = the
 * case's sequence number, data = the event's JSON plus `occurred_at`), a comment every keep-alive
 * interval, and a clean end when the process drains. The service keeps the set of open streams.
 */
import type { CaseEvent } from './log'
import type { CaseEventBus, CaseEventSubscription } from './bus'

/** The default keep-alive interval: a comment line every 15 seconds. */
export const KEEP_ALIVE_MS = 15_000
/** The reconnection delay suggested to clients (the SSE `retry:` field). */
export const RETRY_MS = 2_000
/** A stream whose client has this many bytes unread is closed; the client resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 4 * 1_048_576

const encoder = new TextEncoder()

/** One event in the SSE wire format. */
export function formatEvent(e: CaseEvent): string {
  const data = JSON.stringify({ ...e.data, occurred_at: e.createdAt.toISOString() })
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${data}\n\n`
}

// The bus hands the same event objects to every stream of a case: encode each once.
const encoded = new WeakMap<CaseEvent, Uint8Array>()
const encodeEvent = (e: CaseEvent): Uint8Array => {
  let bytes = encoded.get(e)
  if (!bytes) encoded.set(e, bytes = encoder.encode(formatEvent(e)))
  return bytes
}

/** The case event streams of one process. */
export interface CaseEventStreams {
  /** Opens a stream of a case's events after `afterSeq`; it ends when the client leaves or on drain. */
  open(tenantId: string, scenarioId: string, afterSeq: number, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>
  /** Ends every open stream cleanly and refuses new ones; resolves when all are closed. */
  drain(): Promise<void>
  /** True once drain() began. */
  readonly draining: boolean
  /** How many streams are open. */
  readonly size: number
  /** The keep-alive interval (tests shorten it). */
  keepAliveMs: number
}

/** Creates the stream registry over a bus. */
export function createCaseEventStreams(bus: CaseEventBus, keepAliveMs = KEEP_ALIVE_MS): CaseEventStreams {
  const open = new Set<() => void>()
  let draining = false

  const streams: CaseEventStreams = {
    keepAliveMs,
    get draining() { return draining },
    get size() { return open.size },
    async open(tenantId, scenarioId, afterSeq, signal) {
      let controller!: ReadableStreamDefaultController<Uint8Array>
      let sub: CaseEventSubscription | undefined
      let timer: ReturnType<typeof setInterval> | undefined
      let done = false
      const finish = (close: boolean) => {
        if (done) return
        done = true
        open.delete(end)
        if (timer) clearInterval(timer)
        sub?.close()
        signal?.removeEventListener('abort', abort)
        if (close) try { controller.close() } catch { /* already closed or errored */ }
      }
      const end = () => finish(true)
      const abort = () => finish(true)
      const write = (chunk: string | Uint8Array) => {
        if (done) return
        try {
          controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk)
          if ((controller.desiredSize ?? 0) < -MAX_BUFFERED_BYTES) end()
        } catch { finish(false) }
      }
      const stream = new ReadableStream<Uint8Array>({
        start(c) { controller = c },
        cancel() { finish(false) },
      }, { highWaterMark: 0, size: (chunk?: Uint8Array) => chunk?.byteLength ?? 0 } as QueuingStrategy<Uint8Array>)
      open.add(end)
      signal?.addEventListener('abort', abort)
      write(`retry: ${RETRY_MS}\n: stream of case ${scenarioId}\n\n`)
      timer = setInterval(() => write(': keep-alive\n\n'), streams.keepAliveMs)
      ;(timer as { unref?: () => void }).unref?.()
      try {
        sub = await bus.subscribe(tenantId, scenarioId, afterSeq,
          (events) => { for (const e of events) write(encodeEvent(e)) },
          () => end())
        if (done) sub.close()
      } catch (e) {
        finish(false)
        throw e
      }
      return stream
    },
    async drain() {
      draining = true
      for (const end of [...open]) end()
    },
  }
  return streams
}
