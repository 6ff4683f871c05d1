// The integrator's package: `bun run build:client` packs the typed client and the webhook helper;
// the tarball installs into an empty folder without the service's dependencies, a strict TypeScript
// program using both type-checks (with the build's own TypeScript 5, as a user's would), and runs
// under Node against a started service: idempotency keys, a 429 retried after Retry-After, cursor
// iteration, and a webhook signature check.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { spawnService, runCli, type ServiceProcess } from '../helpers/service-process'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { seedEmbeddedDataDir } from '../helpers/pgdata-template'

setDefaultTimeout(300_000) // file-scoped in Bun 1.4: the build starts a service and npm installs

const root = resolve(import.meta.dir, '../..')
const dir = mkdtempSync(join(tmpdir(), 'svc-client-package-'))
let db: TestDatabase
let svc: ServiceProcess
let key: string

beforeAll(async () => {
  db = await createTestDatabase()
  // A fresh embedded data directory holds an initialised cluster (no initdb); the service migrates it.
  if (!db.url) await seedEmbeddedDataDir(join(dir, 'data'), 'bare')
  // Completing documents (the `unit` rate class) gets 2 tokens, one back per second.
  // Upload URLs are built from SVC_BASE_URL: give the service a known port.
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = String(probe.port)
  probe.stop(true)
  const env = { DATABASE_URL: db.url, SVC_DATA_DIR: join(dir, 'data'), SVC_ACCESS_LOG: '0', SVC_RATE_UNIT: '2/1', PORT: port, SVC_BASE_URL: `http://127.0.0.1:${port}` }
  svc = await spawnService(['bun', join(root, 'server/main.ts')], env)
  expect((await runCli(['tenant', 'create', '--slug', 'client'], env)).code).toBe(0)
  key = (await runCli(['api-key', 'create', '--tenant', 'client', '--name', 'k', '--scopes', 'scenarios:write'], env)).json.key
})

afterAll(async () => {
  await svc?.stop()
  await db?.drop()
  rmSync(dir, { recursive: true, force: true })
})

const PROGRAM = `
import { createHmac } from 'node:crypto'
import { allPages, createCaseClient, type components } from 'underwriting-case-service/client'
import { verifyWebhook } from 'underwriting-case-service/webhook'

type Scenario = components['schemas']['Scenario']

const [baseUrl, apiKey] = process.argv.slice(2)
if (baseUrl === undefined || apiKey === undefined) throw new Error('usage: main.js BASE_URL API_KEY')
const client = createCaseClient({ baseUrl, apiKey })

const made: Scenario[] = []
for (let i = 0; i < 3; i++) {
  const { data, error } = await client.POST('/v1/scenarios', { body: { name: \`Client case \${i}\` } })
  if (!data) throw new Error(\`create case: \${error?.detail}\`)
  made.push(data)
}
const first = made[0]
if (first === undefined) throw new Error('no case')
const scenarioId: string = first.id

const listed: string[] = []
for await (const s of allPages((cursor) => client.GET('/v1/scenarios', { params: { query: { cursor, limit: 1 } } }))) listed.push(s.id)

// Five documents announced and uploaded, then completed at once against a bucket of two (the
// \`unit\` rate class): the client waits out each 429.
async function uploaded(name: string): Promise<string> {
  const { data, error } = await client.POST('/v1/scenarios/{scenarioId}/documents', {
    params: { path: { scenarioId } },
    body: { filename: name, content_type: 'text/plain', size_bytes: 3 },
  })
  if (!data) throw new Error(\`announce document: \${error?.detail}\`)
  const put = await fetch(data.upload.url, { method: 'PUT', headers: data.upload.headers, body: 'abc' })
  if (put.status !== 204) throw new Error(\`upload: \${put.status}\`)
  return data.id
}
const ids = [] as string[]
for (let i = 0; i < 8; i++) ids.push(await uploaded(\`f\${i}.txt\`))
const documents = await Promise.all(ids.slice(0, 5).map(async (documentId) => {
  const { data, error } = await client.POST('/v1/scenarios/{scenarioId}/documents/{documentId}/complete', { params: { path: { scenarioId, documentId } } })
  if (!data) throw new Error(\`complete: \${error?.detail}\`)
  return data.status
}))
const raw = await Promise.all(ids.slice(5).map((documentId) => fetch(\`\${baseUrl}/v1/scenarios/\${scenarioId}/documents/\${documentId}/complete\`, {
  method: 'POST', headers: { authorization: \`Bearer \${apiKey}\` },
}).then((r) => r.status)))

const idempotencyKey = crypto.randomUUID()
const once = await client.POST('/v1/scenarios', { body: { name: 'Same' }, headers: { 'Idempotency-Key': idempotencyKey } })
const twice = await client.POST('/v1/scenarios', { body: { name: 'Same' }, headers: { 'Idempotency-Key': idempotencyKey } })

const body = JSON.stringify({ delivery_id: scenarioId })
const t = Math.floor(Date.now() / 1000)
const signature = \`t=\${t},v1=\${createHmac('sha256', 'whsec_test').update(\`\${t}.\`).update(body).digest('hex')}\`
const good = verifyWebhook(body, { 'svc-signature': signature }, 'whsec_test')
const bad = verifyWebhook(body, { 'svc-signature': signature }, 'whsec_other')

console.log(JSON.stringify({
  made: made.map((s) => s.id), listed, documents, raw,
  replayed: once.data?.id === twice.data?.id && twice.response.headers.get('idempotent-replayed') === 'true',
  verified: good.ok, refused: !bad.ok,
}))
`

