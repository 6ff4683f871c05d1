/**
 * Reconciliation findings: listing (filtered by status, period, kind, reconciliation) and the two
 * human decisions on a finding, acknowledge and resolve, each with a note and each recorded in the
 * workspace's audit chain in the same transaction. open -> acknowledged -> resolved, or open ->
 * resolved; anything else is 409. The rows are written by server/billing/reconciliation.ts.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { appendAudit, type AuditActor } from '../workspaces/audit-store'
import type { FindingKind } from './reconciliation'

/** A row of `billing_reconciliation_findings`. */
export interface FindingRow {
  tenant_id: string; id: string; reconciliation_id: string; period: string; kind: FindingKind
  meter: string | null; measure: 'quantity' | 'unit_price' | 'amount'
  expected: string; actual: string; difference: string; currency: string | null
  status: 'open' | 'acknowledged' | 'resolved'; note: string | null
  acknowledged_at: Date | null; acknowledged_by: AuditActor | null; resolved_at: Date | null; resolved_by: AuditActor | null
  created_at: Date; updated_at: Date
}

/** The API shape of a finding. */
export function renderFinding(row: FindingRow) {
  return {
    id: row.id,
    reconciliation_id: row.reconciliation_id,
    period: row.period,
    kind: row.kind,
    meter: row.meter,
    measure: row.measure,
    expected: row.expected,
    actual: row.actual,
    difference: row.difference,
    ...(row.currency ? { currency: row.currency } : {}),
    status: row.status,
    ...(row.note !== null ? { note: row.note } : {}),
    ...(row.acknowledged_at ? { acknowledged_at: row.acknowledged_at.toISOString(), acknowledged_by: row.acknowledged_by! } : {}),
    ...(row.resolved_at ? { resolved_at: row.resolved_at.toISOString(), resolved_by: row.resolved_by! } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Filters of the findings list. */
export interface FindingFilter { status?: string; period?: string; kind?: string; reconciliation_id?: string }

/** A page of a workspace's findings, newest first (fetch limit + 1). */
export async function listFindings(sql: Tx, tenantId: string, filter: FindingFilter, after: string | null, limit: number): Promise<FindingRow[]> {
  return sql<FindingRow[]>`
    select * from billing_reconciliation_findings
    where tenant_id = ${tenantId}
      ${after !== null ? sql`and id < ${after}` : sql``}
      ${filter.status !== undefined ? sql`and status = ${filter.status}` : sql``}
      ${filter.period !== undefined ? sql`and period = ${filter.period}` : sql``}
      ${filter.kind !== undefined ? sql`and kind = ${filter.kind}` : sql``}
      ${filter.reconciliation_id !== undefined ? sql`and reconciliation_id = ${filter.reconciliation_id}` : sql``}
    order by id desc limit ${limit + 1}`
}

/** Reads one finding, or null. */
export async function findFinding(sql: Tx, tenantId: string, id: string, lock = false): Promise<FindingRow | null> {
  const [row] = await sql<FindingRow[]>`
    select * from billing_reconciliation_findings where tenant_id = ${tenantId} and id = ${id} ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/**
 * Acknowledges or resolves a finding with a note, and appends `billing.finding.acknowledged` /
 * `billing.finding.resolved` to the audit chain in the same transaction. Null when absent.
 */
export async function decideFinding(tx: Tx, tenantId: string, id: string, decision: 'acknowledge' | 'resolve', note: string, actor: AuditActor): Promise<FindingRow | null> {
  const current = await findFinding(tx, tenantId, id, true)
  if (!current) return null
  if (note.trim() === '') throw problems.rule('note must contain a non-whitespace character.')
  if (current.status === 'resolved') throw problems.conflict('The finding is resolved already.')
  if (decision === 'acknowledge' && current.status !== 'open') throw problems.conflict(`The finding is ${current.status}; only an open finding can be acknowledged.`)
  const [row] = decision === 'acknowledge'
    ? await tx<FindingRow[]>`
        update billing_reconciliation_findings set status = 'acknowledged', note = ${note}, acknowledged_at = now(),
          acknowledged_by = ${tx.json(actor as never)}, updated_at = now()
        where tenant_id = ${tenantId} and id = ${id} returning *`
    : await tx<FindingRow[]>`
        update billing_reconciliation_findings set status = 'resolved', note = ${note}, resolved_at = now(),
          resolved_by = ${tx.json(actor as never)}, updated_at = now()
        where tenant_id = ${tenantId} and id = ${id} returning *`
  await appendAudit(tx, tenantId, decision === 'acknowledge' ? 'billing.finding.acknowledged' : 'billing.finding.resolved', actor, {
    finding_id: id, reconciliation_id: current.reconciliation_id, period: current.period, kind: current.kind,
    meter: current.meter, previous_status: current.status, status: row!.status, note,
  })
  return row!
}
