/**
 * The parser pool: document parsing runs in child processes, never on the event loop that serves
 * HTTP and claims jobs. Each child reads one document at a time; the pool watches its resident
 * memory and its wall clock from outside and kills it on a breach (the document then ends with the
 * limit named), replaces children that crash, retires children that grew, and lets idle ones go.
 *
 * Scheduling (see docs/documents.md): two lanes of parser processes. Text documents take the text
 * lane (SVC_PARSE_WORKERS processes, first come first served); image documents, and PDFs once they
 * ask for their first OCR slot, take the OCR lane (SVC_OCR_DOCUMENTS processes, documents admitted
 * round-robin by workspace), so no OCR page ever holds a text document back. OCR slots
 * (SVC_OCR_CONCURRENCY) go to the pages waiting for one round-robin by workspace, then by document.
 *
 * Each child has a private scratch directory (its TMPDIR). A scratch directory is removed only once
 * its process has exited, never emptied under a live one: a parser library may still be working on
 * files there after the answer it gave (exceljs abandons a failed read with its temporary files and
 * their streams still open), and deleting them under it made the child's next document fail at
 * random (ENOENT). A child that leaves anything in its scratch after a parse is retired instead.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { copyFile, link, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import type { ParseConfig } from '../../config'
import type { DocumentLimits, ParseOutcome } from './extract'
import type { OcrSlotMessage, ParseReply, ParseRequest, ReadyMessage } from './parser-process'
import { fairPick } from './fair-queue'
import { createOcrSlots } from './ocr-slots'
import { epochMs, type StageTimes } from './stage-times'
import { attachmentFile, blocksFile } from './request-files'
import type { Block } from '../blocks'
import { narrowLimits, ParseCanceled, ParserCrashed, type DocumentBytes, type DocumentParser, type Lane, type ParseControl, type ParseRecord } from './parse-control'
import { parserCommand, parserEnv, residentBytes, sweepStaleSpools } from './parser-launch'

interface Child {
  proc: Subprocess
  busy: boolean
  parses: number
  /** OCR slots it holds (tickets). */
  ocrHeld: Set<number>
  /** Its private TMPDIR, removed once the process has exited (never emptied while it lives). */
  scratch: string
  idleTimer?: Timer
  /** Stops its parse to queue it in the OCR lane (set while it parses). */
  moveToOcr?: () => void
  /** The lane of the document it is working on. */
  lane: Lane
  /** Whether it has asked for an OCR slot: its OCR engine is loaded (kept between documents). */
  ocrLoaded: boolean
  /** When it was started, and whether it has said it is ready (its modules loaded). */
  spawnedAt: number
  ready: boolean
  /** The request it is working on: settles it on a reply or an exit. */
  current?: {
    id: number; documentId: string; workspace: string
    settle: (reply: Exclude<ParseReply, { progress: unknown }> | { exit: string }) => void
    progress?: (page: number, pages: number) => void
    /** Pages given an OCR slot so far (each widens the document's time bound). */
    ocrPages: number
  }
}

interface Waiting { lane: Lane; workspace: string; seq: number; run: (child: Child) => void; fail: (e: Error) => void }

/** A parse asked to move to the OCR lane while it is full: it is stopped and queued there (nothing was recognised yet). */
class MoveToOcrLane extends Error {}

/** A child retires after this many parses, or when it holds more than half the memory limit after one. */
const PARSES_PER_CHILD = 200
const IDLE_EXIT_MS = 30_000
const WATCH_MS = 20

/**
 * A process's start-up (Bun starting, the adapters' modules loading) is not the document's parse: a
 * document's clock runs once its process says it is ready. On a loaded machine a cold start took more
 * than 10 s and used up a small workbook's whole limit. A start-up longer than this counts anyway, so a
 * process that never becomes ready still meets the document's bound.
 */
const STARTUP_GRACE_MS = 60_000

