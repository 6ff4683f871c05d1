/**
 * API keys. Owns the `api_keys` table. The plaintext exists only in the creation result.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { mintApiKey, type KeyEnvironment } from '../auth/api-key-format'
import { SCOPES, type Scope } from '../auth/principal'

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
