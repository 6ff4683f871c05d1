/**
 * The email channel against a real SMTP server (smtp-server): the envelope's information as
 * readable plain text and HTML, unsigned; SMTP refusals consume attempts with the same back-off,
 * 8 of them dead-letter, redeliver starts a new cycle.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, type TestApp } from '../helpers/app'
import { startSmtp, type SmtpServer } from '../helpers/smtp'
import { finish, startNotifyApp, subscribe, waitDelivery } from './support'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

let app: TestApp
let smtp: SmtpServer
let tenant: { id: string }
let key: string

beforeAll(async () => {
  smtp = await startSmtp()
  app = await startNotifyApp({ retryInitialMs: 30, env: { SVC_SMTP_URL: smtp.url, SVC_MAIL_FROM: 'notifications@svc.example.test' } })
  tenant = await app.tenant()
  key = await app.apiKey(tenant.id, ['notifications:write'])
}, 120_000)
afterAll(async () => {
  await app.stop()
  await smtp.stop()
}, 120_000)

describe('email notifications', () => {
  test('a delivery is a readable, unsigned mail with the same information as the envelope', async () => {
    const sub = await subscribe(app, key, { address: 'underwriting.ops@example.com' }, { kind: 'document_ingestion' })
    const resourcePath = `/v1/scenarios/${crypto.randomUUID()}/documents/${sub.task_id}`
    const count = smtp.messages.length
    const [deliveryId] = await finish(app, { tenantId: tenant.id, taskKind: 'document_ingestion', taskId: sub.task_id, result: 'unsupported_pending', resourcePath })
    const d = await waitDelivery(app, key, sub.id, deliveryId!)
    expect(d).toMatchObject({ status: 'delivered', attempts: 1, channel: 'email' })
    expect(d.history[0]).toMatchObject({ counted: true })
    expect(smtp.messages).toHaveLength(count + 1)
    const mail = smtp.messages.at(-1)!
    expect(mail.to).toEqual(['underwriting.ops@example.com'])
    expect(mail.from).toBe('notifications@svc.example.test')
    expect(mail.headers.subject).toContain('Task failed: document ingestion')
    expect(mail.headers['svc-delivery-id']).toBe(deliveryId)
    expect(mail.headers['svc-signature']).toBeUndefined()
    const facts = [
      'format not yet supported for automatic ingestion', `document ingestion ${sub.task_id}`, 'failed', 'unsupported_pending',
      // The time for people, in the workspace's zone (UTC when it has none); the envelope keeps UTC.
      `${d.payload.occurred_at.slice(0, 10)} ${d.payload.occurred_at.slice(11, 19)} GMT+00:00 (UTC)`, `${app.deps.config.baseUrl}${resourcePath}`, deliveryId!,
    ]
    for (const fact of facts) {
      expect(mail.text).toContain(fact)
      expect(mail.html).toContain(fact)
    }
    expect(mail.html).toContain(`<a href="${app.deps.config.baseUrl}${resourcePath}">`)
  })

  test("times are shown in the workspace's time_zone (Asia/Tokyo), the envelope keeps UTC", async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['notifications:write', 'settings:write'])
    expect((await call(app.url, 'PUT', '/v1/tenant-settings', { token: k, body: { time_zone: 'Asia/Tokyo' } })).status).toBe(200)
    const sub = await subscribe(app, k, { address: 'tokyo.desk@example.com' }, { kind: 'evaluation_run' })
    const [deliveryId] = await finish(app, { tenantId: t.id, taskKind: 'evaluation_run', taskId: sub.task_id, result: 'succeeded' })
    const d = await waitDelivery(app, k, sub.id, deliveryId!)
    expect(d.status).toBe('delivered')
    expect(d.payload.occurred_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    // Japan keeps UTC+9 all year: the local wall time is the UTC instant plus nine hours.
    const tokyo = new Date(Date.parse(d.payload.occurred_at) + 9 * 3_600_000).toISOString()
    const local = `${tokyo.slice(0, 10)} ${tokyo.slice(11, 19)} GMT+09:00 (Asia/Tokyo)`
    const mail = smtp.messages.find((m) => m.headers['svc-delivery-id'] === deliveryId)!
    expect(mail.text).toContain(`Occurred at: ${local}`)
    expect(mail.html).toContain(local)
    for (const body of [mail.text, mail.html]) {
      expect(body).not.toContain(d.payload.occurred_at)
      expect(body).not.toContain(d.payload.occurred_at.slice(11, 19))
    }
  })

  test('SMTP refusals consume attempts with growing gaps until the message is accepted', async () => {
    const sub = await subscribe(app, key, { address: 'retry@example.com' }, { kind: 'evaluation_run' })
    smtp.refuseNext(3)
    const [deliveryId] = await finish(app, { tenantId: tenant.id, taskKind: 'evaluation_run', taskId: sub.task_id, result: 'canceled' })
    const d = await waitDelivery(app, key, sub.id, deliveryId!)
    expect(d.status).toBe('delivered')
    expect(d.attempts).toBe(4)
    expect(d.history.map((h: any) => h.error ?? 'ok')).toEqual(['smtp_error', 'smtp_error', 'smtp_error', 'ok'])
    const at = d.history.map((h: any) => new Date(h.attempted_at).getTime())
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(26)
    expect(at[3] - at[2]).toBeGreaterThanOrEqual(155)
    const mail = smtp.messages.find((m) => m.headers['svc-delivery-id'] === deliveryId)!
    expect(mail.text).toContain('evaluation was canceled')
    expect(mail.text).toContain('evaluation_canceled')
  })

  test('8 refusals dead-letter; redeliver sends it with cumulative attempts', async () => {
    const sub = await subscribe(app, key, { address: 'dead@example.com' }, { kind: 'structure_task' })
    smtp.refuseNext(8)
    const [deliveryId] = await finish(app, { tenantId: tenant.id, taskKind: 'structure_task', taskId: sub.task_id, result: 'failed', reason: 'model unavailable' })
    const d = await waitDelivery(app, key, sub.id, deliveryId!)
    expect(d).toMatchObject({ status: 'dead_lettered', attempts: 8, dead_letter_reason: 'attempts_exhausted' })
    expect(smtp.messages.some((m) => m.headers['svc-delivery-id'] === deliveryId)).toBe(false)
    const re = await call(app.url, 'POST', `/v1/task-notification-subscriptions/${sub.id}/deliveries/${deliveryId}/redeliver`, { token: key })
    expect(re.status).toBe(202)
    const after = await waitDelivery(app, key, sub.id, deliveryId!)
    expect(after).toMatchObject({ status: 'delivered', attempts: 9, cycle: 2 })
    const mail = smtp.messages.find((m) => m.headers['svc-delivery-id'] === deliveryId)!
    expect(mail.text).toContain('structuring failed: model unavailable')
  }, 45_000)
})
