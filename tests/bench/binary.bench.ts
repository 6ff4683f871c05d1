/**
 * What `dist/svc` costs to run: its size; time to ready (`/readyz` 200) on a fresh data directory
 * (a fresh PostgreSQL database) and on restart; peak and idle RSS of the service process and of its
 * parser processes; the time of one CLI command through the binary against `bun run svc`. Each
 * binary named is measured on the embedded database and, with DATABASE_URL, on PostgreSQL, in
 * alternating rounds, so a baseline binary (an older build) is measured in the same run; medians
 * of the rounds are printed, with the ratio to the first binary named.
 *
 * Peak RSS: the service's own high-water mark (VmHWM) at the end of its first start (ready, then
 * idle), and the largest sum of the service and its child processes sampled every 20 ms. Idle RSS:
 * VmRSS after BENCH_IDLE_MS without requests (no parser process unless SVC_PARSE_WARM=1), after
 * the first start and after a restart.
 * Targets (issue 29): size at most 140 MiB, first-start peak under 600 MB, idle under 250 MB on the
 * embedded database and under 150 MB on PostgreSQL (service process and parser process together).
 *
 *   bun run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun tests/bench/binary.bench.ts
 *   BENCH_BINARIES=before=/tmp/svc-old,after=dist/svc  BENCH_ROUNDS=3  BENCH_IDLE_MS=20000  BENCH_CLI_RUNS=5
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { median } from './load'

const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const idleMs = Number(process.env.BENCH_IDLE_MS ?? 20_000)
const cliRuns = Number(process.env.BENCH_CLI_RUNS ?? 5)
const binaries = (process.env.BENCH_BINARIES ?? 'dist/svc').split(',').map((entry) => {
  const [label, path] = entry.includes('=') ? entry.split('=') as [string, string] : [entry, entry]
  return { label, path: resolve(path) } // absolute: the CLI runs are spawned in the data directory
})
const databases: ('embedded' | 'postgres')[] = process.env.DATABASE_URL ? ['embedded', 'postgres'] : ['embedded']
const MB = 1_000_000

/** One process's status fields (kB values in bytes); undefined once it has exited. */
function status(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') }
  } catch {
    return undefined
  }
}

/**
 * The parser processes of a service: its child processes once they run `--parse-worker` (between
 * fork and exec a child still shows its parent's memory, which is not the parser's).
 */
function children(pid: number): number[] {
  const out: number[] = []
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
      if (list) out.push(...list.split(/\s+/).map(Number))
    }
  } catch { /* exited */ }
  return out.filter((child) => {
    try { return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('--parse-worker') } catch { return false }
  })
}

/** A free loopback port. */
function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = server.port!
  server.stop(true)
  return port
}

interface Start { readyMs: number; servicePeak: number; treePeak: number; parserPeak: number; idleService: number; idleParsers: number; parsers: number }

/** Starts the binary, waits for /readyz, samples memory until idle, measures idle RSS, stops it. */
async function startOnce(bin: string, env: Record<string, string>, idle: boolean): Promise<Start> {
  const port = freePort()
  const started = performance.now()
  const proc = Bun.spawn([bin], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' })
  let treePeak = 0
  const parserPeaks = new Map<number, number>()
  const sample = () => {
    const own = status(proc.pid)
    let sum = own?.rss ?? 0
    for (const child of children(proc.pid)) {
      const s = status(child)
      if (!s) continue
      sum += s.rss
      parserPeaks.set(child, Math.max(parserPeaks.get(child) ?? 0, s.hwm))
    }
    treePeak = Math.max(treePeak, sum)
  }
  const sampler = setInterval(sample, 20)
  let readyMs = NaN
  for (let i = 0; i < 6000 && Number.isNaN(readyMs); i++) {
    if (proc.exitCode !== null) throw new Error(`${bin} exited with ${proc.exitCode}`)
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)
    if (ok) readyMs = performance.now() - started
    else await Bun.sleep(10)
  }
  if (Number.isNaN(readyMs)) throw new Error(`${bin} was not ready within a minute`)
  await Bun.sleep(idle ? idleMs : 2000)
  sample()
  clearInterval(sampler)
  const servicePeak = status(proc.pid)!.hwm
  const idleService = status(proc.pid)!.rss
  const kids = children(proc.pid)
  const idleParsers = kids.reduce((sum, pid) => sum + (status(pid)?.rss ?? 0), 0)
  proc.kill('SIGTERM')
  await proc.exited
  return { readyMs, servicePeak, treePeak, parserPeak: Math.max(0, ...parserPeaks.values()), idleService, idleParsers, parsers: kids.length }
}

