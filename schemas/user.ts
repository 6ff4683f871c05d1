/**
 * Members (the user roster) and invitations: both human-only surfaces.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, named, pageQuery } from './common'
import { Tenant } from './tenant'
import { MEMBER_EMAIL_PATTERN } from './patterns'

const Role = t.Union([t.Literal('admin'), t.Literal('reviewer'), t.Literal('underwriter'), t.Literal('viewer')])

/** A workspace member. */
export const User = named('User', t.Object({
  id: Uuid,
  email: t.String(),
  role: Role,
  status: t.Union([t.Literal('active'), t.Literal('deactivated')]),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** Path parameters naming a member. */
export const UserParams = t.Object({ userId: Uuid })

/** PATCH /v1/users/{userId}: change the role, deactivate or reactivate. */
export const UserUpdate = t.Object({
  role: t.Optional(Role),
  status: t.Optional(t.Union([t.Literal('active'), t.Literal('deactivated')])),
})

/** GET /v1/users query. */
export const UserListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('deactivated')])),
})

/** POST /v1/tenants/{tenantId}/invitations body. */
export const InvitationCreate = t.Object({
  email: t.String({ minLength: 3, maxLength: 254, pattern: MEMBER_EMAIL_PATTERN, description: 'The invitee; the acceptance token is mailed here.' }),
  role: t.Optional(t.Union(Role.anyOf, { description: "The role the invitee gets; absent: admin (the endpoint invites a workspace's first administrator)." })),
})

/** An invitation (never its token). */
export const Invitation = named('Invitation', t.Object({
  id: Uuid,
  tenant_id: Uuid,
  email: t.String(),
  role: Role,
  status: t.Union([t.Literal('pending'), t.Literal('accepted'), t.Literal('revoked'), t.Literal('expired')]),
  expires_at: Timestamp,
  accepted_at: t.Optional(Timestamp),
  created_at: Timestamp,
}))

/** Path parameters naming a workspace. */
export const TenantParams = t.Object({ tenantId: Uuid })
/** Path parameters naming an invitation of a workspace. */
export const InvitationParams = t.Object({ tenantId: Uuid, invitationId: Uuid })

/** GET /v1/tenants/{tenantId}/invitations query. */
export const InvitationListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('revoked'), Type.Literal('expired')])),
})

/** POST /v1/invitations/accept body. */
export const InvitationAccept = t.Object({
  token: t.String({ minLength: 1, maxLength: 200, description: 'The acceptance token from the invitation email.' }),
})

/** POST /v1/invitations/accept result: the workspace joined and the new membership. */
export const InvitationAccepted = t.Object({ tenant: Tenant, user: User })
