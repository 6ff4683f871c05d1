/**
 * A Bun macro: runs frame/build.ts (Bun.build) in a child process when this module is transpiled,
 * so the frame's script and stylesheet become string constants of the server. `bun run start`
 * therefore serves a frame built from the current sources, and `bun build --compile` carries the
 * same bundle inside the executable, with no generated file in the tree. (Bun.build cannot run
 * inside a macro during bundling, hence the child process.)
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The frame bundle as `{js, css}`; throws with the build's own messages when it fails. */
export function frameBundle(): { js: string; css: string } {
  const child = Bun.spawnSync([process.execPath, join(import.meta.dir, '../../frame/build.ts')], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, NODE_ENV: 'production' },
  })
  if (child.exitCode !== 0) throw new Error(`frame build failed: ${child.stderr.toString()}`)
  return JSON.parse(child.stdout.toString())
}

/** The example host page's static files (frame/example-host/*.{html,js,css}) by name. */
export function exampleHostFiles(): Record<string, string> {
  const dir = join(import.meta.dir, '../../frame/example-host')
  const names = ['index.html', 'host.js', 'host.css']
  return Object.fromEntries(names.map((n) => [n, readFileSync(join(dir, n), 'utf8')]))
}
