/**
 * API keys. Owns the `api_keys` table. The plaintext exists only in the creation result (never in
 * an idempotency record, a list or a log); a revoked key is refused from the next request on.
 * Routes: create, list, read, revoke (DELETE or POST .../revoke); workspace admins only.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { accessControl, tenantOf } from '../auth/access'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyListQuery, ApiKeyParams } from '../../schemas/api-key'
import { actorOf, appendAudit } from './audit'
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

/** The API-key routes (workspace admins). */
export function apiKeyRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  const admins = { roles: ['admin'] } as const

  const revoke = async (principal: Parameters<typeof actorOf>[0], id: string) => {
    const tenantId = tenantOf(principal)
    return sql.begin(async (tx) => {
      const out = await revokeApiKey(tx, tenantId, id)
      if (!out) throw problems.notFound('API key')
      if (out.changed) await appendAudit(tx, tenantId, 'api_key.revoked', actorOf(principal), { api_key_id: id, name: out.row.name })
      return out.row
    })
  }

  return new Elysia({ name: 'api-keys' })
    .use(accessControl(deps.authenticate))
    .post('/v1/api-keys', async ({ principal, body, set }) => {
      const tenantId = tenantOf(principal)
      const expiresAt = body.expires_at ? new Date(body.expires_at) : null
      const created = await sql.begin(async (tx) => {
        const key = await createApiKey(tx, tenantId, { name: body.name, scopes: body.scopes, environment: body.environment ?? 'live', expiresAt })
        await appendAudit(tx, tenantId, 'api_key.created', actorOf(principal), { api_key_id: key.id, name: key.name, scopes: key.scopes, environment: key.environment })
        return key
      })
      set.status = 201
      set.headers.location = `/v1/api-keys/${created.id}`
      set.headers['cache-control'] = 'no-store'
      return created
    }, {
      access: admins,
      body: ApiKeyCreate,
      detail: {
        summary: 'Create an API key (admins); the plaintext key is in this response only',
        description: 'No Idempotency-Key: the plaintext is never stored, so a creation cannot be replayed. An unknown scope is 422 with a pointer to it.',
        tags: ['API keys'],
        responses: responses({ 201: ApiKeyCreated }, BODY_PROBLEMS),
      },
    })
    .get('/v1/api-keys', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(ApiKeyListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, 'api-keys'))
      const rows = await sql<ApiKeyRow[]>`
        select ${KEY_COLUMNS(sql)} from api_keys
        where tenant_id = ${tenantId} ${list.after !== null ? sql`and id < ${list.after}` : sql``}
        order by id desc
        limit ${list.fetch}`
      return list.page(rows, (r) => r.id, renderApiKey)
    }, {
      access: admins,
      detail: withQuery(ApiKeyListQuery, { summary: "The workspace's API keys (never their secrets)", tags: ['API keys'], responses: responses({ 200: PageOf(ApiKey) }, LIST_PROBLEMS) }),
    })
    .get('/v1/api-keys/:apiKeyId', async ({ principal, params }) => {
      const row = await findApiKey(sql, tenantOf(principal), params.apiKeyId)
      if (!row) throw problems.notFound('API key')
      return renderApiKey(row)
    }, {
      access: admins,
      params: ApiKeyParams,
      detail: { summary: 'One API key (never its secret)', tags: ['API keys'], responses: responses({ 200: ApiKey }, PATH_PROBLEMS) },
    })
    .delete('/v1/api-keys/:apiKeyId', async ({ principal, params, set }) => {
      await revoke(principal, params.apiKeyId)
      set.status = 204
    }, {
      access: admins,
      params: ApiKeyParams,
      detail: { summary: 'Revoke an API key at once', tags: ['API keys'], responses: responses({ 204: null }, PATH_PROBLEMS) },
    })
    .post('/v1/api-keys/:apiKeyId/revoke', async ({ principal, params }) => renderApiKey(await revoke(principal, params.apiKeyId)), {
      access: admins,
      params: ApiKeyParams,
      detail: { summary: 'Revoke an API key at once (returns the revoked record)', tags: ['API keys'], responses: responses({ 200: ApiKey }, PATH_PROBLEMS) },
    })
}
