/**
 * Workspace routes: POST /v1/tenants (operators) and GET /v1/tenants/me (the workspace and who is
 * calling). The `tenants` table is the store's (server/workspaces/tenants-store.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Sql } from '../db/connect'
import { problems } from '../http/problem'
import { accessControl, ANY_ROLE, tenantOf } from '../auth/access'
import { SCOPES, type Principal } from '../auth/principal'
import { BODY_PROBLEMS, responses } from '../http/docs'
import { Tenant, TenantCreate, TenantMe } from '../../schemas/tenant'
import { createTenant, findTenant, renderTenant } from '../workspaces/tenants-store'
import { findUser } from '../workspaces/users-store'
import { findApiKey } from '../workspaces/api-keys-store'

/** The identity context of a workspace principal (GET /v1/tenants/me). */
async function identityOf(sql: Sql, p: Principal) {
  if (p.kind === 'user') {
    const u = await findUser(sql, p.tenantId, p.userId)
    return { kind: 'user' as const, user_id: p.userId, ...(u ? { email: u.email } : {}), role: p.role, operator: p.operator }
  }
  if (p.kind === 'api_key') {
    const k = await findApiKey(sql, p.tenantId, p.keyId)
    return { kind: 'api_key' as const, api_key_id: p.keyId, ...(k ? { name: k.name } : {}), scopes: [...p.scopes], environment: p.environment }
  }
  throw problems.forbidden('This operation needs a workspace credential.')
}

/** POST /v1/tenants and GET /v1/tenants/me. */
export function tenantRoutes(deps: AppDeps) {
  const { sql } = deps
  return new Elysia({ name: 'tenants' })
    .use(accessControl(deps.authenticate))
    .post('/v1/tenants', async ({ body, set }) => {
      const { tenant, created } = await createTenant(sql, { slug: body.slug, name: body.name, organizationId: body.organization_id })
      set.status = created ? 201 : 200
      if (created) set.headers.location = `/v1/tenants/${tenant.id}`
      return renderTenant(tenant)
    }, {
      access: { operator: true },
      body: TenantCreate,
      detail: {
        summary: 'Create a workspace (operators; convergent on slug)',
        description: '201 the first time; 200 with the existing workspace unchanged when rerun with identical fields; 409 when the slug exists with other fields.',
        tags: ['Tenants'],
        responses: responses({ 201: Tenant, 200: Tenant }, [...BODY_PROBLEMS, 'conflict']),
      },
    })
    .get('/v1/tenants/me', async ({ principal }) => {
      const tenant = await findTenant(sql, tenantOf(principal))
      if (!tenant) throw problems.notFound('workspace')
      return { tenant: renderTenant(tenant), identity: await identityOf(sql, principal) }
    }, {
      access: { roles: ANY_ROLE, scopes: SCOPES.filter((s) => s !== 'embed:mint') },
      detail: { summary: 'The workspace and the caller\'s identity context', tags: ['Tenants'], responses: responses({ 200: TenantMe }) },
    })
}
