/**
 * A PostgreSQL cluster a test owns: initdb into a temporary directory, a free port, and start /
 * fast-stop at will (for outage tests). Runs as the `postgres` user when the tests run as root
 * (PostgreSQL refuses root), using the machine's PostgreSQL binaries.
 */
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

/** A running (or stopped) cluster of a test. */
export interface OwnCluster {
  url: string
  /** `pg_ctl stop -m fast`: disconnects every client and stops. */
  stopFast(): Promise<void>
  start(): Promise<void>
  destroy(): Promise<void>
}

const BIN = (() => {
  const versions = readdirSync('/usr/lib/postgresql').sort()
  return join('/usr/lib/postgresql', versions[versions.length - 1]!, 'bin')
})()

const asPostgres = (cmd: string[]) => (userInfo().uid === 0 ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd)

async function run(cmd: string[]): Promise<void> {
  const p = Bun.spawn(asPostgres(cmd), { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}: ${out}${err}`)
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** Creates and starts a cluster on a free port. */
export async function startOwnCluster(): Promise<OwnCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'))
  if (userInfo().uid === 0) chownSync(dir, Number(Bun.spawnSync(['id', '-u', 'postgres']).stdout.toString()), Number(Bun.spawnSync(['id', '-g', 'postgres']).stdout.toString()))
  const data = join(dir, 'data')
  const port = await freePort()
  await run([join(BIN, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
  const start = () => run([join(BIN, 'pg_ctl'), '-D', data, '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`, 'start'])
  await start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stopFast: () => run([join(BIN, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    async destroy() {
      await run([join(BIN, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
