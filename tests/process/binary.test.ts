// `bun run build` makes one executable that starts the same service (migrations and assets inside):
// it is copied away from the source tree and node_modules, started on the embedded database, and
// must answer /healthz and /readyz and serve the CLI.
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync, copyFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnService, type ServiceProcess } from '../helpers/service-process'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const dir = mkdtempSync(join(tmpdir(), 'svc-binary-'))
let svc: ServiceProcess | undefined
afterAll(async () => {
  await svc?.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('the compiled binary starts and answers /healthz', async () => {
  const build = Bun.spawnSync(['bun', 'run', 'build'], { stdout: 'pipe', stderr: 'pipe' })
  expect(build.exitCode).toBe(0)
  expect(existsSync('dist/svc')).toBe(true)
  const bin = join(dir, 'svc')
  copyFileSync('dist/svc', bin)
  Bun.spawnSync(['chmod', '+x', bin])
  const env = { DATABASE_URL: undefined, SVC_DATA_DIR: join(dir, 'data'), SVC_SECRET_KEY: undefined }
  svc = await spawnService([bin], env)
  const health = await fetch(`${svc.url}/healthz`)
  expect(health.status).toBe(200)
  expect(await health.json()).toEqual({ status: 'ok' })
  expect((await fetch(`${svc.url}/readyz`)).status).toBe(200)
  const cli = Bun.spawnSync([bin, 'tenant', 'create', '--slug', 'from-binary'], { env: { ...process.env, ...env, DATABASE_URL: '' }, cwd: dir, stdout: 'pipe' })
  expect(cli.exitCode).toBe(0)
  expect(JSON.parse(cli.stdout.toString())).toMatchObject({ slug: 'from-binary', created: true })
})
