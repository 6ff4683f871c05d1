/**
 * Billing contracts: a workspace's prices for a run of monthly periods, created and ended by
 * operators, read by workspace admins. A contract has a currency (ISO 4217), an effective period
 * (`effective_from` to `effective_until`, whole months, inclusive; open-ended without an end),
 * prices per meter (exact decimal strings, included quantity, optional graduated tiers) and a
 * minimum commitment. Two contracts of a workspace never cover the same month. Creating and ending
 * are recorded in the workspace's audit chain. Owns `billing_contracts`.
 */
import Big from 'big.js'
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { appendAudit, type AuditActor } from '../workspaces/audit-store'
import { lockTenant } from '../workspaces/tenants-store'
import { DECIMAL, isCurrency, isMeter, microOf, minorUnits, METERS, type Meter } from './meters'

/** One graduated tier: billable units up to `up_to` (cumulative; null: the rest) at `unit_price`. */
export interface Tier { up_to: number | null; unit_price: string }

/** The price of one meter: a flat unit price or graduated tiers, after `included_quantity` free units. */
export interface Price { meter: Meter; included_quantity: number; unit_price?: string; tiers?: Tier[] }

/** A row of `billing_contracts`. */
export interface ContractRow {
  tenant_id: string
  id: string
  currency: string
  billing_period: 'monthly'
  effective_from: string
  effective_until: string | null
  prices: Price[]
  minimum_commitment: string
  ended_at: Date | null
  created_by: unknown
  ended_by: unknown
  created_at: Date
  updated_at: Date
}

/** What creating a contract takes (the operator's request body). */
export interface ContractInput {
  currency: string
  effective_from: string
  effective_until?: string | null
  billing_period?: 'monthly'
  prices: { meter: string; unit_price?: string; included_quantity?: number; tiers?: { up_to: number | null; unit_price: string }[] }[]
  minimum_commitment?: string
}

/** A period `YYYY-MM` (a month of the billing calendar). */
export const PERIOD = /^\d{4}-(0[1-9]|1[0-2])$/

const COLUMNS = (sql: Tx) => sql`tenant_id, id, currency, billing_period, to_char(effective_from, 'YYYY-MM') as effective_from,
  to_char(effective_until, 'YYYY-MM') as effective_until, prices, minimum_commitment, ended_at, created_by, ended_by, created_at, updated_at`

