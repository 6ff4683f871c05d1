/**
 * API-key routes: create, list, read, revoke (DELETE or POST .../revoke); workspace admins only. A
 * revoked key is refused from the next request on. The `api_keys` table is the store's
 * (server/workspaces/api-keys-store.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { problems } from '../http/problem'
import { refuseIdempotencyKey } from '../http/idempotency'
import { accessControl, tenantOf } from '../auth/access'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyListQuery, ApiKeyParams } from '../../schemas/api-key'
import { actorOf, appendAudit } from '../workspaces/audit-store'
import { createApiKey, findApiKey, listApiKeys, renderApiKey, revokeApiKey } from '../workspaces/api-keys-store'

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
    .post('/v1/api-keys', async ({ principal, body, set, request }) => {
      refuseIdempotencyKey(request, 'the plaintext key is never stored, so a creation cannot be replayed')
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
        description: 'A request with an Idempotency-Key header is 422 and creates nothing: the plaintext is never stored, so a creation cannot be replayed. An unknown scope is 422 with a pointer to it.',
        tags: ['API keys'],
        responses: responses({ 201: ApiKeyCreated }, BODY_PROBLEMS),
      },
    })
    .get('/v1/api-keys', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(ApiKeyListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, 'api-keys'))
      return list.page(await listApiKeys(sql, tenantId, list), (r) => r.id, renderApiKey)
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
