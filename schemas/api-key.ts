/**
 * API keys: the creation body and the key record (never the secret, except once on creation).
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, named, OneOf, pageQuery, NonBlankText } from './common'
import { SCOPES } from './access'

const Environment = t.Union([t.Literal('live'), t.Literal('test')])

/** POST /v1/api-keys body. */
export const ApiKeyCreate = t.Object({
  name: NonBlankText({ minLength: 1, maxLength: 200 }),
  scopes: t.Array(OneOf(SCOPES), { minItems: 1, maxItems: 20, description: 'scenarios:read, scenarios:write, question_sets:read, question_sets:write, settings:write, notifications:write, embed:mint (grants nothing else), billing:read, billing:write' }),
  expires_at: t.Optional(t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'When the key stops working; absent or null: it does not expire.' })),
  environment: t.Optional(t.Union([t.Literal('live'), t.Literal('test')], { description: 'live (default) or test; a test key is marked as such in GET /v1/tenants/me.' })),
})

/** An API key record. */
export const ApiKey = named('ApiKey', t.Object({
  id: Uuid,
  name: t.String(),
  key_prefix: t.String({ description: 'The first characters of the key, to tell keys apart' }),
  environment: Environment,
  scopes: t.Array(OneOf(SCOPES)),
  expires_at: t.Union([Timestamp, t.Null()]),
  revoked_at: t.Union([Timestamp, t.Null()]),
  created_at: Timestamp,
}))

/** The creation response: the record plus the plaintext key, shown only here. */
export const ApiKeyCreated = t.Composite([ApiKey, t.Object({ key: t.String({ description: 'The plaintext key; shown once, only its hash is stored' }) })])

/** Path parameters naming a key. */
export const ApiKeyParams = t.Object({ apiKeyId: Uuid })

/** GET /v1/api-keys query. */
export const ApiKeyListQuery = Type.Object({
  ...pageQuery,
})