/** The API shape of a contract (money as decimal strings with `_micro` twins). */
export function renderContract(row: ContractRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    status: row.ended_at ? 'ended' as const : 'active' as const,
    currency: row.currency,
    billing_period: row.billing_period,
    effective_from: row.effective_from,
    effective_until: row.effective_until,
    prices: row.prices.map((p) => ({
      meter: p.meter,
      included_quantity: p.included_quantity,
      ...(p.unit_price !== undefined ? { unit_price: p.unit_price } : {}),
      ...(p.tiers ? { tiers: p.tiers } : {}),
    })),
    minimum_commitment: new Big(row.minimum_commitment).toFixed(minorUnits(row.currency)),
    minimum_commitment_micro: microOf(row.minimum_commitment),
    created_at: row.created_at.toISOString(),
    ...(row.ended_at ? { ended_at: row.ended_at.toISOString() } : {}),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Index of a month for comparisons: 2026-03 -> 2026 * 12 + 2. */
export const monthIndex = (period: string) => Number(period.slice(0, 4)) * 12 + Number(period.slice(5, 7)) - 1
/** The period of a month index. */
export const periodOf = (index: number) => `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`

/** Checks a request's prices and returns them normalised; 422 naming the field otherwise. */
export function validatePrices(input: ContractInput['prices']): Price[] {
  if (input.length === 0) throw problems.rule('prices must name at least one meter.')
  const seen = new Set<string>()
  return input.map((p, i) => {
    const at = `prices/${i}`
    if (!isMeter(p.meter)) throw problems.rule(`${at}/meter must be one of: ${METERS.join(', ')}.`)
    if (seen.has(p.meter)) throw problems.rule(`${at}/meter: ${p.meter} is priced twice.`)
    seen.add(p.meter)
    if ((p.unit_price === undefined) === (p.tiers === undefined)) throw problems.rule(`${at}: give exactly one of unit_price and tiers.`)
    const included = p.included_quantity ?? 0
    if (!Number.isSafeInteger(included) || included < 0) throw problems.rule(`${at}/included_quantity must be a whole number, 0 or more.`)
    if (p.unit_price !== undefined) {
      if (!DECIMAL.test(p.unit_price)) throw problems.rule(`${at}/unit_price must be a decimal string like "0.25" (at most 12 decimals).`)
      return { meter: p.meter, included_quantity: included, unit_price: p.unit_price }
    }
    const tiers = p.tiers!
    if (tiers.length === 0) throw problems.rule(`${at}/tiers must have at least one tier.`)
    let last = 0
    tiers.forEach((tier, k) => {
      if (!DECIMAL.test(tier.unit_price)) throw problems.rule(`${at}/tiers/${k}/unit_price must be a decimal string like "0.25".`)
      const isLast = k === tiers.length - 1
      if (isLast !== (tier.up_to === null)) throw problems.rule(`${at}/tiers/${k}/up_to: only the last tier is open (null).`)
      if (tier.up_to !== null) {
        if (!Number.isSafeInteger(tier.up_to) || tier.up_to <= last) throw problems.rule(`${at}/tiers/${k}/up_to must be a whole number above the previous tier's.`)
        last = tier.up_to
      }
    })
    return { meter: p.meter, included_quantity: included, tiers: tiers.map((t) => ({ up_to: t.up_to, unit_price: t.unit_price })) }
  })
}

/** Reads one contract of a workspace, or null. */
export async function findContract(sql: Tx, tenantId: string, id: string): Promise<ContractRow | null> {
  const [row] = await sql<ContractRow[]>`select ${COLUMNS(sql)} from billing_contracts where tenant_id = ${tenantId} and id = ${id}`
  return row ?? null
}

/** A page of a workspace's contracts, newest first (fetch limit + 1). */
export async function listContracts(sql: Tx, tenantId: string, after: string | null, limit: number): Promise<ContractRow[]> {
  return sql<ContractRow[]>`
    select ${COLUMNS(sql)} from billing_contracts
    where tenant_id = ${tenantId} ${after !== null ? sql`and id < ${after}` : sql``}
    order by id desc limit ${limit + 1}`
}

/** The contract covering a period of a workspace, or null. */
export async function contractForPeriod(sql: Tx, tenantId: string, period: string): Promise<ContractRow | null> {
  const first = `${period}-01`
  const [row] = await sql<ContractRow[]>`
    select ${COLUMNS(sql)} from billing_contracts
    where tenant_id = ${tenantId} and effective_from <= ${first}::date
      and (effective_until is null or effective_until >= ${first}::date)
    order by effective_from desc limit 1`
  return row ?? null
}

/** Months a row covers as [from, until] indexes (until Infinity when open-ended). */
const span = (row: Pick<ContractRow, 'effective_from' | 'effective_until'>) =>
  [monthIndex(row.effective_from), row.effective_until === null ? Infinity : monthIndex(row.effective_until)] as const

/**
 * The month-range overlap rule: refuses (422 naming the field) a span that shares a month with
 * another contract of the workspace. Call with the workspace locked (see createContract).
 */
async function refuseOverlap(tx: Tx, tenantId: string, from: number, until: number, exceptId?: string): Promise<void> {
  const rows = await tx<ContractRow[]>`select ${COLUMNS(tx)} from billing_contracts where tenant_id = ${tenantId}`
  for (const other of rows) {
    if (other.id === exceptId) continue
    const [oFrom, oUntil] = span(other)
    if (oUntil < oFrom || until < from) continue // a contract ended before it began covers nothing
    if (from <= oUntil && oFrom <= until) {
      const field = from >= oFrom ? 'effective_from' : 'effective_until'
      const range = `${other.effective_from} to ${other.effective_until ?? 'open-ended'}`
      throw problems.rule(`${field}: the contract would overlap billing contract ${other.id} (${range}); end that one first.`)
    }
  }
}

/** Creates a contract after checking every field and the overlap rule (422 naming the field). */
export async function createContract(tx: Tx, tenantId: string, input: ContractInput, actor: AuditActor): Promise<ContractRow> {
  if (!isCurrency(input.currency)) throw problems.rule('currency must be an ISO 4217 code like "EUR".')
  if (!PERIOD.test(input.effective_from)) throw problems.rule('effective_from must be a period YYYY-MM.')
  const until = input.effective_until ?? null
  if (until !== null && !PERIOD.test(until)) throw problems.rule('effective_until must be a period YYYY-MM (the last month billed) or null.')
  if (until !== null && monthIndex(until) < monthIndex(input.effective_from)) throw problems.rule('effective_until must not be before effective_from.')
  if ((input.billing_period ?? 'monthly') !== 'monthly') throw problems.rule('billing_period must be monthly.')
  const minimum = input.minimum_commitment ?? '0'
  if (!DECIMAL.test(minimum)) throw problems.rule('minimum_commitment must be a decimal string like "100.00".')
  if (new Big(minimum).round(minorUnits(input.currency), Big.roundDown).cmp(new Big(minimum)) !== 0) {
    throw problems.rule(`minimum_commitment has more decimals than ${input.currency} has minor units (${minorUnits(input.currency)}).`)
  }
  const prices = validatePrices(input.prices)
  // Concurrent creates of one workspace queue here, so the overlap check sees every committed contract.
  await lockTenant(tx, tenantId)
  await refuseOverlap(tx, tenantId, monthIndex(input.effective_from), until === null ? Infinity : monthIndex(until))
  const [row] = await tx<ContractRow[]>`
    insert into billing_contracts (tenant_id, id, currency, effective_from, effective_until, prices, minimum_commitment, created_by)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.currency}, ${`${input.effective_from}-01`}::date,
            ${until === null ? null : `${until}-01`}::date, ${tx.json(prices as never)}, ${minimum}, ${tx.json(actor as never)})
    returning ${COLUMNS(tx)}`
  await appendAudit(tx, tenantId, 'billing.contract.created', actor, { contract_id: row!.id, currency: row!.currency, effective_from: row!.effective_from, effective_until: row!.effective_until })
  return row!
}

/**
 * Ends a contract: its last billed month becomes `until` (at most its current end; the month before
 * its start voids it). 409 when it has ended already.
 */
export async function endContract(tx: Tx, tenantId: string, id: string, until: string, actor: AuditActor): Promise<ContractRow | null> {
  const [current] = await tx<ContractRow[]>`select ${COLUMNS(tx)} from billing_contracts where tenant_id = ${tenantId} and id = ${id} for update`
  if (!current) return null
  if (current.ended_at) throw problems.conflict('The contract has ended already.')
  if (!PERIOD.test(until)) throw problems.rule('effective_until must be a period YYYY-MM.')
  const [from, end] = span(current)
  const u = monthIndex(until)
  if (u < from - 1) throw problems.rule(`effective_until must be ${periodOf(from - 1)} (void the contract) or later.`)
  if (u > end) throw problems.rule(`effective_until must not extend the contract past ${current.effective_until}.`)
  const [row] = await tx<ContractRow[]>`
    update billing_contracts set effective_until = ${`${until}-01`}::date, ended_at = now(), ended_by = ${tx.json(actor as never)}, updated_at = now()
    where tenant_id = ${tenantId} and id = ${id}
    returning ${COLUMNS(tx)}`
  await appendAudit(tx, tenantId, 'billing.contract.ended', actor, { contract_id: id, effective_until: until, previous_effective_until: current.effective_until })
  return row!
}
