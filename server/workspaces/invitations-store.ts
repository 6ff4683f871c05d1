/**
 * The store of invitations: owns the `invitations` table. At most one pending invitation per
 * address; the acceptance token is stored only as its SHA-256 and is valid 7 days; the email of an
 * invitation is claimed by one sender at a time (a claim older than a minute is free again).
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Tx } from '../db/connect'
import type { Role } from '../auth/principal'
import type { PageWindow } from '../http/pagination'
import type { AuditActor } from './audit-store'

/** How long an invitation can be accepted. */
export const INVITATION_TTL_DAYS = 7
/** A sender that has not finished within this many seconds no longer holds the email. */
export const MAIL_CLAIM_SECONDS = 60

/** A row of `invitations` (never the token hash). */
export interface InvitationRow {
  tenant_id: string
  id: string
  email: string
  role: Role
  status: 'pending' | 'accepted' | 'revoked' | 'expired'
  expires_at: Date
  mailed_at: Date | null
  accepted_at: Date | null
  created_at: Date
}

const COLUMNS = (sql: Tx) => sql`tenant_id, id, email, role, status, expires_at, mailed_at, accepted_at, created_at`

/** The API shape of an invitation. */
export function renderInvitation(row: InvitationRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    email: row.email,
    role: row.role,
    status: row.status,
    expires_at: row.expires_at.toISOString(),
    ...(row.accepted_at ? { accepted_at: row.accepted_at.toISOString() } : {}),
    created_at: row.created_at.toISOString(),
  }
}

/** A fresh acceptance token and its stored hash. */
export function mintInvitationToken(): { token: string; hash: Buffer } {
  const token = `inv_${randomBytes(32).toString('base64url')}`
  return { token, hash: hashToken(token) }
}

const hashToken = (token: string) => createHash('sha256').update(token).digest()

/** Marks a workspace's lapsed pending invitations expired (of one address when `email` is given). */
export async function expireLapsedInvitations(sql: Tx, tenantId: string, email?: string): Promise<void> {
  await sql`
    update invitations set status = 'expired', updated_at = now()
    where tenant_id = ${tenantId} ${email !== undefined ? sql`and lower(email) = lower(${email})` : sql``}
      and status = 'pending' and expires_at <= now()`
}

/**
 * Inserts a pending invitation whose email the caller now holds (claimed), or null when the address
 * already has a pending one.
 */
export async function insertInvitation(
  tx: Tx, tenantId: string, input: { email: string; role: Role; tokenHash: Buffer; invitedBy: AuditActor },
): Promise<InvitationRow | null> {
  const [created] = await tx<InvitationRow[]>`
    insert into invitations (tenant_id, id, email, role, token_hash, expires_at, invited_by, mail_claimed_at)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.email}, ${input.role}, ${input.tokenHash},
            now() + make_interval(days => ${INVITATION_TTL_DAYS}), ${tx.json(input.invitedBy as never)}, now())
    on conflict (tenant_id, lower(email)) where status = 'pending' do nothing
    returning ${COLUMNS(tx)}`
  return created ?? null
}

/** The pending invitation of an address in a workspace, or null. */
export async function findPendingInvitation(tx: Tx, tenantId: string, email: string): Promise<InvitationRow | null> {
  const [pending] = await tx<InvitationRow[]>`
    select ${COLUMNS(tx)} from invitations
    where tenant_id = ${tenantId} and lower(email) = lower(${email}) and status = 'pending'`
  return pending ?? null
}

/**
 * Claims the email of an invitation never mailed (no sender holds it, or its sender's claim is
 * stale) with a fresh token; true when the caller now holds it and should send.
 */
export async function reclaimInvitationMail(tx: Tx, tenantId: string, id: string, tokenHash: Buffer): Promise<boolean> {
  const [reclaimed] = await tx`
    update invitations set token_hash = ${tokenHash}, mail_claimed_at = now(), updated_at = now()
    where tenant_id = ${tenantId} and id = ${id} and mailed_at is null
      and (mail_claimed_at is null or mail_claimed_at < now() - make_interval(secs => ${MAIL_CLAIM_SECONDS}))
    returning id`
  return reclaimed !== undefined
}

/** Gives up the claim on an invitation's email (its send failed), so the next post sends it. */
export async function releaseInvitationMail(sql: Tx, tenantId: string, id: string): Promise<void> {
  await sql`update invitations set mail_claimed_at = null where tenant_id = ${tenantId} and id = ${id}`
}

/** Records that an invitation's email was sent. */
export async function markInvitationMailed(sql: Tx, tenantId: string, id: string): Promise<void> {
  await sql`update invitations set mailed_at = now() where tenant_id = ${tenantId} and id = ${id}`
}

/** One page of a workspace's invitations, newest first, optionally of one status (rows of `window`). */
export async function listInvitations(sql: Tx, tenantId: string, status: InvitationRow['status'] | undefined, window: PageWindow): Promise<InvitationRow[]> {
  return sql<InvitationRow[]>`
    select ${COLUMNS(sql)} from invitations
    where tenant_id = ${tenantId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc
    limit ${window.fetch}`
}

/** Reads one invitation of a workspace and locks it until the transaction ends, or null. */
export async function lockInvitation(tx: Tx, tenantId: string, id: string): Promise<InvitationRow | null> {
  const [row] = await tx<InvitationRow[]>`
    select ${COLUMNS(tx)} from invitations where tenant_id = ${tenantId} and id = ${id} for update`
  return row ?? null
}

/** Sets an invitation revoked and returns it. */
export async function setInvitationRevoked(tx: Tx, tenantId: string, id: string): Promise<InvitationRow> {
  const [revoked] = await tx<InvitationRow[]>`
    update invitations set status = 'revoked', updated_at = now()
    where tenant_id = ${tenantId} and id = ${id}
    returning ${COLUMNS(tx)}`
  return revoked!
}

/** The invitation of an acceptance token (by its hash), locked until the transaction ends, or null. */
export async function lockInvitationByToken(tx: Tx, token: string): Promise<InvitationRow | null> {
  const [row] = await tx<InvitationRow[]>`
    select ${COLUMNS(tx)} from invitations where token_hash = ${hashToken(token)} for update`
  return row ?? null
}

/** Records an invitation accepted by the member `userId`. */
export async function markInvitationAccepted(tx: Tx, tenantId: string, id: string, userId: string): Promise<void> {
  await tx`
    update invitations set status = 'accepted', accepted_at = now(), accepted_user_id = ${userId}, updated_at = now()
    where tenant_id = ${tenantId} and id = ${id}`
}
