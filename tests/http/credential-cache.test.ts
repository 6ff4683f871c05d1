// Cached credential lookups never outlive a change: a local revoke or suspension is immediate, a
// change made by another process reaches this one through NOTIFY (PostgreSQL) or lapses in 5 s.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { postgresClient } from '../../server/db/connect'
import { call, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
beforeAll(async () => { app = await startApp() })
afterAll(() => app.stop())

test('a key revoked over HTTP is refused on the very next request', async () => {
  const t = await app.tenant()
  await app.member(t.id, `admin-${t.id}`, 'admin')
  const key = await app.apiKey(t.id, ['scenarios:read'])
  const admin = await app.apiKey(t.id, ['settings:write', 'scenarios:read'])
  expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status).toBe(200)
  const [row] = await app.sql`select id from api_keys where key_prefix = ${key.slice(0, 13)}`
  const { revokeApiKey } = await import('../../server/workspaces/api-keys-store')
  await app.sql.begin((tx) => revokeApiKey(tx, t.id, row!.id))
  expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status).toBe(401)
  expect((await call(app.url, 'GET', '/v1/scenarios', { token: admin })).status).toBe(200)
})

test('a revoke by another process reaches the cache (NOTIFY on PostgreSQL, TTL on embedded)', async () => {
  const t = await app.tenant()
  const key = await app.apiKey(t.id, ['scenarios:read'])
  expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status).toBe(200)
  const url = app.config.databaseUrl
  if (url) {
    const other = postgresClient(url, { max: 1, onnotice: () => {} })
    await other`update api_keys set revoked_at = now() where key_prefix = ${key.slice(0, 13)}`
    await other.end()
  } else {
    await app.sql`update api_keys set revoked_at = now() where key_prefix = ${key.slice(0, 13)}`
  }
  const deadline = Date.now() + (url ? 2_000 : 6_000)
  let status = 200
  while (Date.now() < deadline && status === 200) {
    status = (await call(app.url, 'GET', '/v1/scenarios', { token: key })).status
    if (status === 200) await Bun.sleep(50)
  }
  expect(status).toBe(401)
})
