// The README's "Your first case" walkthrough, run as written: its ```sh blocks are taken from
// README.md itself (so the two cannot drift), joined and run by bash against a started service, with
// `bun run svc` pointing at this checkout's CLI; each step's printed answer is then checked.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { spawnService, type ServiceProcess } from '../helpers/service-process'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { seedEmbeddedDataDir } from '../helpers/pgdata-template'
import { skipTitle } from '../helpers/skip-reason'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4

/** The ```sh blocks of one README section, in order. */
export function sectionShellBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`README has no section "${heading}"`)
  const rest = readme.slice(start + heading.length + 5)
  const end = rest.search(/\n## /)
  const section = end < 0 ? rest : rest.slice(0, end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

const root = resolve(import.meta.dir, '../..')
const dir = mkdtempSync(join(tmpdir(), 'svc-walkthrough-'))
let db: TestDatabase
let svc: ServiceProcess
let env: Record<string, string | undefined>

beforeAll(async () => {
  db = await createTestDatabase()
  // A fresh embedded data directory holds an initialised cluster (no initdb); the service migrates it.
  if (!db.url) await seedEmbeddedDataDir(join(dir, 'data'), 'bare')
  // Upload URLs are built from SVC_BASE_URL (default http://localhost:$PORT): give the service a known port.
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = String(probe.port)
  probe.stop(true)
  env = { DATABASE_URL: db.url, SVC_DATA_DIR: join(dir, 'data'), SVC_SECRET_KEY: undefined, SVC_ACCESS_LOG: '0', PORT: port, SVC_BASE_URL: `http://127.0.0.1:${port}` }
  svc = await spawnService(['bun', join(root, 'server/main.ts')], env)
  // The walkthrough runs from "the repository root": a folder whose package.json runs this CLI.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'walkthrough', private: true, scripts: { svc: `bun ${join(root, 'server/cli.ts')}` } }))
})

afterAll(async () => {
  await svc?.stop()
  await db?.drop()
  rmSync(dir, { recursive: true, force: true })
})

/** Runs the walkthrough's blocks in `shell` and checks what each step printed. */
async function walkthrough(shell: 'bash' | 'zsh') {
  const blocks = sectionShellBlocks(readFileSync(join(root, 'README.md'), 'utf8'), 'Your first case')
  expect(blocks.length).toBeGreaterThanOrEqual(8)
  const script = `${shell === 'bash' ? 'set -euo pipefail' : 'set -eu; setopt pipefail'}\n${blocks.join('\n')}\n`
  expect(script).not.toContain('uuidgen')
  expect(script).not.toMatch(/\bjq\b/)
  const childEnv: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...env, BASE: svc.url })) if (v !== undefined) childEnv[k] = v
  rmSync(join(dir, 'findings.pdf'), { force: true })
  const run = Bun.spawn([shell, '-c', script], { cwd: dir, env: childEnv, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  if (code !== 0) console.error(`walkthrough failed (${code}):\n${out}\n${err}`)
  expect(code).toBe(0)
  expect(out).toMatch(/^case [0-9a-f-]{36}$/m)
  expect(out).toMatch(/^document ready$/m)
  expect(out).toMatch(/^id: \d+$/m) // the case event stream answered
  expect(out).toMatch(/^version published$/m)
  expect(out).toMatch(/^evaluation succeeded$/m)
  const answer = JSON.parse(out.split('\n').find((l) => l.startsWith('{"id"'))!)
  expect(answer).toMatchObject({ question_key: 'revenue', value: '1250000.00', status: 'answered' })
  expect(out).toMatch(/^Annual revenue: 1250000\.00$/m)
  expect(out).toMatch(/^approve$/m)
  expect(out).toMatch(/^report succeeded$/m)
  expect(readFileSync(join(dir, 'findings.pdf')).subarray(0, 5).toString()).toBe('%PDF-')
}

test('the README walkthrough goes from an API key to a findings report (bash)', () => walkthrough('bash'))

// zsh does not split unquoted words and globs `?`: the same blocks must work there too. CI installs
// zsh (.ci/run); elsewhere the test is skipped, and says so.
if (!Bun.which('zsh')) console.warn('skipped: the README walkthrough under zsh (zsh is not installed)')
test.skipIf(!Bun.which('zsh'))(skipTitle('the README walkthrough goes from an API key to a findings report (zsh)', !Bun.which('zsh') && 'zsh is not installed'), () => walkthrough('zsh'))
