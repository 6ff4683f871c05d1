/**
 * The 15-line receiver of docs/notifications.md, run as written (with its port from the
 * environment), verifies signed deliveries through the package export and rejects forgeries.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import type { Subprocess } from 'bun'
import { signatureHeader } from '../../jobs/signing'

setDefaultTimeout(60_000)

const file = `receiver-doc-${crypto.randomUUID().slice(0, 8)}.tmp.ts`
let proc: Subprocess
let base = ''

beforeAll(async () => {
  const doc = readFileSync('docs/notifications.md', 'utf8')
  const section = doc.slice(doc.indexOf('## Verifying a webhook'))
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!
  expect(code.trim().split('\n')).toHaveLength(15)
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  writeFileSync(file, code.replace('.listen(8080)', '.listen(Number(process.env.RECEIVER_PORT))'))
  proc = Bun.spawn(['bun', file], { env: { ...process.env, RECEIVER_PORT: String(port), SVC_WEBHOOK_SECRET: 'whsec_now', SVC_WEBHOOK_SECRET_PREVIOUS: 'whsec_before' }, stdout: 'inherit', stderr: 'inherit' })
  base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    try { await fetch(base, { method: 'POST' }); break } catch { await Bun.sleep(50) }
  }
}, 60_000)
afterAll(() => {
  proc?.kill()
  rmSync(file, { force: true })
})

const send = (body: string, signature: string) =>
  fetch(`${base}/hook`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'svc-signature': signature, 'svc-delivery-id': 'd-1', 'svc-event-type': 'task.completed' } })

describe('the documented receiver', () => {
  const body = '{"schema_version":1,"delivery_id":"d-1","event_type":"task.completed"}'
  test('accepts the current and the previous secret', async () => {
    expect((await send(body, signatureHeader('whsec_now', body))).status).toBe(204)
    expect((await send(body, signatureHeader('whsec_before', body))).status).toBe(204)
  })
  test('rejects a forged, altered or stale delivery with the reason', async () => {
    const forged = await send(body, signatureHeader('whsec_guess', body))
    expect([forged.status, await forged.text()]).toEqual([400, 'signature_mismatch'])
    expect((await send(`${body} `, signatureHeader('whsec_now', body))).status).toBe(400)
    const stale = await send(body, signatureHeader('whsec_now', body, new Date(Date.now() - 301_000)))
    expect([stale.status, await stale.text()]).toEqual([400, 'timestamp_out_of_tolerance'])
    expect((await fetch(`${base}/hook`, { method: 'POST', body })).status).toBe(400)
  })
})
