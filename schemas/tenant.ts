/**
 * Workspaces (tenants) and the caller's identity context.
 */
import { t } from 'elysia'
import { Timestamp, Uuid, named, OneOf } from './common'
import { ROLES, SCOPES } from './access'
import { SLUG_PATTERN } from './patterns'

/** POST /v1/tenants body: convergent on slug. */
export const TenantCreate = t.Object({
  slug: t.String({ minLength: 1, maxLength: 63, pattern: SLUG_PATTERN, description: 'Lower-case letters, digits and inner hyphens; identifies the workspace.' }),
  name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Display name; the slug when absent.' })),
  organization_id: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Binds the workspace to an identity organization: members' tokens must then state it." })),
})

/** A workspace. */
export const Tenant = named('Tenant', t.Object({
  id: Uuid,
  slug: t.String(),
  name: t.String(),
  organization_id: t.Optional(t.String()),
  status: t.Union([t.Literal('active'), t.Literal('suspended')]),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** Who is calling, as GET /v1/tenants/me shows it. */
export const Identity = named('Identity', t.Object({
  kind: t.Union([t.Literal('user'), t.Literal('api_key')], { description: 'The principal kind' }),
  user_id: t.Optional(Uuid),
  email: t.Optional(t.String()),
  role: t.Optional(OneOf(ROLES, { description: 'For a user' })),
  operator: t.Optional(t.Boolean({ description: 'For a user: also a platform operator' })),
  api_key_id: t.Optional(Uuid),
  name: t.Optional(t.String({ description: 'For an API key' })),
  scopes: t.Optional(t.Array(OneOf(SCOPES), { description: 'For an API key' })),
  environment: t.Optional(t.Union([t.Literal('live'), t.Literal('test')], { description: 'For an API key: a test key is marked here; it sees the same workspace data as a live key.' })),
}))

/** GET /v1/tenants/me. */
export const TenantMe = t.Object({ tenant: Tenant, identity: Identity })
