/**
 * Suspending and resuming a workspace (`svc tenant suspend|resume`): the status change, the
 * credential cache and the audit entry in one transaction.
 */
import type { Sql } from '../db/connect'
import { invalidateCredentials } from '../auth/credential-cache'
import { lockTenantBySlug, updateTenantStatus, type TenantRow } from './tenants-store'
import { appendAudit, type AuditActor } from './audit-store'

/**
 * Suspends or resumes a workspace (`svc tenant suspend|resume`); every call of a suspended
 * workspace is then 403 tenant_suspended. A change is recorded on the workspace's audit chain;
 * setting the status it already has changes nothing.
 */
export async function setTenantStatus(sql: Sql, slug: string, status: TenantRow['status'], actor: AuditActor): Promise<{ tenant: TenantRow; changed: boolean } | null> {
  return sql.begin(async (tx) => {
    const current = await lockTenantBySlug(tx, slug)
    if (!current) return null
    if (current.status === status) return { tenant: current, changed: false }
    const row = await updateTenantStatus(tx, current.id, status)
    invalidateCredentials()
    await appendAudit(tx, current.id, status === 'suspended' ? 'tenant.suspended' : 'tenant.resumed', actor, {})
    return { tenant: row, changed: true }
  })
}
