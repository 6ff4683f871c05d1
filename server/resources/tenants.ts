/**
 * Workspaces (tenants). Owns the `tenants` table. Creation is convergent on the slug: the same
 * slug with the same fields returns the existing workspace unchanged; other fields are a conflict.
 * Routes: POST /v1/tenants (operators) and GET /v1/tenants/me (the workspace and who is calling).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Sql, Tx } from '../db/connect'
import { problems } from '../http/problem'
import { accessControl, ANY_ROLE, tenantOf } from '../auth/access'
import { SCOPES, type Principal } from '../auth/principal'
import { BODY_PROBLEMS, responses } from '../http/docs'
import { Tenant, TenantCreate, TenantMe } from '../../schemas/tenant'
import { appendAudit, type AuditActor } from './audit'
import { invalidateCredentials } from '../auth/credential-cache'

/** A row of `tenants`. */
export interface TenantRow {
  id: string
  slug: string
  name: string
  organization_id: string | null
  status: 'active' | 'suspended'
  created_at: Date
  updated_at: Date
}

/** The API shape of a workspace. */
export function renderTenant(row: TenantRow) {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    ...(row.organization_id !== null ? { organization_id: row.organization_id } : {}),
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** A workspace slug: lower-case letters, digits and inner hyphens, at most 63 characters. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** What creating a workspace takes. */
export interface TenantInput { slug: string; name?: string; organizationId?: string }

/**
 * Creates a workspace, or returns the existing one of that slug when its fields are the same
 * (`created` false). A different name or organization for an existing slug is 409 conflict.
 */
export async function createTenant(sql: Tx, input: TenantInput): Promise<{ tenant: TenantRow; created: boolean }> {
  if (!SLUG_PATTERN.test(input.slug)) throw problems.rule('slug must be 1-63 lower-case letters, digits or inner hyphens.')
  const name = input.name ?? input.slug
  const organizationId = input.organizationId ?? null
  const [inserted] = await sql<TenantRow[]>`
    insert into tenants (id, slug, name, organization_id)
    values (${Bun.randomUUIDv7()}, ${input.slug}, ${name}, ${organizationId})
    on conflict (slug) do nothing
    returning *`
  if (inserted) return { tenant: inserted, created: true }
  const [existing] = await sql<TenantRow[]>`select * from tenants where slug = ${input.slug}`
  if (!existing) throw problems.conflict('The workspace is being created by another request; retry.')
  if (existing.name !== name || existing.organization_id !== organizationId) {
    throw problems.conflict(`A workspace with slug "${input.slug}" already exists with other fields.`)
  }
  return { tenant: existing, created: false }
}

/** Reads a workspace by slug, or null. */
export async function findTenantBySlug(sql: Tx, slug: string): Promise<TenantRow | null> {
  const [row] = await sql<TenantRow[]>`select * from tenants where slug = ${slug}`
  return row ?? null
}

/** Reads a workspace by id, or null. */
export async function findTenant(sql: Tx, id: string): Promise<TenantRow | null> {
  const [row] = await sql<TenantRow[]>`select * from tenants where id = ${id}`
  return row ?? null
}

/**
 * Suspends or resumes a workspace (`svc tenant suspend|resume`); every call of a suspended
 * workspace is then 403 tenant_suspended. A change is recorded on the workspace's audit chain;
 * setting the status it already has changes nothing.
 */
export async function setTenantStatus(sql: Sql, slug: string, status: TenantRow['status'], actor: AuditActor): Promise<{ tenant: TenantRow; changed: boolean } | null> {
  return sql.begin(async (tx) => {
    const [current] = await tx<TenantRow[]>`select * from tenants where slug = ${slug} for no key update`
    if (!current) return null
    if (current.status === status) return { tenant: current, changed: false }
    const [row] = await tx<TenantRow[]>`update tenants set status = ${status}, updated_at = now() where id = ${current.id} returning *`
    invalidateCredentials()
    await appendAudit(tx, current.id, status === 'suspended' ? 'tenant.suspended' : 'tenant.resumed', actor, {})
    return { tenant: row!, changed: true }
  })
}

/** The identity context of a workspace principal (GET /v1/tenants/me). */
async function identityOf(sql: Sql, p: Principal) {
  if (p.kind === 'user') {
    const [u] = await sql<{ email: string }[]>`select email from users where tenant_id = ${p.tenantId} and id = ${p.userId}`
    return { kind: 'user' as const, user_id: p.userId, ...(u ? { email: u.email } : {}), role: p.role, operator: p.operator }
  }
  if (p.kind === 'api_key') {
    const [k] = await sql<{ name: string }[]>`select name from api_keys where tenant_id = ${p.tenantId} and id = ${p.keyId}`
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
