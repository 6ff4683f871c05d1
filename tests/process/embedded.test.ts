// The embedded database path: the service started with DATABASE_URL unset keeps its data in
// $SVC_DATA_DIR/pg (PGlite); the CLI reaches the running instance through its loopback socket.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli, spawnService, type ServiceProcess } from '../helpers/service-process'
import { call } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-'))
const env = { DATABASE_URL: undefined, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: undefined }
let svc: ServiceProcess

beforeAll(async () => { svc = await spawnService(['bun', 'server/main.ts'], env) })
afterAll(async () => {
  await svc?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('with DATABASE_URL unset the service runs on PGlite and serves a case end to end', async () => {
  expect(svc.output()).toContain('"database":"embedded"')
  expect(existsSync(join(dataDir, 'pg'))).toBe(true)
  expect(existsSync(join(dataDir, 'secret.key'))).toBe(true)
  const tenant = await runCli(['tenant', 'create', '--slug', 'embedded-co'], env)
  expect(tenant.code).toBe(0)
  const key = await runCli(['api-key', 'create', '--tenant', 'embedded-co', '--name', 'k', '--scopes', 'scenarios:read,scenarios:write'], env)
  expect(key.code).toBe(0)
  expect(key.json.key).toMatch(/^svc_live_/)
  const created = await call(svc.url, 'POST', '/v1/scenarios', { token: key.json.key, body: { name: 'Embedded case' } })
  expect(created.status).toBe(201)
  const read = await call(svc.url, 'GET', `/v1/scenarios/${created.body.id}`, { token: key.json.key })
  expect(read.body).toEqual(created.body)
  expect((await call(svc.url, 'GET', '/readyz')).status).toBe(200)
})

test('a second process cannot open the embedded database the service owns', async () => {
  const proc = Bun.spawn(['bun', 'server/main.ts', '--worker'], { env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  expect(code).toBe(2)
  expect(stderr).toContain('in use by process')
  expect(stderr).toContain('DATABASE_URL')
  // The service is unharmed and the CLI still works through its control socket.
  const list = await runCli(['tenant', 'create', '--slug', 'embedded-co'], env)
  expect(list.json).toMatchObject({ slug: 'embedded-co', created: false })
})

test('data survives a restart of the embedded service', async () => {
  const key = await runCli(['api-key', 'create', '--tenant', 'embedded-co', '--name', 'k2', '--scopes', 'scenarios:read'], env)
  expect(await svc.stop()).toBe(0)
  svc = await spawnService(['bun', 'server/main.ts'], env)
  const list = await call(svc.url, 'GET', '/v1/scenarios', { token: key.json.key })
  expect(list.status).toBe(200)
  expect(list.body.items.map((s: { name: string }) => s.name)).toContain('Embedded case')
})
