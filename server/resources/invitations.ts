/**
 * Invitation routes: how a person becomes a member. A human-only surface:
 * an operator invites a workspace's first administrator, the workspace's admins invite everyone.
 * Posting is convergent (at most one pending invitation per address; a repeat returns it and sends
 * no second email). The invitee gets an email with a single-use acceptance token, stored only as
 * its SHA-256 and valid 7 days; `POST /v1/invitations/accept {token}` with the invitee's own user
 * token binds that subject as an active member.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl } from '../auth/access'
import type { Principal, Role } from '../auth/principal'
import { ProblemError, problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import { Invitation, InvitationAccept, InvitationAccepted, InvitationCreate, InvitationListQuery, InvitationParams, TenantParams } from '../../schemas/user'
import { findTenant, renderTenant, type TenantRow } from '../workspaces/tenants-store'
import { activeMemberByEmail, addMember, isEmail, renderUser } from '../workspaces/users-store'
import { actorOf, appendAudit } from '../workspaces/audit-store'
import {
  expireLapsedInvitations, findPendingInvitation, insertInvitation, listInvitations, lockInvitation, lockInvitationByToken,
  markInvitationAccepted, markInvitationMailed, mintInvitationToken, reclaimInvitationMail, releaseInvitationMail,
  renderInvitation, setInvitationRevoked, type InvitationRow,
} from '../workspaces/invitations-store'
import { formatInZone, workspaceTimeZone } from '../local-time'

/**
 * The workspace an inviter may manage: operators any workspace, an admin only their own (another
 * workspace is 404, as if absent). A suspended workspace is 403 tenant_suspended.
 */
async function managedTenant(sql: Tx, p: Principal, tenantId: string): Promise<TenantRow> {
  const asOperator = p.kind === 'operator' || (p.kind === 'user' && p.operator)
  if (!asOperator && !(p.kind === 'user' && p.role === 'admin' && p.tenantId === tenantId)) throw problems.notFound('workspace')
  const tenant = await findTenant(sql, tenantId)
  if (!tenant) throw problems.notFound('workspace')
  if (tenant.status !== 'active') throw new ProblemError('tenant_suspended', 'This workspace is suspended.')
  return tenant
}

/**
 * Refuses (409) an invitation for the address of an active member: accepting it would re-bind that
 * membership to another subject. A deactivated member may be invited back.
 */
async function refuseActiveMember(tx: Tx, tenantId: string, email: string, exceptSub?: string): Promise<void> {
  const member = await activeMemberByEmail(tx, tenantId, email)
  if (member && member.sub !== exceptSub) throw problems.conflict('This address belongs to an active member of the workspace.')
}

/** True when the principal acts as an operator (not as the workspace's own admin) in `tenantId`. */
const actsAsOperator = (p: Principal, tenantId: string) =>
  p.kind === 'operator' || (p.kind === 'user' && p.operator && !(p.role === 'admin' && p.tenantId === tenantId))

/** The invitation email: the token in the body (never in a URL of the API); a UI link carries it in a fragment. */
function invitationMail(deps: AppDeps, tenant: TenantRow, row: InvitationRow, token: string, timeZone: string) {
  const ui = deps.config.uiBaseUrl ? `${deps.config.uiBaseUrl}/invitations/accept#token=${token}` : undefined
  const text = [
    `You are invited to join the workspace "${tenant.name}" as ${row.role}.`,
    '',
    `Your acceptance token (single use, valid until ${formatInZone(row.expires_at, timeZone)}):`,
    '',
    token,
    '',
    ...(ui ? ['Accept in the web application:', ui, ''] : []),
    'Or accept through the API: sign in, then send',
    `POST ${deps.config.baseUrl}/v1/invitations/accept`,
    'with your access token in the Authorization header and the JSON body {"token": "<the token above>"}.',
    '',
    'If you did not expect this invitation, ignore this email.',
  ].join('\n')
  return { to: row.email, subject: `Invitation to ${tenant.name}`, text }
}

