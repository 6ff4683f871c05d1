/**
 * The store of break-glass: a platform operator's request for access to a workspace. Owns the
 * `break_glass_requests` table. When the workspace's `break_glass_require_tenant_approval` is true
 * a request starts `requested` and waits for one of its admins to approve or deny it; otherwise it
 * is approved when raised. Approval opens an access window of `duration_minutes`, during which the
 * operator reads the workspace's cases, documents, answers and reports through the normal GET
 * routes (server/auth/break-glass-access.ts); an admin (or `svc break-glass revoke`) may revoke the
 * window, which ends it at once. Poll-only: no notification is sent; the workspace discovers
 * requests with GET /v1/break-glass/requests?status=requested. Every step, and every read under a
 * window, is recorded on the workspace's audit chain.
 */
import type { Sql, Tx } from '../db/connect'
import { problems } from '../http/problem'
import type { PageWindow } from '../http/pagination'
import { appendAudit, type AuditActor } from './audit-store'
import { readTenantSettings } from './settings-store'

/** A row of `break_glass_requests`. */
export interface BreakGlassRow {
  tenant_id: string
  id: string
  operator_sub: string
  reason: string
  duration_minutes: number
  approval_required: boolean
  status: 'requested' | 'approved' | 'denied' | 'revoked'
  decided_by_user_id: string | null
  decided_at: Date | null
  decision_note: string | null
  access_expires_at: Date | null
  revoked_at: Date | null
  revoked_by_user_id: string | null
  created_at: Date
}

/** The API shape of a request. */
export function renderBreakGlass(row: BreakGlassRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    operator_sub: row.operator_sub,
    reason: row.reason,
    duration_minutes: row.duration_minutes,
    approval_required: row.approval_required,
    status: row.status,
    access_active: row.status === 'approved' && row.access_expires_at !== null && row.access_expires_at.getTime() > Date.now(),
    ...(row.access_expires_at ? { access_expires_at: row.access_expires_at.toISOString() } : {}),
    ...(row.decided_at ? { decided_at: row.decided_at.toISOString() } : {}),
    ...(row.decided_by_user_id ? { decided_by_user_id: row.decided_by_user_id } : {}),
    ...(row.decision_note !== null ? { decision_note: row.decision_note } : {}),
    ...(row.revoked_at ? { revoked_at: row.revoked_at.toISOString() } : {}),
    ...(row.revoked_by_user_id ? { revoked_by_user_id: row.revoked_by_user_id } : {}),
    created_at: row.created_at.toISOString(),
  }
}

/**
 * Raises a request for `operatorSub` (routes and `svc break-glass request`). Approved at once
 * unless the workspace requires its own approval.
 */
export async function raiseBreakGlass(sql: Sql, tenantId: string, input: { operatorSub: string; reason: string; durationMinutes: number }, actor: AuditActor): Promise<BreakGlassRow> {
  if (input.reason.trim() === '') throw problems.rule('reason must contain a non-whitespace character.')
  return sql.begin(async (tx) => {
    const { break_glass_require_tenant_approval: required } = await readTenantSettings(tx, tenantId)
    const [row] = await tx<BreakGlassRow[]>`
      insert into break_glass_requests (tenant_id, id, operator_sub, reason, duration_minutes, approval_required, status, decided_at, access_expires_at)
      values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.operatorSub}, ${input.reason}, ${input.durationMinutes}, ${required},
              ${required ? 'requested' : 'approved'},
              ${required ? null : tx`now()`}, ${required ? null : tx`now() + make_interval(mins => ${input.durationMinutes})`})
      returning *`
    await appendAudit(tx, tenantId, 'break_glass.requested', actor, {
      request_id: row!.id, operator_sub: input.operatorSub, reason: input.reason, duration_minutes: input.durationMinutes,
      approval_required: required, status: row!.status,
    })
    return row!
  })
}

/** True while `operatorSub` holds approved, unexpired break-glass access to the workspace. */
export async function hasBreakGlassAccess(sql: Tx, tenantId: string, operatorSub: string): Promise<boolean> {
  const [row] = await sql`
    select 1 from break_glass_requests
    where tenant_id = ${tenantId} and operator_sub = ${operatorSub} and status = 'approved' and access_expires_at > now()
    limit 1`
  return row !== undefined
}

