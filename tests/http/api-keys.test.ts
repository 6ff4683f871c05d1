import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { createHash } from 'node:crypto'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer
let tenant: { id: string; slug: string }
let admin: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer }, runner: false })
  tenant = await app.tenant()
  await app.member(tenant.id, 'key-admin', 'admin')
  await app.member(tenant.id, 'key-reviewer', 'reviewer')
  admin = await issuer.token('key-admin')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const create = (body: unknown, token = admin) => call(app.url, 'POST', '/v1/api-keys', { token, body })

describe('POST /v1/api-keys', () => {
  test('201 with the plaintext once; only its hash is stored; the key works at once', async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString()
    const r = await create({ name: 'CI', scopes: ['scenarios:read', 'scenarios:write'], expires_at: expires, environment: 'live' })
    expect(r.status).toBe(201)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.headers.get('location')).toBe(`/v1/api-keys/${r.body.id}`)
    expect(r.body).toEqual({
      id: expect.any(String), name: 'CI', key_prefix: r.body.key.slice(0, 13), environment: 'live',
      scopes: ['scenarios:read', 'scenarios:write'], expires_at: expires, revoked_at: null, created_at: expect.any(String),
      key: expect.stringMatching(/^svc_live_[A-Za-z0-9_-]{43}$/),
    })
    const [row] = await app.sql`select key_hash from api_keys where tenant_id = ${tenant.id} and id = ${r.body.id}`
    expect(Buffer.from(row!.key_hash).toString('hex')).toBe(createHash('sha256').update(r.body.key).digest('hex'))
    const dump = JSON.stringify(await app.sql`select * from api_keys`) + JSON.stringify(await app.sql`select * from audit_events`)
    expect(dump).not.toContain(r.body.key)
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: r.body.key })).status).toBe(200)
  })

  test('a test key is accepted, minted with svc_test_, and marked as such in tenants/me', async () => {
    const r = await create({ name: 'sandbox', scopes: ['scenarios:read'], environment: 'test' })
    expect(r.status).toBe(201)
    expect(r.body.key).toMatch(/^svc_test_/)
    expect(r.body.environment).toBe('test')
    const me = await call(app.url, 'GET', '/v1/tenants/me', { token: r.body.key })
    expect(me.body.identity).toMatchObject({ kind: 'api_key', api_key_id: r.body.id, environment: 'test' })
  })

  test('without environment or expiry: a live key that does not expire', async () => {
    const r = await create({ name: 'plain', scopes: ['embed:mint'] })
    expect(r.body).toMatchObject({ environment: 'live', expires_at: null })
  })

  test('an unknown scope is 422 with a pointer to it and stores nothing', async () => {
    const before = (await app.sql`select count(*)::int as n from api_keys`)[0]!.n
    const r = await create({ name: 'bad', scopes: ['scenarios:read', 'everything:write'] })
    const p = problemOf(r)
    expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
    expect(p.errors).toEqual([{ pointer: '/scopes/1', message: expect.stringContaining('scenarios:read') }])
    expect((await app.sql`select count(*)::int as n from api_keys`)[0]!.n).toBe(before)
  })

  test('an Idempotency-Key is refused, never ignored: the same key and body twice are 422 twice and create no key; so are an embed mint and a reconciliation completion', async () => {
    const count = async (table: string) => (await app.sql`select count(*)::int as n from ${app.sql(table)} where tenant_id = ${tenant.id}`)[0]!.n as number
    const keys = await count('api_keys')
    for (let i = 0; i < 2; i++) {
      const p = problemOf(await call(app.url, 'POST', '/v1/api-keys', { token: admin, body: { name: 'twice', scopes: ['scenarios:read'] }, headers: { 'idempotency-key': 'k-1' } }))
      expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
      expect(p.detail).toContain('takes no Idempotency-Key')
    }
    expect(await count('api_keys')).toBe(keys)
    const minter = await app.apiKey(tenant.id, ['embed:mint', 'billing:write'])
    const handoffs = await count('embed_handoffs')
    const mint = problemOf(await call(app.url, 'POST', '/v1/embed/handoffs', {
      token: minter, body: { scenario_id: crypto.randomUUID(), host_origin: 'https://host.example', subject_email: 'a@example.test' }, headers: { 'idempotency-key': 'k-2' },
    }))
    expect([mint.status, mint.detail]).toEqual([422, expect.stringContaining('takes no Idempotency-Key')])
    expect(await count('embed_handoffs')).toBe(handoffs)
    const complete = problemOf(await call(app.url, 'POST', `/v1/billing/reconciliations/${crypto.randomUUID()}/complete`, { token: minter, headers: { 'idempotency-key': 'k-3' } }))
    expect([complete.status, complete.detail]).toEqual([422, expect.stringContaining('takes no Idempotency-Key')])
  })

  test('schema violations: no scopes, unknown environment, past expiry', async () => {
    expect(problemOf(await create({ name: 'x', scopes: [] })).errors?.[0]?.pointer).toBe('/scopes')
    expect(problemOf(await create({ name: 'x', scopes: ['scenarios:read'], environment: 'staging' })).errors?.[0]?.pointer).toBe('/environment')
    const past = problemOf(await create({ name: 'x', scopes: ['scenarios:read'], expires_at: '2001-01-01T00:00:00Z' }))
    expect(past.status).toBe(422)
    expect(past.detail).toContain('expires_at')
  })

  test('admins only: a reviewer and an API key are 403', async () => {
    expect(problemOf(await create({ name: 'x', scopes: ['scenarios:read'] }, await issuer.token('key-reviewer'))).type).toBe('urn:svc:error:forbidden')
    const key = await app.apiKey(tenant.id, ['settings:write', 'scenarios:write'])
    expect(problemOf(await create({ name: 'x', scopes: ['scenarios:read'] }, key)).type).toBe('urn:svc:error:forbidden')
  })
})

