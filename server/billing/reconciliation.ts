/**
 * Billing reconciliation: an external billing system's invoice lines for one period, compared with
 * the contract that covers the period and the usage ledger. The comparison runs as the
 * `billing_reconciliation` task (a job), records one finding per disagreement and ends with the
 * task's notification, like every task. Findings are then acknowledged or resolved by workspace
 * admins (human-only, audited). Owns `billing_reconciliations` and `billing_reconciliation_findings`.
 */
import type { LinkBases } from '../notifications/envelope'
import Big from 'big.js'
import type { Tx } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import type { AppDeps } from '../deps'
import { finishTask } from '../notifications/finish'
import { problems } from '../http/problem'
import { readTenantSettings } from '../workspaces/settings-store'
import { contractForPeriod, type ContractRow } from './contracts'
import { usageByMeter } from './ledger'
import { isCurrency, isMeter, METERS, minorUnits } from './meters'
import { periodBounds, rate } from './rating'

/** The job kind name (also the task kind of its notifications). */
export const BILLING_RECONCILIATION = 'billing_reconciliation'

/** The billing_reconciliation job's type (its payload names the row the job works on). */
export const BillingReconciliationJob = jobType({
  name: BILLING_RECONCILIATION,
  payload: Type.Object({ reconciliationId: Type.String() }),
  tenantScoped: true,
})

/** The kinds of finding, each with meter (or none), expected, actual and difference. */
export const FINDING_KINDS = [
  'quantity_mismatch', 'unit_price_mismatch', 'usage_not_invoiced', 'invoiced_without_usage',
  'usage_outside_contract', 'minimum_commitment_shortfall',
] as const
export type FindingKind = (typeof FINDING_KINDS)[number]

/** One line of the external invoice. */
export interface InvoiceLine {
  kind?: 'usage' | 'minimum_commitment'
  meter?: string
  quantity?: number
  unit_price?: string
  amount?: string
  description?: string
}

/** The external invoice of one period. */
export interface Invoice { currency?: string; lines: InvoiceLine[] }

/** A finding before it is stored. */
export interface FindingInput {
  kind: FindingKind
  meter: string | null
  measure: 'quantity' | 'unit_price' | 'amount'
  expected: string
  actual: string
  difference: string
  currency: string | null
}

function diff(kind: FindingKind, meter: string | null, measure: FindingInput['measure'], expected: Big, actual: Big, currency: string | null): FindingInput {
  // Amounts show the currency's minor units; quantities and unit prices as exact as they are.
  const show = (b: Big) => (measure === 'amount' && currency && isCurrency(currency) ? b.toFixed(minorUnits(currency)) : b.toFixed())
  return { kind, meter, measure, expected: show(expected), actual: show(actual), difference: show(actual.minus(expected)), currency }
}

/**
 * Compares an invoice with a period's contract and ledger quantities; pure. The rules (also in
 * docs/billing.md): a meter with usage and no price (or no contract) is `usage_outside_contract`;
 * a priced meter with billable usage and no invoice line is `usage_not_invoiced`; an invoiced
 * quantity where the ledger has none is `invoiced_without_usage`; both present and different is
 * `quantity_mismatch`; a line's unit price other than the contract's flat unit price is
 * `unit_price_mismatch`; a minimum-commitment shortfall invoiced at another amount than the rated
 * shortfall is `minimum_commitment_shortfall`.
 */
