/**
 * Runs the operator CLI (`bun server/cli.ts ...`) as a separate process against a test app's
 * database: its DATABASE_URL, or (embedded) its data directory, whose owner (the test app) the CLI
 * reaches through its control socket.
 */
import type { TestApp } from './app'

/** The outcome of one CLI run: exit code, parsed JSON stdout (when JSON) and stderr. */
export interface CliRun { code: number; json: any; stdout: string; stderr: string }

/** Runs `svc <args>` for a test app and waits for it to exit. */
export async function runCli(app: TestApp, args: string[]): Promise<CliRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_DATA_DIR: app.config.dataDir }
  if (app.config.databaseUrl) env.DATABASE_URL = app.config.databaseUrl
  const proc = Bun.spawn(['bun', 'server/cli.ts', ...args], { cwd: `${import.meta.dir}/../..`, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  let json: unknown
  try { json = JSON.parse(stdout) } catch { json = undefined }
  return { code, json, stdout, stderr }
}
