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

test('the log-credential check of the whole suite recognises every credential shape and minted value', async () => {
  const { credentialIn, rememberCredential, logViolations } = await import('../helpers/log-hygiene')
  for (const line of [
    '{"message":"x","key":"svc_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg"}',
    'whsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg',
    'inv_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghij',
    'authorization: Bearer abcdefghijklmnopqrstuvwxyz',
    'token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.sig',
    'https://bucket.s3/key?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abc',
    '/v1/uploads/t/d?expires=1&signature=abcdefghijklmnopqrstuvwxyz',
    'postgres://svc:hunter2@db:5432/svc',
  ]) expect(credentialIn(line), line).toBeString()
  const minted = 'Zx9' + crypto.randomUUID().replaceAll('-', '')
  rememberCredential(minted)
  expect(credentialIn(`{"embed":"${minted}"}`)).toBe('a minted credential')
  // Ordinary lines pass: ids, route templates, a traceparent.
  expect(credentialIn('{"level":"info","message":"request","route":"/v1/uploads/:tenantId/:documentId","request_id":"4bf92f35-77b3-4da6-a3ce-929d0e0e4736","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}')).toBeUndefined()
  // The preload watches this process's lines: none so far carried a credential.
  expect(logViolations()).toEqual([])
})
