/**
 * A PgBouncer of a test's own (Debian's `pgbouncer`) in transaction mode, on a free port, with a
 * generated ini in a temporary directory, in front of the PostgreSQL a database URL names.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'

/** Where the pgbouncer binary is, if installed. */
export function pgbouncerBinary(): string | undefined {
  for (const p of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']) if (existsSync(p)) return p
  return Bun.which('pgbouncer') ?? undefined
}

/** A running PgBouncer. */
export interface PgBouncer {
  port: number
  /** `databaseUrl` with host and port replaced by the bouncer's. */
  url(databaseUrl: string): string
  /** What PgBouncer has written so far (warnings such as `got packet ... from server when not linked`). */
  output(): string
  stop(): Promise<void>
}

const freePort = (): number => {
  const s = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = s.port
  s.stop(true)
  return port
}

/** Starts PgBouncer in `poolMode` before the server of `databaseUrl`; resolves once it accepts connections. */
export async function startPgBouncer(databaseUrl: string, opts: { poolMode?: 'transaction' | 'session'; poolSize?: number } = {}): Promise<PgBouncer> {
  const bin = pgbouncerBinary()
  if (!bin) throw new Error('pgbouncer is not installed (apt-get install pgbouncer)')
  const server = new URL(databaseUrl)
  const dir = mkdtempSync(join(tmpdir(), 'svc-pgbouncer-'))
  chmodSync(dir, 0o755) // started as root it drops to the postgres user, which must read the ini
  const port = freePort()
  const ini = join(dir, 'pgbouncer.ini')
  writeFileSync(ini, [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || 5432} user=${decodeURIComponent(server.username || 'postgres')}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    `pool_mode = ${opts.poolMode ?? 'transaction'}`,
    `default_pool_size = ${opts.poolSize ?? 12}`,
    'max_client_conn = 400',
    'server_reset_query =',
    'ignore_startup_parameters = extra_float_digits',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n'))
  chmodSync(ini, 0o644)
  const asRoot = process.getuid?.() === 0
  const proc: Subprocess = Bun.spawn([bin, ...(asRoot ? ['-u', 'postgres'] : []), ini], { stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  let out = ''
  void (async () => { for await (const c of proc.stderr as ReadableStream<Uint8Array>) out += new TextDecoder().decode(c) })()
  void (async () => { for await (const c of proc.stdout as ReadableStream<Uint8Array>) out += new TextDecoder().decode(c) })()
  const deadline = Date.now() + 10_000
  for (;;) {
    const ok = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then((s) => { s.end(); return true }, () => false)
    if (ok) break
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error(`pgbouncer did not start:\n${out}`)
    }
    await Bun.sleep(50)
  }
  return {
    port,
    url(databaseUrl) {
      const u = new URL(databaseUrl)
      u.hostname = '127.0.0.1'
      u.port = String(port)
      return u.toString()
    },
    output: () => out,
    async stop() {
      proc.kill('SIGTERM')
      await Promise.race([proc.exited, Bun.sleep(3000)])
      if (proc.exitCode === null) proc.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
