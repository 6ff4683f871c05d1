// `svc listen`: a loopback receiver the running service delivers to while the command runs; each
// delivery is printed with a verified signature and forwarded. Without the command (or to any other
// loopback URL), delivery is still refused as a private address.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { spawnService, runCli, type ServiceProcess } from '../helpers/service-process'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { seedEmbeddedDataDir } from '../helpers/pgdata-template'
import { verifyWebhook } from '../../server/notifications/verify-webhook'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4

const root = resolve(import.meta.dir, '../..')
const dir = mkdtempSync(join(tmpdir(), 'svc-listen-'))
let db: TestDatabase
let svc: ServiceProcess
let env: Record<string, string | undefined>
let key: string
let listening: { kill(signal?: number | NodeJS.Signals): void } | undefined
const forwarded: { headers: Headers; body: string }[] = []
const forwardTarget = Bun.serve({
  hostname: '127.0.0.1', port: 0,
  async fetch(request) {
    forwarded.push({ headers: request.headers, body: await request.text() })
    return new Response('ok')
  },
})

beforeAll(async () => {
  db = await createTestDatabase()
  // A fresh embedded data directory holds an initialised cluster (no initdb); the service migrates it.
  if (!db.url) await seedEmbeddedDataDir(join(dir, 'data'), 'bare')
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = String(probe.port)
  probe.stop(true)
  env = {
    DATABASE_URL: db.url, SVC_DATA_DIR: join(dir, 'data'), SVC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    SVC_ACCESS_LOG: '0', PORT: port, SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES: undefined, SVC_WEBHOOK_CA_FILE: undefined,
  }
  svc = await spawnService(['bun', join(root, 'server/main.ts')], env)
  expect((await runCli(['tenant', 'create', '--slug', 'listen'], env)).code).toBe(0)
  key = (await runCli(['api-key', 'create', '--tenant', 'listen', '--name', 'k', '--scopes', 'scenarios:write,notifications:write'], env)).json.key
})

afterAll(async () => {
  listening?.kill('SIGKILL') // a failed run must not leave its listener behind
  await svc?.stop()
  forwardTarget.stop(true)
  await db?.drop()
  rmSync(dir, { recursive: true, force: true })
})

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${svc.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  return { status: res.status, body: (await res.json().catch(() => null)) as any }
}

/** Uploads a small text document and waits until its ingestion ended; returns its id. */
async function ingestedDocument(scenarioId: string, text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text)
  const made = await api('POST', `/v1/scenarios/${scenarioId}/documents`, { filename: 'note.txt', content_type: 'text/plain', size_bytes: bytes.length })
  expect(made.status).toBe(201)
  const put = await fetch(made.body.upload.url, { method: 'PUT', headers: made.body.upload.headers, body: bytes })
  expect(put.status).toBe(204)
  expect((await api('POST', `/v1/scenarios/${scenarioId}/documents/${made.body.id}/complete`)).status).toBe(202)
  for (let i = 0; i < 200; i++) {
    const doc = await api('GET', `/v1/scenarios/${scenarioId}/documents/${made.body.id}`)
    if (doc.body.status !== 'processing') return made.body.id
    await Bun.sleep(100)
  }
  throw new Error('ingestion did not end')
}

/** Lines read from a child's stream as they come. */
function lines(stream: ReadableStream<Uint8Array>) {
  const seen: string[] = []
  void (async () => {
    let rest = ''
    for await (const chunk of stream) {
      rest += new TextDecoder().decode(chunk)
      const parts = rest.split('\n')
      rest = parts.pop()!
      seen.push(...parts)
    }
  })()
  return {
    seen,
    async waitFor(match: (line: string) => boolean, ms = 30_000): Promise<string> {
      const deadline = Date.now() + ms
      while (Date.now() < deadline) {
        const hit = seen.find(match)
        if (hit) return hit
        await Bun.sleep(50)
      }
      throw new Error(`no matching line within ${ms} ms; saw:\n${seen.join('\n')}`)
    },
  }
}