export function compareInvoice(invoice: Invoice, contract: Pick<ContractRow, 'currency' | 'prices' | 'minimum_commitment'> | null, quantities: Map<string, string>): FindingInput[] {
  const currency = contract?.currency ?? invoice.currency ?? null
  const findings: FindingInput[] = []
  const usageLines = invoice.lines.filter((l) => (l.kind ?? 'usage') === 'usage')
  const invoiced = new Map<string, { quantity: Big; lines: InvoiceLine[] }>()
  for (const line of usageLines) {
    const meter = line.meter ?? ''
    const entry = invoiced.get(meter) ?? { quantity: new Big(0), lines: [] }
    entry.quantity = entry.quantity.plus(line.quantity ?? 0)
    entry.lines.push(line)
    invoiced.set(meter, entry)
  }
  const rated = rate(quantities, contract)
  const zero = new Big(0)
  for (const meter of METERS) {
    const used = new Big(quantities.get(meter) ?? '0')
    const price = contract?.prices.find((p) => p.meter === meter)
    const billed = invoiced.get(meter)
    if (!price) {
      if (used.gt(0)) findings.push(diff('usage_outside_contract', meter, 'quantity', zero, used, currency))
      else if (billed && billed.quantity.gt(0)) findings.push(diff('invoiced_without_usage', meter, 'quantity', zero, billed.quantity, currency))
      continue
    }
    const line = rated.lines.find((l) => l.meter === meter)
    const billable = new Big(line?.billable ?? '0')
    if (!billed) {
      if (billable.gt(0)) findings.push(diff('usage_not_invoiced', meter, 'quantity', used, zero, currency))
      continue
    }
    if (used.eq(0) && billed.quantity.gt(0)) findings.push(diff('invoiced_without_usage', meter, 'quantity', zero, billed.quantity, currency))
    else if (!used.eq(billed.quantity)) findings.push(diff('quantity_mismatch', meter, 'quantity', used, billed.quantity, currency))
    if (price.unit_price !== undefined) {
      for (const l of billed.lines) {
        if (l.unit_price !== undefined && !new Big(l.unit_price).eq(price.unit_price)) {
          findings.push(diff('unit_price_mismatch', meter, 'unit_price', new Big(price.unit_price), new Big(l.unit_price), currency))
        }
      }
    }
  }
  for (const [meter, billed] of invoiced) {
    if (!isMeter(meter) && billed.quantity.gt(0)) findings.push(diff('invoiced_without_usage', meter || null, 'quantity', zero, billed.quantity, currency))
  }
  if (contract) {
    const expected = new Big(rated.minimum_commitment_shortfall ?? '0')
    const actual = invoice.lines.filter((l) => l.kind === 'minimum_commitment').reduce((sum, l) => sum.plus(l.amount ?? '0'), new Big(0))
    if (!expected.eq(actual)) findings.push(diff('minimum_commitment_shortfall', null, 'amount', expected, actual, currency))
  }
  return findings
}

/** A row of `billing_reconciliations`. */
export interface ReconciliationRow {
  tenant_id: string; id: string; period: string; status: 'awaiting_upload' | 'queued' | 'running' | 'succeeded' | 'failed'
  /** The invoice lines: given as JSON, or read from the uploaded CSV by the task (null until then). */
  invoice: Invoice | null; invoice_currency: string | null; finding_count: number | null; error_detail: string | null
  filename: string | null; content_type: string; size_bytes: string | number; checksum_sha256: string | null
  blob_key: string | null; bytes_verified: boolean
  finished_at: Date | null; created_at: Date; updated_at: Date
}

/** The resource path of a reconciliation (links.resource). */
export const reconciliationPath = (id: string) => `/v1/billing/reconciliations/${id}`

