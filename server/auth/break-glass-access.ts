/**
 * Reads under break-glass: while a workspace's approved request is open (status `approved`,
 * `access_expires_at` in the future), its operator (a JWT subject of SVC_OPERATOR_SUBJECTS, equal to
 * the request's `operator_sub`) reads that workspace's cases, documents, answers and reports through
 * the normal GET routes (those marked `breakGlass`). Nothing is cached: every read looks the grant up
 * in the database, under a share lock on the request row, and appends `break_glass.read` to the
 * workspace's audit chain naming the request in the same transaction; so a revocation or an expiry
 * ends access on the very next request in every process, and no read escapes the chain.
 *
 * Naming the workspace: the header `SVC-Tenant-Id: <workspace id>`; without it, the operator's one
 * open grant (several open grants in different workspaces need the header: 403 otherwise).
 */
import type { Sql } from '../db/connect'
import { problems, ProblemError } from '../http/problem'
import { appendAudit } from '../workspaces/audit-store'
import type { Principal } from './principal-kinds'

/** One read that break-glass may admit: what is recorded on the audit chain. */
export interface BreakGlassRead {
  /** The SVC-Tenant-Id header as sent (null when absent). */
  tenantHeader: string | null
  method: string
  /** The path read, with its query string if any. */
  path: string
  /** The X-Request-Id of the read. */
  httpRequestId: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

interface GrantRow { tenant_id: string; id: string; access_expires_at: Date; tenant_status: 'active' | 'suspended' }

/**
 * Opens one read under the operator's grant: finds the open grant (of `tenantId`, or the only one),
 * records the read on that workspace's chain and returns the `break_glass` principal; null when the
 * operator holds no open grant there. A suspended workspace's grant resolves without a record (the
 * authorization refuses it with tenant_suspended).
 */
export async function openBreakGlassRead(sql: Sql, sub: string, tenantId: string | null, read: BreakGlassRead): Promise<Principal | null> {
  return sql.begin(async (tx) => {
    const grants = await tx<GrantRow[]>`
      select b.tenant_id, b.id, b.access_expires_at, t.status as tenant_status
      from break_glass_requests b
      join tenants t on t.id = b.tenant_id
      where b.operator_sub = ${sub} and b.status = 'approved' and b.access_expires_at > now()
        ${tenantId !== null ? tx`and b.tenant_id = ${tenantId}` : tx``}
      order by b.access_expires_at desc, b.id desc
      for share of b`
    if (grants.length === 0) return null
    if (new Set(grants.map((g) => g.tenant_id)).size > 1) {
      throw problems.forbidden('You hold break-glass access to more than one workspace: name one in the SVC-Tenant-Id header.')
    }
    // Of several open grants in one workspace, the one that stays open longest.
    const grant = grants[0]!
    const principal: Principal = {
      kind: 'break_glass',
      tenantId: grant.tenant_id,
      tenantStatus: grant.tenant_status,
      sub,
      requestId: grant.id,
      expiresAt: grant.access_expires_at,
    }
    if (grant.tenant_status !== 'active') return principal
    await appendAudit(tx, grant.tenant_id, 'break_glass.read', { kind: 'operator', sub }, {
      request_id: grant.id, method: read.method, path: read.path, http_request_id: read.httpRequestId,
    })
    return principal
  })
}

/**
 * Applies break-glass to a principal resolved for a read that break-glass may admit:
 * - a workspace principal whose own workspace the header names (or no header), unchanged;
 * - an operator (no membership, or a member whose header names another workspace) with an open
 *   grant there: the `break_glass` principal, the read recorded;
 * - an operator without one: unchanged when no workspace was named (the route's rule refuses it),
 *   403 when one was;
 * - anyone else naming another workspace: 403.
 */
export async function withBreakGlass(sql: Sql, p: Principal, read: BreakGlassRead): Promise<Principal> {
  const header = read.tenantHeader?.trim() || null
  if (header !== null && !UUID.test(header)) throw new ProblemError('malformed', 'SVC-Tenant-Id must be a workspace id (a UUID).')
  const named = header?.toLowerCase() ?? null
  const own = 'tenantId' in p ? p.tenantId : null
  if (own !== null && (named === null || named === own)) return p
  const operatorSub = p.kind === 'operator' || (p.kind === 'user' && p.operator) ? p.sub : null
  if (operatorSub === null) {
    if (named !== null) throw problems.forbidden('SVC-Tenant-Id names a workspace this credential cannot read.')
    return p
  }
  const granted = await openBreakGlassRead(sql, operatorSub, named, read)
  if (granted) return granted
  if (named !== null) throw problems.forbidden('You hold no open break-glass access to this workspace.')
  return p
}
