/**
 * How a parser process is started: the command (this binary, or bun on the module), an environment
 * with no secrets and a private TMPDIR, the kernel told to kill it with its parent; its resident
 * memory read from outside; and the spools of dead service processes swept.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The resident memory of a process, from /proc (Linux); undefined where unreadable. */
export function residentBytes(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/**
 * On Linux, util-linux's setpriv asks the kernel to SIGKILL a parser process when the service
 * process dies (PR_SET_PDEATHSIG): a parse busy in a library may not get to notice its parent's
 * death by itself, and an orphan must not keep parsing.
 */
const setpriv = process.platform === 'linux' ? Bun.which('setpriv') : null

/** The command that starts a parser process: this same binary when compiled, else bun on the module. */
export function parserCommand(): string[] {
  const own = import.meta.url.includes('$bunfs')
    ? [process.execPath, '--parse-worker']
    : [process.execPath, fileURLToPath(new URL('./parser-process.ts', import.meta.url))]
  return setpriv ? [setpriv, '--pdeathsig', 'KILL', '--', ...own] : own
}

/**
 * The environment of a parser process: enough to run, no secrets (no database URL, no keys). Its
 * TMPDIR is a private scratch directory (parser libraries spill document content there: exceljs
 * writes sheets to temporary files), removed when the process exits; a process that leaves files
 * there after a parse is retired. Files meant to outlive a parse (the OCR model copy) go to
 * SVC_SHARED_TMPDIR, the service's own temporary directory.
 */
export function parserEnv(scratch: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const name of ['PATH', 'HOME', 'LANG', 'TZ']) if (process.env[name]) env[name] = process.env[name]!
  env.TMPDIR = scratch
  env.SVC_SHARED_TMPDIR = tmpdir()
  return env
}

/**
 * Removes the spools of service processes that died without cleaning up (SIGKILL, OOM): they may
 * hold document bytes. A spool is named after its process id; one whose process is gone is stale.
 */
export function sweepStaleSpools(): void {
  for (const name of readdirSync(tmpdir())) {
    const m = /^svc-parse-(\d+)-/.exec(name)
    if (!m || Number(m[1]) === process.pid) continue
    let alive = true
    try { process.kill(Number(m[1]), 0) } catch (e) { alive = (e as { code?: string }).code === 'EPERM' }
    if (!alive) rmSync(join(tmpdir(), name), { recursive: true, force: true })
  }
}
