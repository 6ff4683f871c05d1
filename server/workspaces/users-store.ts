/**
 * The store of workspace members: owns the `users` table. Membership is convergent on the email
 * address; a change of role or status never leaves a workspace without an active admin.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { ROLES, type Role } from '../auth/principal'
import type { PageWindow } from '../http/pagination'
import { invalidateCredentials } from '../auth/credential-cache'
import { lockTenant } from './tenants-store'
import { charLength } from '../http/json-text'
import { explainPattern } from '../http/pattern-messages'
import { MEMBER_EMAIL_PATTERN } from '../../schemas/patterns'

/** A row of `users`. */
export interface UserRow {
  id: string
  email: string
  sub: string | null
  role: Role
  status: 'active' | 'deactivated'
  created_at: Date
  updated_at: Date
}

/** The API shape of a member. */
export function renderUser(row: UserRow) {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

const EMAIL = new RegExp(MEMBER_EMAIL_PATTERN)

/** True for a plausible email address (one @, a dotted domain, no spaces or brackets), at most 254 characters. */
export const isEmail = (s: string) => charLength(s) <= 254 && EMAIL.test(s)
explainPattern(MEMBER_EMAIL_PATTERN, () => null, 'must be an email address')

/**
 * Makes `sub` an active member of a workspace with a role; convergent on the email address (an
 * existing member of that address is re-bound, re-roled and re-activated).
 */
export async function addMember(sql: Tx, tenantId: string, input: { email: string; sub: string; role: string }): Promise<UserRow> {
  if (!isEmail(input.email)) throw problems.rule('email must be an email address.')
  if (!(ROLES as readonly string[]).includes(input.role)) throw problems.rule(`role must be one of: ${ROLES.join(', ')}.`)
  if (input.sub.trim() === '') throw problems.rule('sub must not be empty.')
  const [bound] = await sql`select tenant_id, lower(email) as email from users where sub = ${input.sub}`
  if (bound && (bound.tenant_id !== tenantId || bound.email !== input.email.toLowerCase())) {
    throw problems.conflict('This subject is already bound to another membership.')
  }
  const [row] = await sql<UserRow[]>`
    insert into users (tenant_id, id, email, sub, role)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.email}, ${input.sub}, ${input.role})
    on conflict (tenant_id, lower(email)) do update
      set sub = excluded.sub, role = excluded.role, status = 'active', updated_at = now()
    returning id, email, sub, role, status, created_at, updated_at`
  return row!
}

const USER_COLUMNS = (sql: Tx) => sql`id, email, sub, role, status, created_at, updated_at`

/** Reads one member of a workspace, or null. */
export async function findUser(sql: Tx, tenantId: string, userId: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`select ${USER_COLUMNS(sql)} from users where tenant_id = ${tenantId} and id = ${userId}`
  return row ?? null
}

/**
 * Changes a member's role or status. Refuses (409) a change that would leave the workspace without
 * an active admin. Deactivation takes effect at once: a deactivated member's token is refused.
 */
export async function updateMember(tx: Tx, tenantId: string, userId: string, change: { role?: Role; status?: UserRow['status'] }) {
  // Serialise changes of one workspace's roster so two admins cannot demote each other at once.
  await lockTenant(tx, tenantId)
  const [before] = await tx<UserRow[]>`select ${USER_COLUMNS(tx)} from users where tenant_id = ${tenantId} and id = ${userId} for update`
  if (!before) throw problems.notFound('user')
  const role = change.role ?? before.role
  const status = change.status ?? before.status
  if (before.role === 'admin' && before.status === 'active' && (role !== 'admin' || status !== 'active')) {
    const [others] = await tx<{ n: number }[]>`
      select count(*)::int as n from users
      where tenant_id = ${tenantId} and role = 'admin' and status = 'active' and id <> ${userId}`
    if (others!.n === 0) throw problems.conflict('The workspace would have no active admin; make someone else admin first.')
  }
  const [after] = await tx<UserRow[]>`
    update users set role = ${role}, status = ${status}, updated_at = now()
    where tenant_id = ${tenantId} and id = ${userId}
    returning ${USER_COLUMNS(tx)}`
  invalidateCredentials()
  return { before, after: after! }
}

/** One page of a workspace's roster, newest first, optionally of one status (rows of `window`). */
export async function listUsers(sql: Tx, tenantId: string, status: UserRow['status'] | undefined, window: PageWindow): Promise<UserRow[]> {
  return sql<UserRow[]>`
    select ${USER_COLUMNS(sql)} from users
    where tenant_id = ${tenantId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc
    limit ${window.fetch}`
}

/** The subject of the active member of a workspace with this address (case-insensitive), if any. */
export async function activeMemberByEmail(sql: Tx, tenantId: string, email: string): Promise<{ sub: string | null } | null> {
  const [member] = await sql<{ sub: string | null }[]>`
    select sub from users where tenant_id = ${tenantId} and lower(email) = lower(${email}) and status = 'active'`
  return member ?? null
}
