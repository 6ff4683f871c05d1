/**
 * The case event stream: the append-only per-case log (log.ts), its fan-out (bus.ts) and the SSE
 * streams (sse.ts). Later issues append with `appendCaseEvent(tx, {tenantId, scenarioId, type, data})`
 * in the transaction of their state change.
 */
import type { Sql } from '../db/connect'
import { createCaseEventBus, type CaseEventBus } from './bus'
import { createCaseEventStreams, type CaseEventStreams } from './sse'

export { appendCaseEvent, readCaseEvents, CASE_EVENTS_CHANNEL, type CaseEvent, type CaseEventInput } from './log'
export { formatEvent, KEEP_ALIVE_MS, type CaseEventStreams } from './sse'
export type { CaseEventBus, CaseEventSubscription } from './bus'

/** The case events of one process: the bus and its streams. */
export interface CaseEvents {
  bus: CaseEventBus
  streams: CaseEventStreams
  /** Ends every stream cleanly and stops listening (server drain). */
  close(): Promise<void>
}

/** Creates the case events of one process over its database. */
export function createCaseEvents(opts: { sql: Sql; listenSql?: Sql; embedded: boolean; keepAliveMs?: number; pollMs?: number }): CaseEvents {
  const bus = createCaseEventBus({ sql: opts.sql, listenSql: opts.listenSql, embedded: opts.embedded, pollMs: opts.pollMs })
  const streams = createCaseEventStreams(bus, opts.keepAliveMs)
  return {
    bus,
    streams,
    async close() {
      await streams.drain()
      await bus.close()
    },
  }
}