/**
 * Ends an open access window at once (status `revoked`): the next read under it, in any process,
 * finds no grant. 404 for another workspace's request, 409 unless the window is open.
 */
export async function revokeBreakGlass(sql: Sql, tenantId: string, requestId: string, actor: AuditActor, userId: string | null): Promise<BreakGlassRow> {
  return sql.begin(async (tx) => {
    const [current] = await tx<(BreakGlassRow & { open: boolean })[]>`
      select *, (status = 'approved' and access_expires_at > now()) as open
      from break_glass_requests where tenant_id = ${tenantId} and id = ${requestId} for update`
    if (!current) throw problems.notFound('break-glass request')
    if (!current.open) {
      throw problems.conflict(current.status === 'approved'
        ? 'The access window has already lapsed.'
        : `The request is ${current.status}; only an open access window can be revoked.`)
    }
    const [row] = await tx<BreakGlassRow[]>`
      update break_glass_requests set status = 'revoked', revoked_at = now(), revoked_by_user_id = ${userId}, updated_at = now()
      where tenant_id = ${tenantId} and id = ${requestId}
      returning *`
    await appendAudit(tx, tenantId, 'break_glass.revoked', actor, { request_id: requestId, operator_sub: current.operator_sub })
    return row!
  })
}

/** One request of a workspace; 404 when absent or another workspace's. */
export async function findBreakGlassRequest(sql: Tx, tenantId: string, id: string): Promise<BreakGlassRow> {
  const [row] = await sql<BreakGlassRow[]>`select * from break_glass_requests where tenant_id = ${tenantId} and id = ${id}`
  if (!row) throw problems.notFound('break-glass request')
  return row
}

/** One page of a workspace's requests, newest first, optionally of one status (rows of `window`). */
export async function listBreakGlassRequests(sql: Tx, tenantId: string, status: BreakGlassRow['status'] | undefined, window: PageWindow): Promise<BreakGlassRow[]> {
  return sql<BreakGlassRow[]>`
    select * from break_glass_requests
    where tenant_id = ${tenantId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc
    limit ${window.fetch}`
}

/**
 * Approves or denies a requested access (a workspace admin's decision): approval opens the window
 * of the requested duration. 404 for another workspace's request, 409 unless it is `requested`.
 */
export async function decideBreakGlass(
  sql: Sql, tenantId: string, requestId: string, status: 'approved' | 'denied',
  decision: { userId: string | null; note: string | undefined }, actor: AuditActor,
): Promise<BreakGlassRow> {
  return sql.begin(async (tx) => {
    const [current] = await tx<BreakGlassRow[]>`
      select * from break_glass_requests where tenant_id = ${tenantId} and id = ${requestId} for update`
    if (!current) throw problems.notFound('break-glass request')
    if (current.status !== 'requested') throw problems.conflict(`The request is ${current.status}; only a requested one can be approved or denied.`)
    const [row] = await tx<BreakGlassRow[]>`
      update break_glass_requests set
        status = ${status}, decided_at = now(), decided_by_user_id = ${decision.userId}, decision_note = ${decision.note ?? null},
        access_expires_at = ${status === 'approved' ? tx`now() + make_interval(mins => ${current.duration_minutes})` : null},
        updated_at = now()
      where tenant_id = ${tenantId} and id = ${current.id}
      returning *`
    await appendAudit(tx, tenantId, `break_glass.${status}`, actor, { request_id: current.id, operator_sub: current.operator_sub, ...(decision.note ? { note: decision.note } : {}) })
    return row!
  })
}

/** Every request of a workspace, newest first, optionally of one status (`svc break-glass list`). */
export async function allBreakGlassRequests(sql: Tx, tenantId: string, status: BreakGlassRow['status'] | undefined): Promise<BreakGlassRow[]> {
  return sql<BreakGlassRow[]>`
    select * from break_glass_requests
    where tenant_id = ${tenantId} ${status ? sql`and status = ${status}` : sql``}
    order by id desc`
}
