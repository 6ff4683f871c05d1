/**
 * Refused webhook targets dead-letter at once, with 0 attempts and no connection made: an http URL,
 * a workspace without a signing secret or with one no configured key decrypts, and every target whose address is loopback, private,
 * link-local, unique-local or IPv4-mapped loopback, including a hostname that resolves to
 * 127.0.0.1. A trap receiver on 127.0.0.1 proves no connection was attempted; the allowed receiver
 * on 127.0.0.2 (SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES) is the positive control.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, type TestApp } from '../helpers/app'
import { startReceiver, testPki, type Receiver } from '../helpers/https-receiver'
import { postWebhook } from '../../jobs/webhook-sender'
import { sealSecret } from '../../server/notifications/signing-secret'
import { onLogLine } from '../../server/observability/log'
import { randomBytes } from 'node:crypto'
import { connectedTo, finish, startNotifyApp, subscribe, waitDelivery } from './support'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

let app: TestApp
let receiver: Receiver
let trap: Receiver
let tenant: { id: string }
let key: string

beforeAll(async () => {
  receiver = await startReceiver({ host: '127.0.0.2' })
  trap = await startReceiver({ host: '127.0.0.1' })
  app = await startNotifyApp({ allow: ['127.0.0.2'] })
  tenant = await app.tenant()
  key = await app.apiKey(tenant.id, ['notifications:write'])
  const r = await call(app.url, 'POST', '/v1/webhook-signing-secret/rotate', { token: key })
  expect(r.status).toBe(200)
}, 120_000)
afterAll(async () => {
  await app.stop()
  await receiver.stop()
  await trap.stop()
}, 120_000)

/** Finishes a task for a fresh subscription to `url` and waits for its delivery to settle. */
async function deliverTo(url: string, opts: { tenantId?: string; token?: string; viaSql?: boolean } = {}) {
  const tenantId = opts.tenantId ?? tenant.id
  const token = opts.token ?? key
  let sub: { id: string; task_id: string }
  if (opts.viaSql) {
    // The API refuses http at write time; a row written before that rule (or by hand) is refused at send time.
    sub = { id: Bun.randomUUIDv7(), task_id: crypto.randomUUID() }
    await app.sql`insert into task_notification_subscriptions (tenant_id, id, task_kind, task_id, channel, webhook_url)
                  values (${tenantId}, ${sub.id}, 'document_ingestion', ${sub.task_id}, 'webhook', ${url})`
  } else {
    sub = await subscribe(app, token, { url })
  }
  const [deliveryId] = await finish(app, { tenantId, taskKind: 'document_ingestion', taskId: sub.task_id, result: 'succeeded' })
  const d = await waitDelivery(app, token, sub.id, deliveryId!)
  return { d, deliveryId: deliveryId! }
}

async function expectRefused(d: any, deliveryId: string, reason: string) {
  expect(d.status).toBe('dead_lettered')
  expect(d.attempts).toBe(0)
  expect(d.dead_letter_reason).toBe(reason)
  expect(d.history).toHaveLength(1)
  expect(d.history[0]).toMatchObject({ counted: false, error: reason, cycle: 1 })
  expect(d.history[0].response_status).toBeUndefined()
  // No retry is scheduled.
  const jobs = await app.sql`select id from jobs where payload ->> 'deliveryId' = ${deliveryId}`
  expect(jobs).toHaveLength(0)
}

