/**
 * Workspace members. Owns the `users` table.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { ROLES, type Role } from '../auth/principal'

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

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/

/** True for a plausible email address (one @, a dotted domain, no spaces or brackets). */
export const isEmail = (s: string) => s.length <= 254 && EMAIL.test(s)

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
