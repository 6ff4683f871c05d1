// The suite's own rules: Bun 1.4 applies setDefaultTimeout per file (the preload reaches only the
// first file of a run), so every test file sets it; and every test file asserts something.
import { expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const testFiles = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [])

test('every test file sets the long default timeout and asserts', () => {
  const files = testFiles('tests')
  expect(files.length).toBeGreaterThan(10)
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    expect(text.includes('setDefaultTimeout('), file).toBe(true)
    expect(/expect\(|assert/.test(text), file).toBe(true)
  }
})
