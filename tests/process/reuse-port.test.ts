/**
 * Several API processes behind one port (issue 30): with SVC_REUSE_PORT=1 two service processes
 * bind the same PORT (SO_REUSEPORT) and both serve requests on it; without it the second cannot.
 * Needs PostgreSQL (the embedded database belongs to one process) and Linux.
 */
import { afterAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { runCli, spawnService, type ServiceProcess } from '../helpers/service-process'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(120_000)
const enabled = Boolean(process.env.DATABASE_URL) && process.platform === 'linux'
if (!enabled) console.warn('reuse-port test skipped: it needs DATABASE_URL (PostgreSQL) and Linux')

/** A port free right now (bound and released). */
const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)) })
})

let db: TestDatabase | undefined
const procs: ServiceProcess[] = []
afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL')
  await db?.drop()
})

describe.skipIf(!enabled)(skipTitle('SVC_REUSE_PORT', NEEDS_POSTGRES, process.platform !== 'linux' && 'SO_REUSEPORT balancing is Linux-only'), () => {
  test('two processes serve one port with it; a second process cannot bind the port without it', async () => {
    db = await createTestDatabase()
    const port = await freePort()
    const base = { DATABASE_URL: db.url!, SVC_SECRET_KEY: Buffer.alloc(32, 5).toString('base64'), PORT: String(port) }
    expect((await runCli(['migrate'], { ...base, SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-reuse-')) })).code).toBe(0)
    for (let i = 0; i < 2; i++) {
      procs.push(await spawnService(['bun', 'server/main.ts'], { ...base, SVC_REUSE_PORT: '1', SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-reuse-')) }))
    }
    expect(procs.map((p) => p.url)).toEqual([`http://127.0.0.1:${port}`, `http://127.0.0.1:${port}`])
    // New connections are spread by the kernel: each process writes access lines for some of them.
    const served = () => procs.map((p) => (p.output().match(/"route":"\/healthz"|"path":"\/healthz"/g) ?? []).length)
    const before = served()
    for (let i = 0; i < 60; i++) {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } })
      expect(r.status).toBe(200)
      await r.arrayBuffer()
    }
    await Bun.sleep(200)
    const after = served()
    const perProcess = after.map((n, i) => n - before[i]!)
    console.log('reuse-port: /healthz requests answered per process', perProcess)
    expect(perProcess.reduce((a, b) => a + b, 0)).toBe(60)
    expect(Math.min(...perProcess)).toBeGreaterThan(0)
    const lone = spawnService(['bun', 'server/main.ts'], { ...base, SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-reuse-')) }, 20_000)
    await expect(lone).rejects.toThrow()
  })
})
