/**
 * `bun run bench`: runs every tests/bench/*.bench.ts in turn (each prints its own ratios).
 */
import { readdirSync } from 'node:fs'

const only = process.argv[2]
for (const file of readdirSync('tests/bench').filter((f) => f.endsWith('.bench.ts')).sort()) {
  if (only && !file.includes(only)) continue
  console.log(`\n== ${file}`)
  const proc = Bun.spawn(['bun', `tests/bench/${file}`], { stdout: 'inherit', stderr: 'inherit', env: process.env })
  if ((await proc.exited) !== 0) process.exitCode = 1
}
