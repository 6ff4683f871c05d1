/**
 * The store of API keys: owns the `api_keys` table. The plaintext exists only in the creation
 * result (never in an idempotency record, a list or a log); the table keeps its hash.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import type { PageWindow } from '../http/pagination'
import { mintApiKey, type KeyEnvironment } from '../auth/api-key-format'
import { SCOPES, type Scope } from '../auth/principal'
import { invalidateCredentials } from '../auth/credential-cache'

/** A row of `api_keys` (never the hash). */
export interface ApiKeyRow {
  id: string
  name: string
  key_prefix: string
  environment: KeyEnvironment
  scopes: Scope[]
  expires_at: Date | null
  revoked_at: Date | null
  created_at: Date
}

/** The API shape of a key (never the secret). */
export function renderApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    environment: row.environment,
    scopes: row.scopes,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }
}

/** What creating a key takes. */
export interface ApiKeyInput { name: string; scopes: string[]; environment: KeyEnvironment; expiresAt: Date | null }

/** Creates a key; the result carries the plaintext `key`, shown only here. */
export async function createApiKey(sql: Tx, tenantId: string, input: ApiKeyInput) {
  if (input.name.trim() === '') throw problems.rule('name must contain a non-whitespace character.')
  const unknown = input.scopes.findIndex((s) => !(SCOPES as readonly string[]).includes(s))
  if (unknown >= 0) throw problems.schema([{ pointer: `/scopes/${unknown}`, message: `must be one of: ${SCOPES.join(', ')}` }])
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) throw problems.rule('expires_at must be in the future.')
  const minted = mintApiKey(input.environment)
  const [row] = await sql<ApiKeyRow[]>`
    insert into api_keys (tenant_id, id, name, key_hash, key_prefix, environment, scopes, expires_at)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.name}, ${minted.hash}, ${minted.prefix}, ${input.environment},
            ${[...new Set(input.scopes)]}, ${input.expiresAt})
    returning id, name, key_prefix, environment, scopes, expires_at, revoked_at, created_at`
  return { ...renderApiKey(row!), key: minted.plaintext }
}

const KEY_COLUMNS = (sql: Tx) => sql`id, name, key_prefix, environment, scopes, expires_at, revoked_at, created_at`

/** Reads one key of a workspace, or null. */
export async function findApiKey(sql: Tx, tenantId: string, id: string): Promise<ApiKeyRow | null> {
  const [row] = await sql<ApiKeyRow[]>`select ${KEY_COLUMNS(sql)} from api_keys where tenant_id = ${tenantId} and id = ${id}`
  return row ?? null
}

/** Revokes a key at once (a revoked key stays revoked; revoking again changes nothing). */
export async function revokeApiKey(tx: Tx, tenantId: string, id: string): Promise<{ row: ApiKeyRow; changed: boolean } | null> {
  const [revoked] = await tx<ApiKeyRow[]>`
    update api_keys set revoked_at = now()
    where tenant_id = ${tenantId} and id = ${id} and revoked_at is null
    returning ${KEY_COLUMNS(tx)}`
  invalidateCredentials()
  if (revoked) return { row: revoked, changed: true }
  const row = await findApiKey(tx, tenantId, id)
  return row ? { row, changed: false } : null
}

/** One page of a workspace's keys, newest first (rows of `window`; never the hash). */
export async function listApiKeys(sql: Tx, tenantId: string, window: PageWindow): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`
    select ${KEY_COLUMNS(sql)} from api_keys
    where tenant_id = ${tenantId} ${window.after !== null ? sql`and id < ${window.after}` : sql``}
    order by id desc
    limit ${window.fetch}`
}
