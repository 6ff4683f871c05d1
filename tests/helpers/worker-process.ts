/**
 * Runs `bun server/main.ts --worker` (the job runner alone) as a real process against a test
 * app's database, and waits until its runner has started.
 */
import type { Subprocess } from 'bun'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestApp } from './app'
import { outputScanner } from './log-hygiene'

/** A running worker process. */
export interface WorkerProcess {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  workerId: string
  output(): string
  /** Sends a signal and resolves with the exit code. */
  kill(signal: NodeJS.Signals): Promise<number>
}

/** The environment a worker needs to share `app`'s database, service key and webhook settings. */
export function workerEnv(app: TestApp, extra: Record<string, string> = {}): Record<string, string> {
  if (!app.config.databaseUrl) throw new Error('worker processes need DATABASE_URL (PostgreSQL)')
  return {
    DATABASE_URL: app.config.databaseUrl,
    SVC_SECRET_KEY: Buffer.from(app.deps.secretKey).toString('base64'),
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-worker-')),
    SVC_WEBHOOK_RETRY_INITIAL_MS: String(app.config.webhookRetryInitialMs),
    ...(app.config.webhookCaFile ? { SVC_WEBHOOK_CA_FILE: app.config.webhookCaFile } : {}),
    ...(app.config.webhookUnsafeAllowAddresses.length ? { SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: app.config.webhookUnsafeAllowAddresses.join(',') } : {}),
    PORT: '0',
    ...extra,
  }
}

/** Starts a worker process and resolves once it logged that its job runner started. */
export async function spawnWorker(env: Record<string, string>, timeoutMs = 60_000): Promise<WorkerProcess> {
  const childEnv: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) childEnv[k] = v
  const proc = Bun.spawn(['bun', 'server/main.ts', '--worker'], { env: childEnv, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  let out = ''
  const scan = outputScanner('worker process')
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true })
      out += text
      scan(text)
    }
  }
  void pump(proc.stdout)
  void pump(proc.stderr)
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const m = /"message":"job runner started","worker_id":"([^"]+)"/.exec(out)
    if (m) {
      return {
        proc,
        workerId: m[1]!,
        output: () => out,
        async kill(signal) {
          proc.kill(signal)
          return proc.exited
        },
      }
    }
    if (proc.exitCode !== null) throw new Error(`worker exited with ${proc.exitCode}:\n${out}`)
    await Bun.sleep(25)
  }
  proc.kill('SIGKILL')
  throw new Error(`worker did not start within ${timeoutMs} ms:\n${out}`)
}