/** The API shape of a reconciliation. */
export function renderReconciliation(row: ReconciliationRow) {
  return {
    id: row.id,
    period: row.period,
    status: row.status,
    invoice_source: row.filename !== null ? 'csv' as const : 'json' as const,
    ...(row.filename !== null ? { filename: row.filename } : {}),
    ...(row.invoice ? { invoice_lines: row.invoice.lines.length } : {}),
    ...((row.invoice?.currency ?? row.invoice_currency) ? { invoice_currency: (row.invoice?.currency ?? row.invoice_currency)! } : {}),
    ...(row.finding_count !== null ? { finding_count: row.finding_count } : {}),
    ...(row.error_detail !== null ? { error: row.error_detail } : {}),
    created_at: row.created_at.toISOString(),
    ...(row.finished_at ? { finished_at: row.finished_at.toISOString() } : {}),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Checks an invoice's lines (422 naming the field). */
export function validateInvoice(invoice: Invoice): void {
  invoice.lines.forEach((l, i) => {
    const kind = l.kind ?? 'usage'
    if (kind === 'usage' && (l.meter === undefined || l.quantity === undefined)) throw problems.rule(`invoice/lines/${i}: a usage line needs meter and quantity.`)
    if (kind === 'minimum_commitment' && l.amount === undefined) throw problems.rule(`invoice/lines/${i}/amount is required on a minimum_commitment line.`)
  })
}

/** Starts a reconciliation in the caller's transaction: its row and its job. */
export async function startReconciliation(tx: Tx, tenantId: string, input: { period: string; invoice: Invoice }, actor: unknown): Promise<ReconciliationRow> {
  validateInvoice(input.invoice)
  const [row] = await tx<ReconciliationRow[]>`
    insert into billing_reconciliations (tenant_id, id, period, invoice, created_by)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.period}, ${tx.json(input.invoice as never)}, ${tx.json(actor as never)})
    returning *`
  await enqueue(tx, BillingReconciliationJob, { tenantId, payload: { reconciliationId: row!.id } })
  return row!
}

/** Reads one reconciliation, or null; `lock` holds it for update. */
export async function findReconciliation(sql: Tx, tenantId: string, id: string, lock = false): Promise<ReconciliationRow | null> {
  const [row] = await sql<ReconciliationRow[]>`
    select * from billing_reconciliations where tenant_id = ${tenantId} and id = ${id} ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** A page of reconciliations, newest first (fetch limit + 1). */
export async function listReconciliations(sql: Tx, tenantId: string, after: string | null, limit: number): Promise<ReconciliationRow[]> {
  return sql<ReconciliationRow[]>`
    select * from billing_reconciliations where tenant_id = ${tenantId} ${after !== null ? sql`and id < ${after}` : sql``}
    order by id desc limit ${limit + 1}`
}

/** Ends a reconciliation in the caller's transaction: findings (or the reason), status, the task's notification. */
export async function endReconciliation(tx: Tx, links: LinkBases, row: ReconciliationRow, outcome: { findings: FindingInput[] } | { reason: string }): Promise<void> {
  const ok = 'findings' in outcome
  if (ok) {
    for (const f of outcome.findings) {
      await tx`
        insert into billing_reconciliation_findings (tenant_id, id, reconciliation_id, period, kind, meter, measure, expected, actual, difference, currency)
        values (${row.tenant_id}, ${Bun.randomUUIDv7()}, ${row.id}, ${row.period}, ${f.kind}, ${f.meter}, ${f.measure}, ${f.expected}, ${f.actual}, ${f.difference}, ${f.currency})`
    }
  }
  await tx`
    update billing_reconciliations set status = ${ok ? 'succeeded' : 'failed'}, finding_count = ${ok ? outcome.findings.length : null},
      error_detail = ${ok ? null : outcome.reason}, finished_at = now(), updated_at = now()
    where tenant_id = ${row.tenant_id} and id = ${row.id}`
  await finishTask(tx, { links,
    tenantId: row.tenant_id, taskKind: BILLING_RECONCILIATION, taskId: row.id, resourcePath: reconciliationPath(row.id),
    result: ok ? 'succeeded' : 'failed', ...(ok ? {} : { reason: outcome.reason }),
  })
}

/** Reads an uploaded invoice's lines outside any transaction (the CSV's bytes from the blob store). */
export type InvoiceReader = (row: ReconciliationRow, deps: AppDeps) => Promise<Invoice | { error: string }>

/**
 * The job kind (registered in server/job-kinds.ts): compares and records findings in one transaction with the task's end.
 * An uploaded CSV invoice is read in `prepare` (outside any transaction) by `readInvoice`.
 */
export function billingReconciliationJobKind(readInvoice: InvoiceReader) {
  return defineJobKind({
    ...BillingReconciliationJob,
    maxAttempts: 3,
    async prepare(job, deps) {
      const row = await findReconciliation(deps.sql, job.tenantId, job.payload.reconciliationId)
      return row && row.invoice === null && row.status === 'queued' ? readInvoice(row, deps) : null
    },
    async handler(tx, job, deps) {
      const row = await findReconciliation(tx, job.tenantId, job.payload.reconciliationId, true)
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      if (row.invoice === null) {
        const read = job.prepared
        if (!read) throw new Error('the uploaded invoice was not read')
        if ('error' in read) {
          await endReconciliation(tx, deps.links, row, { reason: read.error })
          return
        }
        await tx`update billing_reconciliations set invoice = ${tx.json(read as never)} where tenant_id = ${row.tenant_id} and id = ${row.id}`
        row.invoice = read
      }
      const timeZone = (await readTenantSettings(tx, row.tenant_id)).time_zone || 'UTC'
      const { startsAt, endsAt } = await periodBounds(tx, row.period, timeZone)
      const contract = await contractForPeriod(tx, row.tenant_id, row.period)
      if (contract && row.invoice!.currency && row.invoice!.currency !== contract.currency) {
        await endReconciliation(tx, deps.links, row, { reason: `the invoice is in ${row.invoice!.currency}, the contract in ${contract.currency}` })
        return
      }
      await endReconciliation(tx, deps.links, row, { findings: compareInvoice(row.invoice!, contract, await usageByMeter(tx, row.tenant_id, startsAt, endsAt)) })
    },
    async onGiveUp(tx, job, deps) {
      const row = await findReconciliation(tx, job.tenantId, job.payload.reconciliationId, true)
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      await endReconciliation(tx, deps.links, row, { reason: 'the reconciliation could not be completed' })
    },
  })
}
