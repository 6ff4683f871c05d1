/**
 * Break-glass requests: an operator asks for access to a workspace; its admins approve or deny
 * when the workspace requires it, and may revoke an open window. Poll-only: no notification event
 * exists for them.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, named, pageQuery, NonBlankText } from './common'

const Status = t.Union([t.Literal('requested'), t.Literal('approved'), t.Literal('denied'), t.Literal('revoked')])

/** An operator's access request. */
export const BreakGlassRequest = named('BreakGlassRequest', t.Object({
  id: Uuid,
  tenant_id: Uuid,
  operator_sub: t.String({ description: 'The requesting operator (JWT subject)' }),
  reason: t.String(),
  duration_minutes: Int({ description: 'Length of the access window once approved' }),
  approval_required: t.Boolean({ description: 'The workspace required its own approval when the request was raised' }),
  status: Status,
  access_active: t.Boolean({ description: 'Approved and the access window has not lapsed' }),
  access_expires_at: t.Optional(Timestamp),
  decided_at: t.Optional(Timestamp),
  decided_by_user_id: t.Optional(Uuid),
  decision_note: t.Optional(t.String()),
  revoked_at: t.Optional(Timestamp),
  revoked_by_user_id: t.Optional(Uuid),
  created_at: Timestamp,
}))

/** The operator's request body. */
export const BreakGlassCreate = t.Object({
  reason: NonBlankText({ minLength: 1, maxLength: 2000 }),
  duration_minutes: t.Optional(Int({ minimum: 1, maximum: 1440, default: 60, description: 'Access window once approved; default 60' })),
})

/** An admin's decision body. */
export const BreakGlassDecision = t.Object({
  note: t.Optional(t.String({ maxLength: 2000 })),
})

/** Path parameters naming a request of the caller's workspace. */
export const BreakGlassParams = t.Object({ requestId: Uuid })
/** Path parameters naming a request of a workspace (operator routes). */
export const TenantBreakGlassParams = t.Object({ tenantId: Uuid, requestId: Uuid })

/** List query: `status` filters (e.g. requested). */
export const BreakGlassListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union([Type.Literal('requested'), Type.Literal('approved'), Type.Literal('denied'), Type.Literal('revoked')])),
})
