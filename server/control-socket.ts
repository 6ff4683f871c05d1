/**
 * The control socket of a service on the embedded database: a Unix socket in $SVC_DATA_DIR that
 * runs operator CLI commands inside the process that owns PGlite (one session, so a second process
 * must not open it). Only someone who can read the data directory can reach it, the same trust as
 * the database files themselves.
 */
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import type { Database } from './db/connect'

/** What a CLI command printed and its exit code, as the socket carries it. */
export interface CommandOutcome { code: number; stdout: string; stderr: string }

/** Runs one CLI command against the process's database (the CLI's executeCommand, handed in by the caller). */
export type CommandExecutor = (db: Database, argv: string[]) => Promise<CommandOutcome>

/** Where the control socket of a data directory lives. */
export function controlSocketPath(dataDir: string): string {
  return join(dataDir, 'svc.sock')
}

/** Serves CLI commands for the embedded database; returns a function that closes the socket. */
export function serveControlSocket(dataDir: string, db: Database, execute: CommandExecutor): () => void {
  const path = controlSocketPath(dataDir)
  rmSync(path, { force: true })
  const server = Bun.serve({
    unix: path,
    development: false, // an error answers a bare 500, not its message and stack
    async fetch(request) {
      const argv = (await request.json()) as string[]
      if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) return Response.json({ code: 2, stdout: '', stderr: 'svc: bad request\n' })
      return Response.json(await execute(db, argv))
    },
  })
  return () => {
    server.stop(true)
    rmSync(path, { force: true })
  }
}

/** Sends a CLI command to a running service's control socket and returns its outcome. */
export async function forwardToControlSocket(path: string, argv: string[]): Promise<CommandOutcome> {
  const res = await fetch('http://svc/command', { unix: path, method: 'POST', body: JSON.stringify(argv) } as RequestInit)
  return (await res.json()) as CommandOutcome
}
