/**
 * Model usage metering and per-workspace hard cost budgets. Each metered model call (a generation
 * step, or a model-backed evaluation's answer to one question) writes one `model_usage` row with
 * its tokens and cost in integer micro-units, priced by
 * SVC_MODEL_PRICE_INPUT_MICRO / SVC_MODEL_PRICE_OUTPUT_MICRO per 1,000 tokens from the `usage` the
 * endpoint reported. A workspace's spend is the sum of its rows; its budget (`cost_budgets`, set by
 * operators) is hard: a run is not started once spend reaches it, and a running one stops (a
 * generation run pauses, resumable; an evaluation ends failed with error_code budget_exceeded). The
 * built-in generator and engine are never metered (they cost nothing). Owns `model_usage` and `cost_budgets`.
 */
import Big from 'big.js'
import type { Tx } from '../db/connect'
import type { Config } from '../config'
import { ProblemError } from '../http/problem'
import { recordUsageEvents } from './ledger'

/** Tokens and cost of some usage. */
export interface UsageTotals { input_tokens: number; output_tokens: number; cost_micro: number }

/** Micro-units as a decimal string ("12.345600" -> "12.3456", whole amounts keep two decimals). */
export function microToDecimal(micro: number | bigint | string): string {
  const s = new Big(String(micro)).div(1_000_000).toFixed(6)
  return s.replace(/(\.\d\d\d*?)0+$/, '$1')
}

/** A decimal string to micro-units (at most 6 decimals). */
export function decimalToMicro(decimal: string): number {
  return Number(new Big(decimal).times(1_000_000).round(0, Big.roundDown).toFixed(0))
}

/** The cost of one call in micro-units: prices are per 1,000 tokens, rounded up to a whole micro-unit. */
export function costMicro(config: Pick<Config, 'modelPriceInputMicro' | 'modelPriceOutputMicro'>, inputTokens: number, outputTokens: number): number {
  return Math.ceil((inputTokens * config.modelPriceInputMicro + outputTokens * config.modelPriceOutputMicro) / 1000)
}

/** Records one metered call in the caller's transaction. */
export async function recordUsage(tx: Tx, tenantId: string, input: { runKind: string; runId: string; step?: number } & UsageTotals): Promise<void> {
  const id = Bun.randomUUIDv7()
  await tx`
    insert into model_usage (tenant_id, id, run_kind, run_id, step, input_tokens, output_tokens, cost_micro)
    values (${tenantId}, ${id}, ${input.runKind}, ${input.runId}, ${input.step ?? null}, ${input.input_tokens}, ${input.output_tokens}, ${input.cost_micro})`
  // The usage ledger's model cost meter, in the same transaction (the source ref matches the migration's backfill).
  await recordUsageEvents(tx, tenantId, [{
    meter: 'model_cost_micro', quantity: input.cost_micro, sourceKind: input.runKind, sourceId: input.runId,
    sourceRef: input.step !== undefined ? `step:${input.step}` : `usage:${id}`,
  }])
}

const totals = (row: { i: string | null; o: string | null; c: string | null } | undefined): UsageTotals =>
  ({ input_tokens: Number(row?.i ?? 0), output_tokens: Number(row?.o ?? 0), cost_micro: Number(row?.c ?? 0) })

/** The usage of one run. */
export async function runUsage(sql: Tx, tenantId: string, runId: string): Promise<UsageTotals> {
  const [row] = await sql<{ i: string | null; o: string | null; c: string | null }[]>`
    select sum(input_tokens) as i, sum(output_tokens) as o, sum(cost_micro) as c from model_usage where tenant_id = ${tenantId} and run_id = ${runId}`
  return totals(row)
}

/** The usage of a whole workspace. */
export async function workspaceUsage(sql: Tx, tenantId: string): Promise<UsageTotals> {
  const [row] = await sql<{ i: string | null; o: string | null; c: string | null }[]>`
    select sum(input_tokens) as i, sum(output_tokens) as o, sum(cost_micro) as c from model_usage where tenant_id = ${tenantId}`
  return totals(row)
}

/** The API shape of usage: tokens, cost_micro and cost as a decimal string. */
export function renderUsage(u: UsageTotals) {
  return { input_tokens: u.input_tokens, output_tokens: u.output_tokens, cost_micro: u.cost_micro, cost: microToDecimal(u.cost_micro) }
}

/** A workspace's budget in micro-units, or null when none is set. */
export async function budgetOf(sql: Tx, tenantId: string): Promise<number | null> {
  const [row] = await sql<{ limit_micro: string }[]>`select limit_micro from cost_budgets where tenant_id = ${tenantId}`
  return row ? Number(row.limit_micro) : null
}

/** Sets (or with null removes) a workspace's hard budget. */
export async function setBudget(sql: Tx, tenantId: string, limitMicro: number | null): Promise<void> {
  if (limitMicro === null) {
    await sql`delete from cost_budgets where tenant_id = ${tenantId}`
    return
  }
  await sql`
    insert into cost_budgets (tenant_id, limit_micro) values (${tenantId}, ${limitMicro})
    on conflict (tenant_id) do update set limit_micro = excluded.limit_micro, updated_at = now()`
}

/** True when the workspace has a budget and its spend has reached it. */
export async function budgetReached(sql: Tx, tenantId: string): Promise<boolean> {
  const limit = await budgetOf(sql, tenantId)
  if (limit === null) return false
  return (await workspaceUsage(sql, tenantId)).cost_micro >= limit
}

/** The 402 of a run that may not start (or resume) because the budget is reached. */
export const budgetExceeded = (detail = "The workspace's cost budget is reached; the run is paused until an operator raises the budget.") =>
  new ProblemError('budget_exceeded', detail)

/** The budget report of a workspace (operators). */
export async function budgetReport(sql: Tx, tenantId: string) {
  const limit = await budgetOf(sql, tenantId)
  const usage = await workspaceUsage(sql, tenantId)
  return {
    tenant_id: tenantId,
    limit_micro: limit,
    limit: limit === null ? null : microToDecimal(limit),
    spent_micro: usage.cost_micro,
    spent: microToDecimal(usage.cost_micro),
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    exceeded: limit !== null && usage.cost_micro >= limit,
  }
}

/** Model usage per workspace in [from, to) (the operator's platform cost figures). */
export async function usageByWorkspace(sql: Tx, from: Date, to: Date): Promise<Map<string, UsageTotals>> {
  const rows = await sql<{ tenant_id: string; i: string | null; o: string | null; c: string | null }[]>`
    select tenant_id, sum(input_tokens) as i, sum(output_tokens) as o, sum(cost_micro) as c from model_usage
    where created_at >= ${from} and created_at < ${to} group by tenant_id`
  return new Map(rows.map((r) => [r.tenant_id, totals(r)]))
}
