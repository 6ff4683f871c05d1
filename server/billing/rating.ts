/**
 * Rated usage: a period's ledger quantities priced by the contract that covers the period. Per
 * meter: quantity, included (free) units, billable units, and the amount (flat unit price or
 * graduated tiers over the billable units), computed exactly and rounded ONCE per line to the
 * currency's minor units (half away from zero). The period's subtotal is the sum of the rounded
 * lines; a minimum commitment above it adds a shortfall line; the total is their sum. Periods are
 * calendar months in the workspace's `time_zone`.
 */
import Big from 'big.js'
import type { Tx } from '../db/connect'
import { readTenantSettings } from '../workspaces/settings-store'
import { contractForPeriod, type ContractRow, type Price } from './contracts'
import { usageByMeter } from './ledger'
import { METERS, minorUnits, money, microOf, type Meter } from './meters'

/** The instants a period spans in a time zone: [starts_at, ends_at). */
export async function periodBounds(sql: Tx, period: string, timeZone: string): Promise<{ startsAt: Date; endsAt: Date }> {
  const [row] = await sql<{ s: Date; e: Date }[]>`
    select (${`${period}-01 00:00:00`}::timestamp at time zone ${timeZone}) as s,
           ((${`${period}-01 00:00:00`}::timestamp + interval '1 month') at time zone ${timeZone}) as e`
  return { startsAt: row!.s, endsAt: row!.e }
}

/** One tier's share of a line. */
export interface TierShare { up_to: number | null; quantity: string; unit_price: string }

/** The exact (unrounded) amount of `quantity` units of a price, with the included units taken off first. */
export function rateExact(price: Price, quantity: string): { included: Big; billable: Big; exact: Big; tiers?: TierShare[] } {
  const q = new Big(quantity)
  const included = q.lt(price.included_quantity) ? q : new Big(price.included_quantity)
  const billable = q.minus(included)
  if (price.unit_price !== undefined) return { included, billable, exact: billable.times(price.unit_price) }
  let remaining = billable
  let previous = new Big(0)
  let exact = new Big(0)
  const tiers: TierShare[] = []
  for (const tier of price.tiers!) {
    const room = tier.up_to === null ? remaining : new Big(tier.up_to).minus(previous)
    const take = remaining.lt(room) ? remaining : room
    exact = exact.plus(take.times(tier.unit_price))
    tiers.push({ up_to: tier.up_to, quantity: take.toFixed(0), unit_price: tier.unit_price })
    remaining = remaining.minus(take)
    if (tier.up_to !== null) previous = new Big(tier.up_to)
  }
  return { included, billable, exact, tiers }
}

/** One line of rated usage. */
export interface RatedLine {
  meter: Meter
  quantity: string
  included: string
  billable: string
  priced: boolean
  unit_price?: string
  tiers?: TierShare[]
  amount?: string
  amount_micro?: number
}

/** A period's rated usage (the body of GET /v1/billing/usage). */
export interface RatedUsage {
  period: string
  time_zone: string
  starts_at: string
  ends_at: string
  contract_id: string | null
  currency: string | null
  lines: RatedLine[]
  subtotal?: string
  subtotal_micro?: number
  minimum_commitment?: string
  minimum_commitment_micro?: number
  minimum_commitment_shortfall?: string
  minimum_commitment_shortfall_micro?: number
  total?: string
  total_micro?: number
}

/**
 * Prices the quantities of a period under a contract (or shows quantities only without one). Pure:
 * the rule of docs/billing.md in code, used by the usage route and by reconciliation alike.
 */
export function rate(quantities: Map<string, string>, contract: Pick<ContractRow, 'currency' | 'prices' | 'minimum_commitment'> | null) {
  const lines: RatedLine[] = []
  let subtotal = new Big(0)
  for (const meter of METERS) {
    const quantity = quantities.get(meter) ?? '0'
    const price = contract?.prices.find((p) => p.meter === meter)
    if (!contract || !price) {
      // Unpriced usage is shown (amount 0 under a contract), unpriced meters without usage are not.
      if (quantity === '0') continue
      lines.push({ meter, quantity, included: '0', billable: quantity, priced: false, ...(contract ? money(new Big(0), contract.currency) : {}) })
      continue
    }
    const r = rateExact(price, quantity)
    const m = money(r.exact, contract.currency)
    subtotal = subtotal.plus(m.amount)
    lines.push({
      meter, quantity, included: r.included.toFixed(0), billable: r.billable.toFixed(0), priced: true,
      ...(price.unit_price !== undefined ? { unit_price: price.unit_price } : { tiers: r.tiers }),
      ...m,
    })
  }
  if (!contract) return { lines }
  const dp = minorUnits(contract.currency)
  const minimum = new Big(contract.minimum_commitment)
  const shortfall = minimum.gt(subtotal) ? minimum.minus(subtotal) : new Big(0)
  const total = subtotal.plus(shortfall)
  return {
    lines,
    subtotal: subtotal.toFixed(dp), subtotal_micro: microOf(subtotal),
    minimum_commitment: minimum.toFixed(dp), minimum_commitment_micro: microOf(minimum),
    minimum_commitment_shortfall: shortfall.toFixed(dp), minimum_commitment_shortfall_micro: microOf(shortfall),
    total: total.toFixed(dp), total_micro: microOf(total),
  }
}

/** The rated usage of a workspace's period (`YYYY-MM`, in its time zone). */
export async function ratedUsage(sql: Tx, tenantId: string, period: string): Promise<RatedUsage> {
  const timeZone = (await readTenantSettings(sql, tenantId)).time_zone || 'UTC'
  const { startsAt, endsAt } = await periodBounds(sql, period, timeZone)
  const contract = await contractForPeriod(sql, tenantId, period)
  const quantities = await usageByMeter(sql, tenantId, startsAt, endsAt)
  return {
    period, time_zone: timeZone, starts_at: startsAt.toISOString(), ends_at: endsAt.toISOString(),
    contract_id: contract?.id ?? null, currency: contract?.currency ?? null,
    ...rate(quantities, contract),
  }
}

/** The current period (`YYYY-MM`) of a workspace, in its time zone. */
export async function currentPeriod(sql: Tx, tenantId: string): Promise<string> {
  const timeZone = (await readTenantSettings(sql, tenantId)).time_zone || 'UTC'
  const [row] = await sql<{ p: string }[]>`select to_char(now() at time zone ${timeZone}, 'YYYY-MM') as p`
  return row!.p
}
