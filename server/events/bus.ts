/**
 * The fan-out of committed case events to open streams in this process. Subscribers of one case
 * share one reader: when woken, it reads the case's log after the lowest position any of them has
 * seen and hands each subscriber what it has not seen yet, in order. The log is the source of
 * truth; wake-ups only say "look now":
 *  - on PostgreSQL, a LISTEN on the channel every append NOTIFYs at commit, so an event written by
 *    any process reaches the streams of every process;
 *  - on the embedded database (one session, so insertion order is commit order), an in-process
 *    bus: appends in this process hint at once, and a light poll of the log's global order catches
 *    writers in other processes (the CLI, a worker) attached through the embedded socket.
 */
import type { Sql } from '../db/connect'
import { CASE_EVENTS_CHANNEL, onCaseEventHint, readCaseEvents, type CaseEvent } from './log'

/** One subscription; `close` stops deliveries. */
export interface CaseEventSubscription { close(): void }

/** The fan-out of committed case events. */
export interface CaseEventBus {
  /**
   * Delivers every event of the case after `afterSeq` (the stored ones first, then live ones), in
   * order, each once. `onError` is told when the log cannot be read.
   */
  subscribe(tenantId: string, scenarioId: string, afterSeq: number, deliver: (events: CaseEvent[]) => void, onError?: (e: unknown) => void): Promise<CaseEventSubscription>
  /** Stops listening and polling. */
  close(): Promise<void>
}

interface Sub { lastSeq: number; deliver: (events: CaseEvent[]) => void; onError?: (e: unknown) => void }
interface Case { tenantId: string; scenarioId: string; subs: Set<Sub>; running: boolean; again: boolean }

/** Options of the bus. */
export interface BusOptions {
  sql: Sql
  /** The client whose listen() holds the LISTEN connection (DATABASE_LISTEN_URL's); default `sql`. */
  listenSql?: Sql
  /** True on the embedded database: tail the log instead of LISTEN. */
  embedded: boolean
  /** Poll interval of the embedded tail for writers in other processes. */
  pollMs?: number
}

const BATCH = 500

/** Creates the bus of one process. */
export function createCaseEventBus(opts: BusOptions): CaseEventBus {
  const { sql } = opts
  const cases = new Map<string, Case>()
  const keyOf = (tenantId: string, scenarioId: string) => `${tenantId}:${scenarioId}`
  let closed = false

  /** Reads what the subscribers of one case have not seen and hands it out; one reader per case. */
  const wake = (key: string) => {
    const c = cases.get(key)
    if (!c || closed) return
    if (c.running) { c.again = true; return }
    c.running = true
    void (async () => {
      try {
        do {
          c.again = false
          for (;;) {
            if (c.subs.size === 0) break
            const from = Math.min(...[...c.subs].map((s) => s.lastSeq))
            const events = await readCaseEvents(sql, c.tenantId, c.scenarioId, from, BATCH)
            for (const sub of c.subs) {
              const fresh = events.filter((e) => e.seq > sub.lastSeq)
              if (fresh.length === 0) continue
              sub.lastSeq = fresh[fresh.length - 1]!.seq
              try { sub.deliver(fresh) } catch { /* a closed stream: its cancel removes it */ }
            }
            if (events.length < BATCH) break
          }
        } while (c.again && !closed)
      } catch (e) {
        for (const sub of c.subs) sub.onError?.(e)
      } finally {
        c.running = false
      }
    })()
  }

  const wakeAll = () => { for (const key of cases.keys()) wake(key) }

  // PostgreSQL: one LISTEN connection per process, started with the first subscription.
  let listening: Promise<unknown> | undefined
  let unlisten: (() => Promise<void>) | undefined
  const listen = () => {
    listening ??= (opts.listenSql ?? sql).listen(CASE_EVENTS_CHANNEL, (payload) => {
      const [tenantId, scenarioId] = payload.split(':')
      if (tenantId && scenarioId) wake(keyOf(tenantId, scenarioId))
    }, () => wakeAll() /* (re)connected: catch up on anything sent while away */).then((meta) => { unlisten = meta.unlisten })
    return listening
  }

  // Embedded: tail the global order of the log while anyone is subscribed.
  let highWater: number | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let polling = false
  let pollAgain = false
  const poll = async () => {
    if (polling) { pollAgain = true; return }
    polling = true
    try {
      do {
        pollAgain = false
        if (cases.size === 0 || closed) { highWater = undefined; break }
        if (highWater === undefined) {
          const [row] = await sql<{ gid: string | null }[]>`select max(gid) as gid from case_events`
          highWater = Number(row?.gid ?? 0)
          wakeAll()
          continue
        }
        // Infrastructure tail across workspaces: which cases moved since the last look.
        const rows = await sql<{ tenant_id: string; scenario_id: string; gid: string }[]>`
          select tenant_id, scenario_id, max(gid) as gid from case_events where gid > ${highWater}
          group by tenant_id, scenario_id`
        for (const r of rows) {
          highWater = Math.max(highWater, Number(r.gid))
          wake(keyOf(r.tenant_id, r.scenario_id))
        }
      } while (pollAgain)
    } catch { /* the database is closing or busy: the next tick tries again */ } finally {
      polling = false
      schedule()
    }
  }
  const schedule = () => {
    if (timer || closed || cases.size === 0 || !opts.embedded) return
    timer = setTimeout(() => { timer = undefined; void poll() }, opts.pollMs ?? 100)
    ;(timer as { unref?: () => void }).unref?.()
  }
  const stopHints = opts.embedded
    ? onCaseEventHint((tenantId, scenarioId) => {
        // The appending transaction still holds the embedded database's one connection, so this
        // read runs right after it commits (and finds nothing if it rolled back).
        if (cases.has(keyOf(tenantId, scenarioId))) setTimeout(() => wake(keyOf(tenantId, scenarioId)), 0)
      })
    : () => {}

  return {
    async subscribe(tenantId, scenarioId, afterSeq, deliver, onError) {
      if (closed) throw new Error('the case event bus is closed')
      if (!opts.embedded) await listen()
      const key = keyOf(tenantId, scenarioId)
      let c = cases.get(key)
      if (!c) cases.set(key, c = { tenantId, scenarioId, subs: new Set(), running: false, again: false })
      const sub: Sub = { lastSeq: afterSeq, deliver, onError }
      c.subs.add(sub)
      if (opts.embedded && highWater === undefined) void poll()
      else schedule()
      wake(key)
      return {
        close() {
          const cur = cases.get(key)
          if (!cur) return
          cur.subs.delete(sub)
          if (cur.subs.size === 0) cases.delete(key)
        },
      }
    },
    async close() {
      closed = true
      stopHints()
      if (timer) clearTimeout(timer)
      cases.clear()
      if (unlisten) await unlisten().catch(() => {})
    },
  }
}
