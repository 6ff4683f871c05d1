/**
 * Runs the service as a real process (bun server/main.ts, or the compiled binary) and waits until
 * it logs the port it listens on.
 */
import type { Subprocess } from 'bun'
import { outputScanner } from './log-hygiene'

/** A running service process. */
export interface ServiceProcess { url: string; proc: Subprocess<'ignore', 'pipe', 'pipe'>; output(): string; stop(signal?: NodeJS.Signals): Promise<number> }

/** Starts `cmd` with `env` (PORT=0) and resolves once its "listening" line names the port. */
export async function spawnService(cmd: string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const childEnv: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, PORT: '0', HOST: '127.0.0.1', ...env })) if (v !== undefined) childEnv[k] = v
  const proc = Bun.spawn(cmd, { env: childEnv, stdout: 'pipe', stderr: 'pipe', stdin: 'ignore' })
  let out = ''
  const scan = outputScanner(`service process ${cmd.join(' ')}`)
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
    const m = /"message":"listening","url":"http:\/\/[^:]+:(\d+)"/.exec(out)
    if (m) {
      return {
        url: `http://127.0.0.1:${m[1]}`,
        proc,
        output: () => out,
        async stop(signal = 'SIGTERM') {
          proc.kill(signal)
          return proc.exited
        },
      }
    }
    if (proc.exitCode !== null) throw new Error(`service exited with ${proc.exitCode}:\n${out}`)
    await Bun.sleep(50)
  }
  proc.kill('SIGKILL')
  throw new Error(`service did not start within ${timeoutMs} ms:\n${out}`)
}

/** Runs the operator CLI and returns its exit code, stdout and stderr. */
export async function runCli(args: string[], env: Record<string, string | undefined>) {
  const childEnv: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) childEnv[k] = v
  const proc = Bun.spawn(['bun', 'server/cli.ts', ...args], { env: childEnv, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr, json: (() => { try { return JSON.parse(stdout) } catch { return undefined } })() }
}