/** Invitation routes: create, list and revoke per workspace; accept with the token. */
export function invitationRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  const inviters = { roles: ['admin'], operator: true, humanOnly: true } as const

  return new Elysia({ name: 'invitations' })
    .use(accessControl(deps.authenticate))
    .post('/v1/tenants/:tenantId/invitations', async ({ principal, params, body, set }) => {
      if (!isEmail(body.email)) throw problems.schema([{ pointer: '/email', message: 'must be an email address' }])
      // Without a role it is an admin invitation: the endpoint invites a workspace's first administrator.
      const role: Role = body.role ?? 'admin'
      const tenant = await managedTenant(sql, principal, params.tenantId)
      if (actsAsOperator(principal, tenant.id) && role !== 'admin') {
        throw problems.forbidden("Operators invite a workspace's administrators; its admins invite everyone else.")
      }
      const minted = mintInvitationToken()
      const outcome = await sql.begin(async (tx) => {
        await refuseActiveMember(tx, tenant.id, body.email)
        await expireLapsedInvitations(tx, tenant.id, body.email)
        const created = await insertInvitation(tx, tenant.id, { email: body.email, role, tokenHash: minted.hash, invitedBy: actorOf(principal) })
        if (created) {
          await appendAudit(tx, tenant.id, 'invitation.created', actorOf(principal), { invitation_id: created.id, email: created.email, role: created.role })
          return { row: created, created: true, send: true }
        }
        const pending = await findPendingInvitation(tx, tenant.id, body.email)
        if (!pending) throw problems.conflict('The invitation is being changed by another request; retry.')
        if (pending.role !== role) {
          throw problems.conflict(`A pending invitation for this address has the role ${pending.role}; revoke it first to invite with another role.`)
        }
        // An earlier email that was never sent (its sender failed) is sent now, with a fresh token.
        return { row: pending, created: false, send: await reclaimInvitationMail(tx, tenant.id, pending.id, minted.hash) }
      })
      if (outcome.send) {
        try {
          await deps.mailer.send(invitationMail(deps, tenant, outcome.row, minted.token, await workspaceTimeZone(sql, tenant.id)))
        } catch (e) {
          await releaseInvitationMail(sql, tenant.id, outcome.row.id)
          deps.log.error('invitation email failed', { invitation_id: outcome.row.id, error: (e as Error).message })
          throw new ProblemError('unavailable', 'The invitation is saved but its email could not be sent; post the same invitation again to retry.', { retryAfterSeconds: 30 })
        }
        await markInvitationMailed(sql, tenant.id, outcome.row.id)
      }
      set.status = outcome.created ? 201 : 200
      set.headers.location = `/v1/tenants/${tenant.id}/invitations/${outcome.row.id}`
      return renderInvitation(outcome.row)
    }, {
      access: inviters,
      params: TenantParams,
      body: InvitationCreate,
      detail: {
        summary: 'Invite a person (operators: the first administrator; admins: anyone); human-only',
        description: 'Without `role` the invitation is for an admin. '
          + 'Convergent: at most one pending invitation per address; a repeat returns it (200) and sends no second email. '
          + 'The invitee receives the single-use acceptance token by email; it is valid 7 days.',
        tags: ['Invitations'],
        responses: responses({ 201: Invitation, 200: Invitation }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']),
      },
    })
    .get('/v1/tenants/:tenantId/invitations', async ({ principal, params, query }) => {
      const tenant = await managedTenant(sql, principal, params.tenantId)
      const q = readQuery(InvitationListQuery, query)
      const list = cursors.open(q, cursorScope(tenant.id, `invitations|${tenant.id}|${q.status ?? ''}`))
      await expireLapsedInvitations(sql, tenant.id)
      return list.page(await listInvitations(sql, tenant.id, q.status, list), (r) => r.id, renderInvitation)
    }, {
      access: inviters,
      params: TenantParams,
      detail: withQuery(InvitationListQuery, { summary: "A workspace's invitations (human-only)", tags: ['Invitations'], responses: responses({ 200: PageOf(Invitation) }, [...PATH_PROBLEMS, ...LIST_PROBLEMS]) }),
    })
    .post('/v1/tenants/:tenantId/invitations/:invitationId/revoke', async ({ principal, params }) => {
      const tenant = await managedTenant(sql, principal, params.tenantId)
      return sql.begin(async (tx) => {
        const row = await lockInvitation(tx, tenant.id, params.invitationId)
        if (!row) throw problems.notFound('invitation')
        if (row.status === 'revoked') return renderInvitation(row)
        if (row.status !== 'pending') throw problems.conflict(`The invitation is ${row.status}; only a pending invitation can be revoked.`)
        const revoked = await setInvitationRevoked(tx, tenant.id, row.id)
        await appendAudit(tx, tenant.id, 'invitation.revoked', actorOf(principal), { invitation_id: row.id, email: row.email })
        return renderInvitation(revoked)
      })
    }, {
      access: inviters,
      params: InvitationParams,
      detail: { summary: 'Revoke a pending invitation (human-only)', tags: ['Invitations'], responses: responses({ 200: Invitation }, [...PATH_PROBLEMS, 'conflict']) },
    })
    .post('/v1/invitations/accept', async ({ principal, body }) => {
      if (principal.kind !== 'person' && principal.kind !== 'operator') {
        throw problems.conflict('This subject is already a member of a workspace.')
      }
      return sql.begin(async (tx) => {
        const row = await lockInvitationByToken(tx, body.token)
        if (!row || row.status !== 'pending' || row.expires_at.getTime() <= Date.now()) {
          throw problems.notFound('pending invitation for this token')
        }
        const tenant = (await findTenant(tx, row.tenant_id))!
        if (tenant.status !== 'active') throw new ProblemError('tenant_suspended', 'This workspace is suspended.')
        // A bound workspace admits only tokens that state its organization (the same 401 as any failure).
        if (tenant.organization_id !== null && principal.organization !== tenant.organization_id) throw problems.unauthorized()
        await refuseActiveMember(tx, tenant.id, row.email, principal.sub)
        const user = await addMember(tx, tenant.id, { email: row.email, sub: principal.sub, role: row.role })
        await markInvitationAccepted(tx, tenant.id, row.id, user.id)
        await appendAudit(tx, tenant.id, 'invitation.accepted', { kind: 'user', id: user.id }, { invitation_id: row.id, user_id: user.id, role: user.role })
        return { tenant: renderTenant(tenant), user: renderUser(user) }
      })
    }, {
      access: { invitee: true, humanOnly: true },
      body: InvitationAccept,
      detail: {
        summary: 'Accept an invitation with its token (the invitee, signed in; human-only)',
        description: "Binds the caller's subject as an active member with the invited role. The token is single use; an unknown, used, revoked or expired token is 404.",
        tags: ['Invitations'],
        responses: responses({ 200: InvitationAccepted }, [...BODY_PROBLEMS, 'not_found', 'conflict']),
      },
    })
}