/** Milliseconds of one CLI command, median of `cliRuns`. */
async function cliTime(cmd: string[], env: Record<string, string>, cwd: string): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < cliRuns; i++) {
    const t = performance.now()
    const proc = Bun.spawn([...cmd, 'break-glass', 'list', '--tenant', 'bench'], { env, cwd, stdout: 'pipe', stderr: 'pipe' })
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
    if (code !== 0) throw new Error(`${cmd.join(' ')} failed (${code}): ${err}`)
    times.push(performance.now() - t)
  }
  return median(times)
}

type Figures = Record<string, number>
const results = new Map<string, Figures[]>()
const secretKey = Buffer.alloc(32, 7).toString('base64')
const repo = process.cwd()

for (let round = 1; round <= rounds; round++) {
  for (const database of databases) {
    for (const { label, path } of binaries) {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-binary-bench-'))
      let db: TestDatabase | undefined
      try {
        db = database === 'postgres' ? await createTestDatabase() : undefined
        const env: Record<string, string> = {}
        for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
        Object.assign(env, { SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: secretKey, DATABASE_URL: db?.url ?? '' })
        const first = await startOnce(path, env, true)
        const again = await startOnce(path, env, true)
        // One CLI command on a stopped service: through the binary and through `bun run svc`.
        const setup = Bun.spawnSync([path, 'tenant', 'create', '--slug', 'bench'], { env, cwd: dataDir, stdout: 'pipe', stderr: 'pipe' })
        if (setup.exitCode !== 0) throw new Error(`tenant create failed: ${setup.stderr}`)
        const cliBinary = await cliTime([path], env, dataDir)
        const cliSource = await cliTime(['bun', 'run', '--cwd', repo, 'svc'], env, repo)
        const figures: Figures = {
          'size MB': statSync(path).size / MB,
          'ready fresh ms': first.readyMs,
          'ready restart ms': again.readyMs,
          'first start: service peak MB': first.servicePeak / MB,
          'first start: service + parsers peak MB': first.treePeak / MB,
          'first start: parser peak MB': first.parserPeak / MB,
          'restart: service + parsers peak MB': again.treePeak / MB,
          'idle service MB': first.idleService / MB,
          'idle parsers MB': first.idleParsers / MB,
          'idle total MB': (first.idleService + first.idleParsers) / MB,
          'idle parser processes': first.parsers,
          'idle total after restart MB': (again.idleService + again.idleParsers) / MB,
          'CLI through binary ms': cliBinary,
          'CLI bun run svc ms': cliSource,
        }
        const key = `${label} ${database}`
        results.set(key, [...(results.get(key) ?? []), figures])
        console.log(JSON.stringify({ round, binary: label, database, ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 10) / 10])) }))
      } finally {
        await db?.drop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    }
  }
}

console.log(`\nmedians of ${rounds} rounds (idle measured after ${idleMs} ms)`)
for (const database of databases) {
  const base = results.get(`${binaries[0]!.label} ${database}`)!
  for (const { label } of binaries) {
    const runs = results.get(`${label} ${database}`)!
    const line = Object.keys(runs[0]!).map((k) => {
      const m = median(runs.map((r) => r[k]!))
      const b = median(base.map((r) => r[k]!))
      return `${k} ${Math.round(m * 10) / 10}${label === binaries[0]!.label || b === 0 ? '' : ` (${(m / b).toFixed(2)}x)`}`
    })
    console.log(`${label} / ${database}: ${line.join('; ')}`)
  }
}