describe('refused webhook targets', () => {
  test('the allowed receiver is reached (positive control)', async () => {
    const { d, deliveryId } = await deliverTo(receiver.url('/ok'))
    expect(d.status).toBe('delivered')
    expect(receiver.byDelivery(deliveryId)).toHaveLength(1)
  })

  const privateTargets: [string, () => string][] = [
    ['loopback literal 127.0.0.1', () => `https://127.0.0.1:${trap.port}/hook`],
    ['a hostname that resolves to 127.0.0.1 (localhost)', () => `https://localhost:${trap.port}/hook`],
    ['IPv4-mapped loopback ::ffff:127.0.0.1', () => `https://[::ffff:127.0.0.1]:${trap.port}/hook`],
    ['private 10/8', () => 'https://10.20.30.40/hook'],
    ['link-local 169.254/16 (metadata address)', () => 'https://169.254.169.254/latest/meta-data'],
    ['unique-local fc00::/7', () => 'https://[fc00::1]/hook'],
    ['unique-local fd00::/8', () => 'https://[fd12:3456::1]/hook'],
    ['IPv6 loopback ::1', () => `https://[::1]:${trap.port}/hook`],
    ['unspecified 0.0.0.0', () => `https://0.0.0.0:${trap.port}/hook`],
  ]
  for (const [name, url] of privateTargets) {
    test(`${name}: dead-lettered with 0 attempts and no connection`, async () => {
      const before = trap.connections
      const dialled = connectedTo.length
      const { d, deliveryId } = await deliverTo(url())
      expect(connectedTo.length).toBe(dialled) // the sender was never asked to connect
      await expectRefused(d, deliveryId, 'refused_private_address')
      expect(trap.connections).toBe(before)
      expect(trap.requests).toHaveLength(0)
    })
  }

  // IPv4-compatible IPv6 and the deprecated or special IPv6 ranges, as URL hosts. The rows are written
  // directly (a subscription's target is judged at send time, on every send).
  const specialV6Targets: [string, string][] = [
    ['IPv4-compatible loopback [::127.0.0.1]', '[::127.0.0.1]'],
    ['IPv4-compatible loopback, hex [::7f00:1]', '[::7f00:1]'],
    ['IPv4-compatible metadata address [::a9fe:a9fe]', '[::a9fe:a9fe]'],
    ['IPv4-compatible private [::10.0.0.1]', '[::10.0.0.1]'],
    ['IPv4-translated [::ffff:0:7f00:1]', '[::ffff:0:7f00:1]'],
    ['site-local fec0::/10', '[fec0::1]'],
    ['6to4 of 127.0.0.1', '[2002:7f00:1::1]'],
    ['6to4 of 169.254.169.254', '[2002:a9fe:a9fe::1]'],
    ['Teredo 2001::/32', '[2001::1]'],
    ['NAT64 of 127.0.0.1', '[64:ff9b::127.0.0.1]'],
    ['NAT64 of 10.0.0.1 (local-use 64:ff9b:1::/48)', '[64:ff9b:1::a00:1]'],
    ['ORCHID 2001:10::/28', '[2001:10::1]'],
    ['ORCHIDv2 2001:20::/28', '[2001:20::1]'],
    ['documentation 2001:db8::/32', '[2001:db8::1]'],
    ['documentation 3fff::/20', '[3fff::1]'],
    ['discard 100::/64', '[100::1]'],
    ['IETF-reserved ::1:0:0:1', '[::1:0:0:1]'],
  ]
  for (const [name, host] of specialV6Targets) {
    test(`${name}: dead-lettered at send time with 0 attempts and no connection`, async () => {
      const dialled = connectedTo.length
      const { d, deliveryId } = await deliverTo(`https://${host}:${trap.port}/hook`, { viaSql: true })
      expect(connectedTo.length).toBe(dialled)
      await expectRefused(d, deliveryId, 'refused_private_address')
      expect(trap.requests).toHaveLength(0)
    })
  }

  test('an http URL is refused at send time with 0 attempts (and at write time with 422)', async () => {
    const before = receiver.requests.length
    const { d, deliveryId } = await deliverTo(`http://127.0.0.2:${receiver.port}/plain`, { viaSql: true })
    await expectRefused(d, deliveryId, 'refused_http_url')
    expect(receiver.requests.length).toBe(before)
    const write = await call(app.url, 'POST', '/v1/task-notification-subscriptions', {
      token: key, body: { task_kind: 'document_ingestion', task_id: crypto.randomUUID(), channel: 'webhook', webhook: { url: `http://127.0.0.2:${receiver.port}/plain` } },
    })
    expect(write.status).toBe(422)
  })

  test('a workspace without a signing secret is refused with 0 attempts and no request', async () => {
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['notifications:write'])
    const before = receiver.requests.length
    const { d, deliveryId } = await deliverTo(receiver.url('/no-secret'), { tenantId: other.id, token: otherKey })
    await expectRefused(d, deliveryId, 'refused_no_signing_secret')
    expect(receiver.requests.length).toBe(before)
  })

  test('a signing secret no configured key decrypts (the key rolled back after a rotation) is refused at once; the log names the key problem once', async () => {
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['notifications:write'])
    // The workspace's secret as a process under another SVC_SECRET_KEY sealed it.
    const secretId = Bun.randomUUIDv7()
    await app.sql`insert into webhook_signing_secrets (tenant_id, id, secret_ciphertext, secret_last4)
                  values (${other.id}, ${secretId}, ${sealSecret(randomBytes(32), other.id, secretId, 'whsec_rolled_back_key_secret')}, 'cret')`
    const lines: string[] = []
    const stop = onLogLine((line) => { if (line.includes(secretId)) lines.push(line) })
    try {
      const before = receiver.requests.length
      for (let i = 0; i < 2; i++) {
        const { d, deliveryId } = await deliverTo(receiver.url(`/rolled-back-${i}`), { tenantId: other.id, token: otherKey })
        await expectRefused(d, deliveryId, 'refused_no_signing_secret')
      }
      expect(receiver.requests.length).toBe(before)
    } finally {
      stop()
    }
    const named = lines.filter((l) => l.includes('webhook signing secret cannot be decrypted'))
    expect(named).toHaveLength(1)
    expect(named[0]).toContain('"level":"error"')
    expect(named[0]).toContain('SVC_SECRET_KEY')
  })

  test('the connection goes to the checked address: the URL host is never resolved again', async () => {
    // receiver.test has no DNS entry at all; the request still reaches the checked 127.0.0.2 with
    // Host and SNI naming receiver.test (the certificate is issued for that name).
    const r = await postWebhook(new URL(`https://receiver.test:${receiver.port}/pinned?a=1`), { address: '127.0.0.2', family: 4 }, '{"x":1}', {}, {
      extraCa: [await Bun.file(testPki().caFile).text()],
    })
    expect(r).toMatchObject({ status: 204 })
    const last = receiver.requests.at(-1)!
    expect(last.path).toBe('/pinned?a=1')
    expect(last.headers.host).toBe(`receiver.test:${receiver.port}`)
    // A certificate that does not name the host is a TLS error, not a silent success.
    const bad = await postWebhook(new URL(`https://wrong.test:${receiver.port}/x`), { address: '127.0.0.2', family: 4 }, '{}', {}, {
      extraCa: [await Bun.file(testPki().caFile).text()],
    })
    expect(bad.error).toBe('tls_error')
    // An untrusted certificate (no extra CA) is a TLS error too.
    const untrusted = await postWebhook(new URL(`https://receiver.test:${receiver.port}/x`), { address: '127.0.0.2', family: 4 }, '{}', {})
    expect(untrusted.error).toBe('tls_error')
  })
})
