// The operator CLI against the test database: JSON on stdout, non-zero exit and one clear line on bad input.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { seedEmbeddedDataDir } from '../helpers/pgdata-template'
import { runCli, spawnService } from '../helpers/service-process'
import { call } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let database: TestDatabase
const dataDir = mkdtempSync(join(tmpdir(), 'svc-cli-'))
let env: Record<string, string | undefined>

beforeAll(async () => {
  database = await createTestDatabase()
  // A fresh embedded data directory holds an initialised cluster (no initdb); `migrate` still applies every migration.
  if (!database.url) await seedEmbeddedDataDir(dataDir, 'bare')
  env = { DATABASE_URL: database.url, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }
})
afterAll(async () => {
  await database.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('migrate applies every migration once', async () => {
  const first = await runCli(['migrate'], env)
  expect(first.code).toBe(0)
  expect(first.json.applied.length).toBeGreaterThan(0)
  const again = await runCli(['migrate'], env)
  expect(again.json).toEqual({ applied: [] })
})

test('tenant create is convergent on slug; other fields are refused', async () => {
  const a = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Acme Lending'], env)
  expect(a.code).toBe(0)
  expect(a.json).toMatchObject({ slug: 'acme', name: 'Acme Lending', status: 'active', created: true })
  const b = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Acme Lending'], env)
  expect(b.json).toMatchObject({ id: a.json.id, created: false })
  const c = await runCli(['tenant', 'create', '--slug', 'acme', '--name', 'Other'], env)
  expect(c.code).not.toBe(0)
  expect(c.stderr).toContain('already exists')
  const bad = await runCli(['tenant', 'create', '--slug', 'Not A Slug'], env)
  expect(bad.code).not.toBe(0)
  expect(bad.stderr).toContain('slug')
})

test('user add and api-key create; the key works over HTTP', async () => {
  const u = await runCli(['user', 'add', '--tenant', 'acme', '--email', 'ann@acme.test', '--sub', 'sub-ann', '--role', 'admin'], env)
  expect(u.code).toBe(0)
  expect(u.json).toMatchObject({ email: 'ann@acme.test', role: 'admin', status: 'active', sub: 'sub-ann' })
  const role = await runCli(['user', 'add', '--tenant', 'acme', '--email', 'bob@acme.test', '--sub', 'sub-bob', '--role', 'owner'], env)
  expect(role.code).not.toBe(0)
  expect(role.stderr).toContain('role')
  const k = await runCli(['api-key', 'create', '--tenant', 'acme', '--name', 'ci', '--scopes', 'scenarios:read,scenarios:write', '--environment', 'test', '--expires-in-days', '30'], env)
  expect(k.code).toBe(0)
  expect(k.json.key).toMatch(/^svc_test_[A-Za-z0-9_-]{43}$/)
  expect(k.json).toMatchObject({ name: 'ci', environment: 'test', scopes: ['scenarios:read', 'scenarios:write'] })
  expect(new Date(k.json.expires_at).getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000)
  const stored = await runCli(['api-key', 'create', '--tenant', 'acme', '--name', 'x', '--scopes', 'nope:scope'], env)
  expect(stored.code).not.toBe(0)
  expect(stored.stderr).toContain('/scopes/0')
  const svc = await spawnService(['bun', 'server/main.ts'], env)
  try {
    const r = await call(svc.url, 'POST', '/v1/scenarios', { token: k.json.key, body: { name: 'from CLI key' } })
    expect(r.status).toBe(201)
  } finally {
    await svc.stop()
  }
})

test('unknown commands and missing flags exit non-zero with a clear line', async () => {
  const none = await runCli(['frobnicate'], env)
  expect(none.code).toBe(2)
  expect(none.stderr).toContain('usage: svc')
  const missing = await runCli(['api-key', 'create', '--tenant', 'acme'], env)
  expect(missing.code).toBe(2)
  expect(missing.stderr).toMatch(/^svc: --(name|scopes) is required\n$/)
  const unknownTenant = await runCli(['user', 'add', '--tenant', 'ghost', '--email', 'a@b.test', '--sub', 's', '--role', 'viewer'], env)
  expect(unknownTenant.code).toBe(2)
  expect(unknownTenant.stderr).toContain('no workspace with slug "ghost"')
})
