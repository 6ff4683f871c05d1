/**
 * The append-only per-case event log. Every state change of a case's resources (document status
 * now; evaluation and report status later) appends one event in the same transaction, so the log
 * holds exactly the committed changes. `seq` counts from 1 per case and is the SSE event id.
 */
import type postgres from 'postgres'
import type { Sql, Tx } from '../db/connect'

/** The PostgreSQL channel a committed event is announced on (payload "tenant:scenario:seq"). */
export const CASE_EVENTS_CHANNEL = 'svc_case_events'

/** What a caller appends. `type` is like `document.status`; `data` is the JSON payload. */
export interface CaseEventInput {
  tenantId: string
  scenarioId: string
  type: string
  data: Record<string, unknown>
}

/** A stored event. */
export interface CaseEvent {
  seq: number
  type: string
  data: Record<string, unknown>
  createdAt: Date
}

type HintListener = (tenantId: string, scenarioId: string) => void
const hintListeners = new Set<HintListener>()

/**
 * Registers an in-process listener told (before commit) that a case got an event; the embedded
 * database's bus uses it to look for the committed row at once. Returns the unregister function.
 */
export function onCaseEventHint(listener: HintListener): () => void {
  hintListeners.add(listener)
  return () => hintListeners.delete(listener)
}

/**
 * Appends an event to a case's log in the caller's transaction and returns its sequence number.
 * The per-case counter row stays locked until the caller commits, so events of one case become
 * visible in sequence order; the NOTIFY is delivered by PostgreSQL only if the caller commits.
 */
export async function appendCaseEvent(tx: Tx, input: CaseEventInput): Promise<number> {
  const [seq] = await appendCaseEvents(tx, input.tenantId, input.scenarioId, [input])
  return seq!
}

/**
 * Appends events to one case's log in one statement (counter, event rows, NOTIFY each) and returns
 * their sequence numbers: consecutive, in the order given (the counter moves by their number). One
 * statement instead of three round trips an event; an email's or a ZIP's 40 members are one too,
 * not 40 one after another (about 10 ms).
 */
export async function appendCaseEvents(tx: Tx, tenantId: string, scenarioId: string, events: readonly Pick<CaseEventInput, 'type' | 'data'>[]): Promise<number[]> {
  if (events.length === 0) return []
  const n = events.length
  const rows = await tx<{ seq: string }[]>`
    with counter as (
      insert into case_event_counters (tenant_id, scenario_id, last_seq)
      values (${tenantId}, ${scenarioId}, ${n})
      on conflict (tenant_id, scenario_id) do update set last_seq = case_event_counters.last_seq + ${n}
      returning last_seq),
    event as (
      insert into case_events (tenant_id, scenario_id, seq, type, data)
      select ${tenantId}, ${scenarioId}, counter.last_seq - ${n} + e.n, e.type, e.data::jsonb
      from counter, unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => JSON.stringify(e.data))}::text[]) with ordinality as e(type, data, n)
      returning seq)
    select seq, pg_notify(${CASE_EVENTS_CHANNEL}, ${`${tenantId}:${scenarioId}:`}::text || seq::text) from (select seq from event order by seq) announced`
  for (const listener of hintListeners) listener(tenantId, scenarioId)
  return rows.map((r) => Number(r.seq)).sort((a, b) => a - b)
}

/**
 * appendCaseEvent as parts of a one-statement create (OneStatementCreate.more): CTEs that bump the
 * case's counter and insert the event where `when` holds, the NOTIFY as an expression for the
 * statement's final select, and the in-process hint to give once the statement succeeded. The
 * counter row stays locked until the statement commits, as in appendCaseEvent.
 */
export function caseEventParts(sql: Sql | Tx, input: CaseEventInput) {
  return {
    ctes: (when: postgres.PendingQuery<postgres.Row[]>) => sql`,
      case_event_seq as (
        insert into case_event_counters (tenant_id, scenario_id, last_seq)
        select ${input.tenantId}, ${input.scenarioId}, 1 where ${when}
        on conflict (tenant_id, scenario_id) do update set last_seq = case_event_counters.last_seq + 1
        returning last_seq),
      case_event as (
        insert into case_events (tenant_id, scenario_id, seq, type, data)
        select ${input.tenantId}, ${input.scenarioId}, last_seq, ${input.type}, ${sql.json(input.data as never)} from case_event_seq
        returning seq)`,
    finalExpr: sql`(select count(pg_notify(${CASE_EVENTS_CHANNEL}, ${`${input.tenantId}:${input.scenarioId}:`}::text || seq::text)) from case_event)`,
    after: () => { for (const listener of hintListeners) listener(input.tenantId, input.scenarioId) },
  }
}

/** The events of a case after `afterSeq`, oldest first, at most `limit`. */
export async function readCaseEvents(sql: Tx, tenantId: string, scenarioId: string, afterSeq: number, limit = 500): Promise<CaseEvent[]> {
  const rows = await sql<{ seq: string; type: string; data: Record<string, unknown>; created_at: Date }[]>`
    select seq, type, data, created_at
    from case_events
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and seq > ${afterSeq}
    order by seq
    limit ${limit}`
  return rows.map((r) => ({ seq: Number(r.seq), type: r.type, data: r.data, createdAt: r.created_at }))
}