async function deliveriesOf(taskId: string) {
  const subs = await api('GET', `/v1/task-notification-subscriptions?task_id=${taskId}`)
  expect(subs.status).toBe(200)
  const out: any[] = []
  for (const s of subs.body.items) out.push(...(await api('GET', `/v1/task-notification-subscriptions/${s.id}/deliveries`)).body.items.map((d: any) => ({ ...d, url: s.webhook?.url })))
  return out
}

test('svc listen prints each delivery with a verified signature and forwards it; its URL is exempt only while it runs', async () => {
  const scenario = await api('POST', '/v1/scenarios', { name: 'Listen case' })
  expect(scenario.status).toBe(201)

  const childEnv: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) childEnv[k] = v
  const listen = Bun.spawn(['bun', join(root, 'server/cli.ts'), 'listen', '--tenant', 'listen', '--forward-to', `http://127.0.0.1:${forwardTarget.port}/hook`, '--refresh-ms', '300'],
    { env: childEnv, stdout: 'pipe', stderr: 'pipe' })
  listening = listen
  const out = lines(listen.stdout)
  const err = lines(listen.stderr)
  const receiving = await err.waitFor((l) => l.includes('receiving at https://127.0.0.1:'))
  const listenerUrl = /receiving at (\S+)/.exec(receiving)![1]!
  expect(err.seen.join('\n')).toContain('minted its first one')

  // A task made after the listener started: the listener subscribes to it and the service delivers.
  const documentId = await ingestedDocument(scenario.body.id, 'Listened document')
  const printed = JSON.parse(await out.waitFor((l) => l.includes(documentId)))
  expect(printed).toMatchObject({ verified: true, secret: 'current', event_type: 'task.completed' })
  expect(printed.envelope).toMatchObject({ task_kind: 'document_ingestion', task_id: documentId, delivery_id: printed.delivery_id })
  expect(printed.forwarded).toMatchObject({ status: 200 })
  const forward = forwarded.find((f) => f.body.includes(documentId))!
  expect(forward.headers.get('svc-signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)
  expect(forward.headers.get('svc-delivery-id')).toBe(printed.delivery_id)
  expect(JSON.parse(forward.body)).toEqual(printed.envelope)
  // The signature is the service's real one: it verifies with the package helper only with the real secret.
  expect(verifyWebhook(forward.body, forward.headers, 'whsec_wrong').ok).toBe(false)
  const [delivered] = await deliveriesOf(documentId)
  expect(delivered).toMatchObject({ status: 'delivered', url: listenerUrl })

  // Another loopback URL is not exempt, even while the listener runs.
  const second = await ingestedDocument(scenario.body.id, 'Second document')
  const other = listenerUrl.replace(/:\d+\//, ':9/')
  expect((await api('POST', '/v1/task-notification-subscriptions', { task_kind: 'document_ingestion', task_id: second, channel: 'webhook', webhook: { url: other } })).status).toBe(201)
  await waitUntil(async () => (await deliveriesOf(second)).some((d) => d.url === other && d.status === 'dead_lettered'))
  expect((await deliveriesOf(second)).find((d) => d.url === other)).toMatchObject({ status: 'dead_lettered', dead_letter_reason: 'refused_private_address' })

  listen.kill('SIGINT')
  expect(await listen.exited).toBe(0)
  await err.waitFor((l) => l.includes('the exemption is gone'))

  // Without the command, the same URL is refused like any private address.
  const third = await ingestedDocument(scenario.body.id, 'Third document')
  expect((await api('POST', '/v1/task-notification-subscriptions', { task_kind: 'document_ingestion', task_id: third, channel: 'webhook', webhook: { url: listenerUrl } })).status).toBe(201)
  await waitUntil(async () => (await deliveriesOf(third)).some((d) => d.status === 'dead_lettered'))
  expect((await deliveriesOf(third))[0]).toMatchObject({ status: 'dead_lettered', dead_letter_reason: 'refused_private_address' })
  expect(svc.output()).toContain('development listener (svc listen)')
})

async function waitUntil(check: () => Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await Bun.sleep(200)
  }
  throw new Error('condition not met in time')
}