test('the packed client installs alone, type-checks strictly and works against the service', async () => {
  const build = Bun.spawnSync(['bun', 'run', 'build:client', '--from', svc.url], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
  if (build.exitCode !== 0) console.error(build.stderr.toString())
  expect(build.exitCode).toBe(0)
  const tarball = JSON.parse(build.stdout.toString().trim().split('\n').at(-1)!).built as string
  expect(statSync(tarball).size).toBeLessThan(200 * 1024)

  const app = join(dir, 'app')
  Bun.spawnSync(['mkdir', '-p', app])
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'integration', private: true, type: 'module' }))
  const install = Bun.spawnSync(['npm', 'install', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: app, stdout: 'pipe', stderr: 'pipe' })
  if (install.exitCode !== 0) console.error(install.stderr.toString())
  expect(install.exitCode).toBe(0)
  const installed = readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'))
  // The package, openapi-fetch and its one helper package: none of the service's 450.
  expect(installed.sort()).toEqual(['openapi-fetch', 'openapi-typescript-helpers', 'underwriting-case-service'])
  const manifest = JSON.parse(readFileSync(join(app, 'node_modules/underwriting-case-service/package.json'), 'utf8'))
  expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch'])

  writeFileSync(join(app, 'main.ts'), PROGRAM)
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true,
      lib: ['ES2022', 'DOM'], types: ['node'], typeRoots: [join(root, 'node_modules/@types')], outDir: 'out',
    },
    files: ['main.ts'],
  }))
  const tsc = Bun.spawnSync(['bun', join(root, 'node_modules/typescript5/bin/tsc'), '-p', app], { cwd: app, stdout: 'pipe', stderr: 'pipe' })
  if (tsc.exitCode !== 0) console.error(tsc.stdout.toString(), tsc.stderr.toString())
  expect(tsc.exitCode).toBe(0)
  expect(existsSync(join(app, 'out/main.js'))).toBe(true)

  const run = Bun.spawnSync(['node', 'out/main.js', svc.url, key], { cwd: app, stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) console.error(run.stderr.toString())
  expect(run.exitCode).toBe(0)
  const result = JSON.parse(run.stdout.toString())
  expect(result.made).toHaveLength(3)
  for (const id of result.made) expect(result.listed).toContain(id) // every page, one item a page
  expect(result.documents).toEqual(['processing', 'processing', 'processing', 'processing', 'processing'])
  expect(result.raw).toContain(429) // the service did refuse: the client waited those out
  expect(result.replayed).toBe(true)
  expect(result.verified).toBe(true)
  expect(result.refused).toBe(true)
})
