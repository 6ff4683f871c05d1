/**
 * The usage ledger: append-only usage events `{meter, quantity, occurred_at, source}`. Each event
 * is written in the same transaction as the state change that causes it, and (meter, source kind,
 * source id, source ref) is unique, so a job that runs again after a crash or a retry adds nothing.
 * Owns `usage_events`.
 */
import type { Tx } from '../db/connect'
import type { Meter } from './meters'

/** One usage event to record. `sourceRef` tells apart several non-retry events of one source. */
export interface UsageEventInput {
  meter: Meter
  quantity: number | bigint
  sourceKind: string
  sourceId: string
  sourceRef?: string
  occurredAt?: Date
}

/**
 * Records usage events in the caller's transaction (the one that changes the state the usage comes
 * from); an event already recorded for the same meter and source is left as it is. Zero quantities
 * record nothing. Returns how many events were new.
 */
export async function recordUsageEvents(tx: Tx, tenantId: string, events: readonly UsageEventInput[]): Promise<number> {
  let added = 0
  for (const e of events) {
    if (BigInt(e.quantity) <= 0n) continue
    const rows = await tx`
      insert into usage_events (tenant_id, id, meter, quantity, occurred_at, source_kind, source_id, source_ref)
      values (${tenantId}, ${Bun.randomUUIDv7()}, ${e.meter}, ${String(e.quantity)}, ${e.occurredAt ?? new Date()},
              ${e.sourceKind}, ${e.sourceId}, ${e.sourceRef ?? ''})
      on conflict (tenant_id, meter, source_kind, source_id, source_ref) do nothing
      returning id`
    added += rows.length
  }
  return added
}

/** Per-meter sums of a workspace's usage in [from, to): quantity as a decimal string (bigint-safe). */
export async function usageByMeter(sql: Tx, tenantId: string, from: Date, to: Date): Promise<Map<string, string>> {
  const rows = await sql<{ meter: string; quantity: string }[]>`
    select meter, sum(quantity)::text as quantity from usage_events
    where tenant_id = ${tenantId} and occurred_at >= ${from} and occurred_at < ${to}
    group by meter`
  return new Map(rows.map((r) => [r.meter, r.quantity]))
}

/** Per-workspace, per-meter sums over every workspace in [from, to) (the operator's platform figures). */
export async function platformUsage(sql: Tx, from: Date, to: Date): Promise<{ tenant_id: string; meter: string; quantity: string; events: number }[]> {
  return sql<{ tenant_id: string; meter: string; quantity: string; events: number }[]>`
    select tenant_id, meter, sum(quantity)::text as quantity, count(*)::int as events from usage_events
    where occurred_at >= ${from} and occurred_at < ${to}
    group by tenant_id, meter
    order by tenant_id, meter`
}

/** The events of one source (tests and operators checking a task's metering). */
export async function eventsOfSource(sql: Tx, tenantId: string, sourceKind: string, sourceId: string) {
  return sql<{ meter: string; quantity: string; source_ref: string; occurred_at: Date }[]>`
    select meter, quantity::text as quantity, source_ref, occurred_at from usage_events
    where tenant_id = ${tenantId} and source_kind = ${sourceKind} and source_id = ${sourceId}
    order by meter, source_ref`
}
