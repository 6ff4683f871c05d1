/**
 * The operator surface's figures (outside the /v1 promise): platform cost and usage by workspace
 * for a period (a UTC calendar month: the platform's own books, not a workspace's time zone), and
 * the cache figures of this process (credential lookups, the parser pool).
 */
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { platformUsage } from '../billing/ledger'
import { microToDecimal, usageByWorkspace } from '../billing/budgets'
import { periodBounds } from '../billing/rating'
import { findTenant } from '../workspaces/tenants-store'

/** Model cost and usage by workspace for a period (UTC month), with platform totals. */
export async function platformCosts(sql: Tx, period: string) {
  const { startsAt, endsAt } = await periodBounds(sql, period, 'UTC')
  const usage = await platformUsage(sql, startsAt, endsAt)
  const model = await usageByWorkspace(sql, startsAt, endsAt)
  const ids = [...new Set([...usage.map((u) => u.tenant_id), ...model.keys()])].sort()
  const totals: Record<string, bigint> = {}
  let costMicro = 0
  const workspaces = []
  for (const id of ids) {
    const meters: Record<string, string> = {}
    for (const u of usage.filter((x) => x.tenant_id === id)) {
      meters[u.meter] = u.quantity
      totals[u.meter] = (totals[u.meter] ?? 0n) + BigInt(u.quantity)
    }
    const m = model.get(id) ?? { input_tokens: 0, output_tokens: 0, cost_micro: 0 }
    costMicro += m.cost_micro
    workspaces.push({
      tenant_id: id, slug: (await findTenant(sql, id))?.slug ?? '', usage: meters,
      model_cost_micro: m.cost_micro, model_cost: microToDecimal(m.cost_micro), input_tokens: m.input_tokens, output_tokens: m.output_tokens,
    })
  }
  return {
    period, starts_at: startsAt.toISOString(), ends_at: endsAt.toISOString(), workspaces,
    totals: { usage: Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v.toString()])), model_cost_micro: costMicro, model_cost: microToDecimal(costMicro) },
  }
}

/** This process's cache figures: the credential caches and the parser pool. */
export function cacheFigures(deps: Pick<AppDeps, 'caches' | 'parser'>) {
  return {
    process: { pid: process.pid, uptime_s: Math.floor(process.uptime()) },
    caches: deps.caches.figures(),
    parser_pool: deps.parser.stats(),
  }
}
