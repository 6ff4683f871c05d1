/**
 * The store of workspaces (tenants): owns the `tenants` table. Creation is convergent on the slug:
 * the same slug with the same fields returns the existing workspace unchanged; other fields are a
 * conflict. Used by the routes (server/resources/tenants.ts), the CLI and the other domains.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { explainPattern } from '../http/pattern-messages'
import { SLUG_PATTERN as SLUG_SOURCE } from '../../schemas/patterns'

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
export const SLUG_PATTERN = new RegExp(SLUG_SOURCE)
explainPattern(SLUG_SOURCE, () => null, 'must be 1-63 lower-case letters, digits or inner hyphens')

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
 * Locks a workspace's row against concurrent changes of what hangs off it (its audit chain, its
 * roster, its settings) until the transaction ends; a no-op for an unknown id.
 */
export async function lockTenant(tx: Tx, tenantId: string): Promise<void> {
  await tx`select 1 from tenants where id = ${tenantId} for no key update`
}

/** Reads a workspace by slug and locks its row until the transaction ends, or null. */
export async function lockTenantBySlug(tx: Tx, slug: string): Promise<TenantRow | null> {
  const [row] = await tx<TenantRow[]>`select * from tenants where slug = ${slug} for no key update`
  return row ?? null
}

/** Sets a workspace's status and returns the updated row. */
export async function updateTenantStatus(tx: Tx, tenantId: string, status: TenantRow['status']): Promise<TenantRow> {
  const [row] = await tx<TenantRow[]>`update tenants set status = ${status}, updated_at = now() where id = ${tenantId} returning *`
  return row!
}