/** Starts a parser pool of `config.workers` processes at most, created on demand. */
export function createParserPool(
  config: ParseConfig,
  log: (level: 'info' | 'warn' | 'error', message: string, extra?: Record<string, unknown>) => void = () => {},
  /** How long a parser process that has parsed stays idle before it is retired (tests shorten it). */
  idleExitMs = IDLE_EXIT_MS,
): DocumentParser {
  const limits: DocumentLimits = {
    maxPages: config.maxPages,
    maxInflatedBytes: config.maxInflatedMb * 1_048_576,
    maxBlocks: config.maxBlocks,
    maxChars: config.maxChars,
    timeoutMs: config.timeoutMs,
    maxAttachments: config.emailMaxAttachments,
    maxAttachmentBytes: config.emailMaxAttachmentMb * 1_048_576,
    ocr: { maxPixels: config.ocrMaxPixels, pageTimeoutMs: config.ocrPageTimeoutMs, maxPages: config.ocrMaxPages, engine: config.ocrEngine, parallel: config.ocrConcurrency },
  }
  const memoryLimit = config.memoryMb * 1_048_576
  const children = new Set<Child>()
  // Every parser process until it has exited and its scratch is gone, retired ones included.
  const living = new Map<Child, Promise<void>>()
  const waiting: Waiting[] = []
  const records: ParseRecord[] = []
  let nextId = 1
  let closed = false
  // Bytes on their way to a parser wait here, readable by this user only, removed once parsed.
  let spool: string | undefined
  const spoolDir = () => (spool ??= (sweepStaleSpools(), mkdtempSync(join(tmpdir(), `svc-parse-${process.pid}-`))))

  const record = (r: ParseRecord) => {
    records.push(r)
    if (records.length > 50) records.shift()
  }

  let spawned = 0
  const spawn = (): Child => {
    const scratch = join(spoolDir(), `tmp-${++spawned}`)
    mkdirSync(scratch, { mode: 0o700 })
    const child: Child = { busy: false, parses: 0, ocrHeld: new Set(), scratch, lane: 'text', ocrLoaded: false, spawnedAt: performance.now(), ready: false } as Child
    child.proc = Bun.spawn(parserCommand(), {
      env: parserEnv(scratch),
      stdio: ['ignore', 'inherit', 'inherit'],
      serialization: 'advanced',
      ipc(message: ParseReply | OcrSlotMessage | ReadyMessage) {
        if ('ready' in message) { child.ready = true; return }
        if ('ocr' in message) return ocrSlot(child, message)
        if (child.current?.id !== message.id) return
        if ('progress' in message) child.current.progress?.(message.progress.page, message.progress.pages)
        else child.current.settle(message)
      },
      onExit(_proc, exitCode, signalCode) {
        children.delete(child)
        clearTimeout(child.idleTimer)
        // The process is gone: nothing can be working in its scratch any more.
        rmSync(scratch, { recursive: true, force: true })
        slots.free(child)
        child.current?.settle({ exit: signalCode ? `signal ${signalCode}` : `exit code ${exitCode}` })
        dispatch()
      },
    })
    children.add(child)
    living.set(child, child.proc.exited.then(() => { living.delete(child) }, () => { living.delete(child) }))
    return child
  }

  // OCR slots (ocr-slots.ts); a text-lane parse that asks for one moves to the OCR lane first.
  const slots = createOcrSlots<Child>(config.ocrConcurrency, (child) => children.has(child), (child, ticket) => {
    try { child.proc.send({ ocr: 'grant', ticket } satisfies OcrSlotMessage) } catch { /* it is exiting; onExit frees the slot */ }
  })
  const ocrSlot = (child: Child, message: OcrSlotMessage) => {
    if (message.ocr === 'acquire') {
      if (!child.current) return
      // A text-lane parse asking for OCR moves to the OCR lane; when that is full it is stopped
      // and queued there instead (its first OCR page has not started: little is lost).
      if (child.lane === 'text') {
        if (busyIn('ocr') >= config.ocrDocuments) return child.moveToOcr?.()
        child.lane = 'ocr'
        dispatch()
      }
      child.ocrLoaded = true
      slots.acquire(child, message.ticket)
    } else if (message.ocr === 'release') slots.release(child, message.ticket)
  }

  /** Whether a child left files in its scratch (a library still at work, or one that leaks). */
  const scratchInUse = (child: Child) => {
    try { return readdirSync(child.scratch).length > 0 } catch { return true }
  }

  /** Stops a child; its scratch goes when it has exited (onExit). Resolves then. */
  const retire = (child: Child): Promise<void> => {
    children.delete(child)
    clearTimeout(child.idleTimer)
    child.proc.kill('SIGKILL')
    return living.get(child) ?? Promise.resolve()
  }

  /**
   * A child done with a parse: kept for the next one when its scratch is empty; retired when it
   * left files there (resolving once they are gone, so no document bytes outlive the parse), has
   * served its parses or grew.
   */
  const release = (child: Child): Promise<void> => {
    child.busy = false
    child.current = undefined
    if (scratchInUse(child)) {
      const gone = retire(child)
      dispatch()
      return gone
    }
    const rss = residentBytes(child.proc.pid) ?? 0
    if (child.parses >= PARSES_PER_CHILD || rss > memoryLimit / 2) retire(child)
    // Idle processes go after a while, all of them: an idle service holds no parser memory. With
    // SVC_PARSE_WARM the last one is replaced by a fresh process, so one stays ready for the next
    // document without the memory its parses left (an OCR model, a large heap).
    else child.idleTimer = setTimeout(() => {
      if (child.busy || !children.has(child)) return
      const last = children.size === 1
      void retire(child)
      if (last && !closed && config.warm) spawn()
    }, idleExitMs)
    dispatch()
    return Promise.resolve()
  }

  const busyIn = (lane: Lane) => {
    let n = 0
    for (const c of children) if (c.busy && c.lane === lane) n++
    return n
  }
  // The OCR lane admits documents round-robin by workspace.
  const admitted = new Map<string, number>()
  let admissions = 0
  /** The next request a free process should take: text first come first served, then OCR fairly; each within its lane's size. */
  const nextWaiting = (): Waiting | undefined => {
    if (busyIn('text') < config.workers) {
      const at = waiting.findIndex((w) => w.lane === 'text')
      if (at >= 0) return waiting.splice(at, 1)[0]
    }
    if (busyIn('ocr') < config.ocrDocuments) {
      const ocr = waiting.filter((w) => w.lane === 'ocr')
      if (ocr.length === 0) return undefined
      const next = fairPick(ocr, admitted)
      waiting.splice(waiting.indexOf(next), 1)
      admitted.set(next.workspace, ++admissions)
      return next
    }
    return undefined
  }

  /** Hands free children (existing, or new up to both lanes' size) to waiting requests whose lane has room. */
  const dispatch = () => {
    while (!closed && waiting.length > 0) {
      const free = [...children].filter((c) => !c.busy && c.proc.exitCode === null && c.proc.signalCode === null)
      const room = children.size < config.workers + config.ocrDocuments
      if (free.length === 0 && !room) return
      const next = nextWaiting()
      if (!next) return
      // OCR never takes the last ready process while it may start another: a text document arriving
      // next finds one ready instead of waiting for a process to start. Among several ready ones, a
      // document needing OCR goes to one whose OCR engine is loaded (it ran OCR before: loading the
      // engine again cost a HEIC photo 4 s instead of 1.2 s on the shared machine), a text document
      // to one without.
      const suited = free.find((c) => c.ocrLoaded === (next.lane === 'ocr')) ?? free[0]
      const child = next.lane === 'ocr' && free.length === 1 && room ? spawn() : suited ?? spawn()
      child.busy = true
      child.lane = next.lane
      clearTimeout(child.idleTimer)
      next.run(child)
    }
  }

  const runOn = async (child: Child, documentId: string, type: ParseRequest['type'], bytes: DocumentBytes, control: ParseControl, queuedAt: number): Promise<ParseOutcome> => {
    const id = nextId++
    const bytesPath = join(spoolDir(), `${id}.bin`)
    const attachmentsDir = join(spoolDir(), `${id}-attachments`)
    try {
      const stages: StageTimes = { parser_wait: epochMs() - queuedAt }
      let t = epochMs()
      if (bytes instanceof Uint8Array) await writeFile(bytesPath, bytes, { mode: 0o600 })
      else {
        // A file's bytes: a hard link where the spool shares its file system (no copy at all; a
        // blob is replaced by rename, never written in place), else a copy made by the kernel.
        try { await link(bytes.path, bytesPath) } catch { await copyFile(bytes.path, bytesPath) }
      }
      mkdirSync(attachmentsDir, { mode: 0o700 })
      stages.spool_write = epochMs() - t
      // Canceled after leaving the queue but before reaching the parser (during the spool write,
      // when neither the queue's listener nor the parse's is on the signal): the process is handed
      // back unused and the parse ends canceled, as it would a moment earlier or later. Without
      // this the cancel was lost and the document read in full.
      if (control.signal?.aborted) {
        await release(child)
        throw new ParseCanceled('the parse was canceled')
      }
      const outcome = await parseOn(child, id, documentId, type, bytesPath, attachmentsDir, control)
      t = epochMs()
      if (outcome.kind === 'parsed' && outcome.attachments) {
        outcome.attachments = await Promise.all(outcome.attachments.map(async (a, i) => {
          const { path: _named, ...rest } = a as typeof a & { path?: string }
          return { ...rest, bytes: await Bun.file(attachmentFile(attachmentsDir, i)).bytes() }
        }))
      }
      stages.attachments_read = epochMs() - t
      outcome.stages = { ...stages, ...outcome.stages }
      return outcome
    } finally {
      await rm(bytesPath, { force: true })
      await rm(attachmentsDir, { recursive: true, force: true })
    }
  }

  const parseOn = (child: Child, id: number, documentId: string, type: ParseRequest['type'], bytesPath: string, attachmentsDir: string, control: ParseControl): Promise<ParseOutcome> =>
    new Promise((resolve, reject) => {
      const started = performance.now()
      let peak = 0
      let breach: 'memory_limit' | 'timeout' | 'canceled' | 'move' | undefined
      const onAbort = () => stop('canceled')
      control.signal?.addEventListener('abort', onAbort, { once: true })
      const stop = (why: 'memory_limit' | 'timeout' | 'canceled' | 'move') => {
        if (breach) return
        breach = why
        child.proc.kill('SIGKILL')
      }
      child.moveToOcr = () => stop('move')
      // The document's time bound: SVC_PARSE_TIMEOUT_MS plus SVC_OCR_PAGE_TIMEOUT_MS for every page
      // given an OCR slot, on a clock that stops while the document only waits for a slot (a busy
      // machine does not use up a long scan's time). At 80% the parser is told to start no more
      // pages, so what it read is handed back; at 100% it is killed.
      let activeMs = 0
      let tick = started
      let expireSent = false
      const bound = () => config.timeoutMs + (child.current?.ocrPages ?? 0) * config.ocrPageTimeoutMs
      const watch = setInterval(() => {
        const now = performance.now()
        const started = child.ready || now - child.spawnedAt > STARTUP_GRACE_MS
        if (started && (child.ocrHeld.size > 0 || !slots.isWaiting(child))) activeMs += now - tick
        tick = now
        if (!expireSent && activeMs > bound() * 0.8) {
          expireSent = true
          try { child.proc.send({ ocr: 'expire', id } satisfies OcrSlotMessage) } catch { /* exiting */ }
        }
        if (activeMs > bound()) stop('timeout')
        const rss = residentBytes(child.proc.pid)
        if (rss === undefined) return
        peak = Math.max(peak, rss)
        if (rss > memoryLimit) stop('memory_limit')
      }, WATCH_MS)
      child.current = {
        id,
        documentId,
        workspace: control.workspace ?? '',
        ocrPages: 0,
        progress: control.onProgress,
        settle(reply) {
          const receivedAt = epochMs()
          if (child.current?.id !== id) return
          clearInterval(watch)
          child.moveToOcr = undefined
          control.signal?.removeEventListener('abort', onAbort)
          child.parses++
          const ms = Math.round(performance.now() - started)
          const ocrPages = child.current.ocrPages
          if (breach === 'move') {
            child.current = undefined
            reject(new MoveToOcrLane())
            return
          }
          const end: ParseRecord['end'] = breach ?? ('exit' in reply ? 'crashed' : 'done')
          record({ documentId, end, ms, peakRssBytes: peak, pid: child.proc.pid, lane: child.lane, ...('ocrStats' in reply && reply.ocrStats ? { ocr: reply.ocrStats } : {}) })
          if (end !== 'done') log('warn', 'document parse stopped', { document_id: documentId, end, ms, peak_rss_bytes: peak, parser_pid: child.proc.pid })
          if ('exit' in reply) {
            child.current = undefined
            if (breach === 'memory_limit') resolve({ kind: 'unreadable', reason: `parsing needed more than the ${config.memoryMb} MiB memory limit (SVC_PARSE_MEMORY_MB)` })
            else if (breach === 'timeout' && ocrPages > 0) resolve({ kind: 'unreadable', reason: `parsing took longer than its time limit (SVC_PARSE_TIMEOUT_MS, plus SVC_OCR_PAGE_TIMEOUT_MS for each of its ${ocrPages} pages recognised)` })
            else if (breach === 'timeout') resolve({ kind: 'unreadable', reason: `parsing took longer than the ${Math.round(config.timeoutMs / 1000)} s time limit (SVC_PARSE_TIMEOUT_MS)` })
            else if (breach === 'canceled') reject(new ParseCanceled('the parse was canceled'))
            else reject(new ParserCrashed(`the parser process ended (${reply.exit}) while reading the document`))
            return
          }
          const released = breach ? retire(child) : release(child)
          if (breach) dispatch()
          released.then(async () => {
            if ('error' in reply) return reject(new ParserCrashed('the parser process failed while reading the document'))
            const t = epochMs()
            // The blocks wait in the request's private directory (removed by runOn once this settles);
            // its path is this process's own, never one the parser process names.
            const outcome = reply.blocksInFile && reply.outcome.kind === 'parsed'
              ? { ...reply.outcome, blocks: JSON.parse(await Bun.file(blocksFile(attachmentsDir)).text()) as Block[] }
              : reply.outcome
            resolve(reply.sentAt ? { ...outcome, stages: { ...reply.stages, reply_transfer: receivedAt - reply.sentAt, parser_release: t - receivedAt, blocks_decode: epochMs() - t } } : outcome)
          }).catch(() => reject(new ParserCrashed('the parser process\'s blocks could not be read')))
        },
      }
      try {
        child.proc.send({ id, documentId, type, bytesPath, attachmentsDir, limits: narrowLimits(limits, control.limits) } satisfies ParseRequest)
      } catch (e) {
        child.current.settle({ exit: `send failed: ${(e as Error).message}` })
      }
    })

  return {
    parse(documentId, type, bytes, control = {}) {
      if (closed) return Promise.reject(new Error('the parser pool is closed'))
      if (control.signal?.aborted) return Promise.reject(new ParseCanceled('the parse was canceled'))
      return new Promise<ParseOutcome>((resolve, reject) => {
        const queue = (lane: Lane) => {
          const queuedAt = epochMs()
          const entry: Waiting = {
            lane,
            workspace: control.workspace ?? '',
            seq: nextId++,
            run: (child) => {
              control.signal?.removeEventListener('abort', dropWaiting)
              runOn(child, documentId, type, bytes, control, queuedAt).then(resolve, (e) => (e instanceof MoveToOcrLane ? queue('ocr') : reject(e)))
            },
            fail: reject,
          }
          // Canceled while waiting for a parser process: leave the queue.
          const dropWaiting = () => {
            const at = waiting.indexOf(entry)
            if (at >= 0) { waiting.splice(at, 1); reject(new ParseCanceled('the parse was canceled')) }
          }
          control.signal?.addEventListener('abort', dropWaiting, { once: true })
          waiting.push(entry)
          dispatch()
        }
        // Images are read by OCR only; other documents start in the text lane and move if they need OCR.
        queue(type.adapter === 'image' ? 'ocr' : 'text')
      })
    },
    stats: () => ({
      processes: children.size, busy: [...children].filter((c) => c.busy).length, busyOcr: busyIn('ocr'),
      queued: waiting.length, queuedOcr: waiting.filter((w) => w.lane === 'ocr').length, ocrInUse: slots.counts().inUse, ocrWaiting: slots.counts().waiting,
    }),
    recent: () => records,
    warm() {
      if (!closed && config.warm && children.size === 0) spawn()
    },
    async close() {
      closed = true
      for (const w of waiting.splice(0)) w.fail(new Error('the parser pool is closed'))
      for (const c of children) c.proc.kill('SIGKILL')
      children.clear()
      // Retired processes too: the spool (their scratch directories) goes only once all have exited.
      await Promise.allSettled([...living.values()])
      if (spool) rmSync(spool, { recursive: true, force: true })
    },
  }
}