describe('reading and revoking', () => {
  test('GET list and GET one never show the plaintext; list items equal the single GET', async () => {
    const made = await create({ name: 'listed', scopes: ['question_sets:read'] })
    const one = await call(app.url, 'GET', `/v1/api-keys/${made.body.id}`, { token: admin })
    expect(one.status).toBe(200)
    const { key, ...record } = made.body
    expect(one.body).toEqual(record)
    expect(one.text).not.toContain(key)
    const list = await call(app.url, 'GET', '/v1/api-keys?limit=200', { token: admin })
    expect(list.text).not.toContain(key)
    expect(list.body.items.find((k: { id: string }) => k.id === made.body.id)).toEqual(one.body)
    for (const item of list.body.items) expect('key' in item).toBe(false)
  })

  test('DELETE revokes at once: 204, the key is refused on its next call, the record shows revoked_at', async () => {
    const made = await create({ name: 'doomed', scopes: ['scenarios:read'] })
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: made.body.key })).status).toBe(200)
    const del = await call(app.url, 'DELETE', `/v1/api-keys/${made.body.id}`, { token: admin })
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect(problemOf(await call(app.url, 'GET', '/v1/scenarios', { token: made.body.key })).status).toBe(401)
    const one = await call(app.url, 'GET', `/v1/api-keys/${made.body.id}`, { token: admin })
    expect(one.body.revoked_at).toBeString()
  })

  test('POST .../revoke revokes and returns the record; repeating it changes nothing', async () => {
    const made = await create({ name: 'doomed-2', scopes: ['scenarios:read'] })
    const r = await call(app.url, 'POST', `/v1/api-keys/${made.body.id}/revoke`, { token: admin })
    expect(r.status).toBe(200)
    expect(r.body.revoked_at).toBeString()
    expect(problemOf(await call(app.url, 'GET', '/v1/scenarios', { token: made.body.key })).status).toBe(401)
    const again = await call(app.url, 'POST', `/v1/api-keys/${made.body.id}/revoke`, { token: admin })
    expect(again.body).toEqual(r.body)
    const audit = await app.sql`select kind from audit_events where tenant_id = ${tenant.id} and data->>'api_key_id' = ${made.body.id} order by seq`
    expect(audit.map((a) => a.kind)).toEqual(['api_key.created', 'api_key.revoked'])
  })

  test("another workspace's key is 404 to read and to revoke, and keeps working", async () => {
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['scenarios:read'])
    const [row] = await app.sql`select id from api_keys where tenant_id = ${other.id}`
    expect(problemOf(await call(app.url, 'GET', `/v1/api-keys/${row!.id}`, { token: admin })).status).toBe(404)
    expect(problemOf(await call(app.url, 'DELETE', `/v1/api-keys/${row!.id}`, { token: admin })).status).toBe(404)
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: otherKey })).status).toBe(200)
  })

  test('an expired key is refused with 401', async () => {
    const made = await create({ name: 'short', scopes: ['scenarios:read'], expires_at: new Date(Date.now() + 60_000).toISOString() })
    await app.sql`update api_keys set expires_at = now() - interval '1 second' where tenant_id = ${tenant.id} and id = ${made.body.id}`
    expect(problemOf(await call(app.url, 'GET', '/v1/scenarios', { token: made.body.key })).status).toBe(401)
  })
})
