/**
 * Task-notification subscriptions over HTTP: create (Idempotency-Key, validation), read, list,
 * tenant isolation, the write/read permission split, and the inline `notifications` array of
 * task-creating requests producing the identical resource with the same permission.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { subscribeInline, type InlineNotification } from '../../server/notifications/inline'
import type { Principal } from '../../server/auth/principal'
import { findSubscription, renderSubscription } from '../../server/notifications/subscriptions'
import { seedTask } from '../helpers/tasks'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

let app: TestApp
let issuer: TestIssuer
let tenant: { id: string }
let writeKey: string
const tokens: Record<string, string> = {}
const keys: Record<string, string> = {}

const PATH = '/v1/task-notification-subscriptions'
/** A body naming a fresh running document of the workspace (a subscription must name a task of its kind). */
const webhookBody = async (over: Record<string, unknown> = {}, tenantId = tenant.id) => ({
  task_kind: 'document_ingestion', task_id: (await seedTask(app.sql, tenantId, 'document_ingestion')).id, channel: 'webhook', webhook: { url: 'https://hooks.example.test/svc?x=1' }, ...over,
})

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer }, runner: false })
  tenant = await app.tenant()
  writeKey = await app.apiKey(tenant.id, ['notifications:write'])
  for (const role of ['admin', 'reviewer', 'underwriter', 'viewer']) {
    await app.member(tenant.id, `sub-${role}`, role)
    tokens[role] = await issuer.token(`sub-${role}`)
  }
  for (const scope of ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'settings:write', 'embed:mint']) {
    keys[scope] = await app.apiKey(tenant.id, [scope])
  }
}, 120_000)
afterAll(async () => {
  await app.stop()
  issuer.stop()
}, 120_000)

describe('POST /v1/task-notification-subscriptions', () => {
  test('creates a webhook subscription: 201, Location, the resource, readable back identically', async () => {
    const body = await webhookBody()
    const r = await call(app.url, 'POST', PATH, { token: writeKey, body })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), task_kind: 'document_ingestion', task_id: body.task_id, channel: 'webhook',
      webhook: { url: 'https://hooks.example.test/svc?x=1' }, status: 'active', created_at: expect.any(String),
    })
    expect(new Date(r.body.created_at).toISOString()).toBe(r.body.created_at)
    expect(r.headers.get('location')).toBe(`${PATH}/${r.body.id}`)
    const g = await call(app.url, 'GET', `${PATH}/${r.body.id}`, { token: keys['scenarios:read'] })
    expect(g.status).toBe(200)
    expect(g.body).toEqual(r.body)
  })

  test('creates an email subscription without a webhook member', async () => {
    const r = await call(app.url, 'POST', PATH, { token: writeKey, body: { task_kind: 'evaluation_run', task_id: (await seedTask(app.sql, tenant.id, 'evaluation_run')).id, channel: 'email', email: { address: 'risk.team@example.com' } } })
    expect(r.status).toBe(201)
    expect(r.body.email).toEqual({ address: 'risk.team@example.com' })
    expect('webhook' in r.body).toBe(false)
  })

  test('Idempotency-Key: a replay returns the same subscription, a different body is 409, nothing is created twice', async () => {
    const body = await webhookBody()
    const headers = { 'idempotency-key': `k-${crypto.randomUUID()}` }
    const a = await call(app.url, 'POST', PATH, { token: writeKey, body, headers })
    const b = await call(app.url, 'POST', PATH, { token: writeKey, body, headers })
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(b.body).toEqual(a.body)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    const c = await call(app.url, 'POST', PATH, { token: writeKey, body: { ...body, channel: 'email', email: { address: 'x@example.com' }, webhook: undefined }, headers })
    expect(problemOf(c)).toMatchObject({ type: 'urn:svc:error:idempotency_conflict', status: 409 })
    const rows = await app.sql`select id from task_notification_subscriptions where task_id = ${body.task_id}`
    expect(rows).toHaveLength(1)
  })

  test('a URL scheme is case-insensitive: HTTPS:// subscribes like https:// (the document\'s pattern says so)', async () => {
    const r = await call(app.url, 'POST', PATH, { token: writeKey, body: await webhookBody({ webhook: { url: 'HTTPS://hooks.example.test/upper' } }) })
    expect(r.status).toBe(201)
  })

  test('an unknown task_kind is 422 with a pointer', async () => {
    const r = await call(app.url, 'POST', PATH, { token: writeKey, body: await webhookBody({ task_kind: 'coffee_break' }) })
    const p = problemOf(r)
    expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
    expect(p.errors!.map((e) => e.pointer)).toEqual(['/task_kind'])
  })

  const invalid: [string, Record<string, unknown>, string][] = [
    ['an http URL', { webhook: { url: 'http://hooks.example.test/a' } }, '/webhook/url'],
    ['an ftp URL', { webhook: { url: 'ftp://hooks.example.test/a' } }, '/webhook/url'],
    ['not a URL', { webhook: { url: 'hooks.example.test/a' } }, '/webhook/url'],
    ['credentials in the URL', { webhook: { url: 'https://user:pass@hooks.example.test/a' } }, '/webhook/url'],
    ['a host that is not ASCII (format uri; an IRI is not a URI)', { webhook: { url: 'https://b\u00fccher.example/a' } }, '/webhook/url'],
    ['a numeric last label (no IPv4 address)', { webhook: { url: 'https://hooks.123/a' } }, '/webhook/url'],
    ['a webhook channel without webhook', { webhook: undefined }, '/webhook'],
    ['a webhook channel with an email member too', { email: { address: 'a@example.com' } }, '/email'],
    ['an email channel with a bad address', { channel: 'email', webhook: undefined, email: { address: 'not an address' } }, '/email/address'],
    ['an email channel with a dotless domain', { channel: 'email', webhook: undefined, email: { address: 'a@localhost' } }, '/email/address'],
    ['a channel outside the enum', { channel: 'sms' }, '/channel'],
    ['a task_id that is not a UUID', { task_id: '42' }, '/task_id'],
  ]
  for (const [name, over, pointer] of invalid) {
    test(`${name} is 422 with pointer ${pointer}, nothing stored`, async () => {
      const body = await webhookBody(over)
      const r = await call(app.url, 'POST', PATH, { token: writeKey, body })
      const p = problemOf(r)
      expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
      expect(p.errors!.map((e) => e.pointer)).toContain(pointer)
      if (typeof body.task_id === 'string' && body.task_id.length === 36) {
        expect(await app.sql`select 1 from task_notification_subscriptions where task_id = ${body.task_id}`).toHaveLength(0)
      }
    })
  }

  test('write permission: admin and reviewer users and notifications:write keys; everyone else 403', async () => {
    for (const token of [tokens.admin!, tokens.reviewer!, writeKey]) {
      expect((await call(app.url, 'POST', PATH, { token, body: await webhookBody() })).status).toBe(201)
    }
    const refused = [tokens.underwriter!, tokens.viewer!, ...Object.values(keys)]
    for (const token of refused) {
      const r = await call(app.url, 'POST', PATH, { token, body: await webhookBody() })
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    }
    expect((await call(app.url, 'POST', PATH, { body: await webhookBody() })).status).toBe(401)
  })
})

describe('reading subscriptions', () => {
  test('reading is open to every member and to keys of the data scopes', async () => {
    const created = await call(app.url, 'POST', PATH, { token: writeKey, body: await webhookBody() })
    for (const token of [tokens.admin!, tokens.reviewer!, tokens.underwriter!, tokens.viewer!, writeKey,
      keys['scenarios:read']!, keys['scenarios:write']!, keys['question_sets:read']!, keys['question_sets:write']!]) {
      expect((await call(app.url, 'GET', `${PATH}/${created.body.id}`, { token })).status).toBe(200)
      expect((await call(app.url, 'GET', PATH, { token })).status).toBe(200)
    }
    expect((await call(app.url, 'GET', PATH, { token: keys['embed:mint'] })).status).toBe(403)
  })

  test("another workspace's subscription is 404 and absent from its list", async () => {
    const mine = await call(app.url, 'POST', PATH, { token: writeKey, body: await webhookBody() })
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['notifications:write'])
    const foreign = await call(app.url, 'GET', `${PATH}/${mine.body.id}`, { token: otherKey })
    expect(problemOf(foreign)).toMatchObject({ type: 'urn:svc:error:not_found', status: 404 })
    const absent = await call(app.url, 'GET', `${PATH}/${crypto.randomUUID()}`, { token: otherKey })
    expect(problemOf(absent).status).toBe(404)
    const list = await call(app.url, 'GET', `${PATH}?limit=200`, { token: otherKey })
    expect(list.body.items).toEqual([])
    expect((await call(app.url, 'GET', `${PATH}/not-a-uuid`, { token: writeKey })).status).toBe(400)
  })

  test('the list pages newest first, filters by task, and keeps its filters in the cursor', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['notifications:write'])
    const taskId = (await seedTask(app.sql, t.id, 'document_ingestion')).id
    const made: string[] = []
    for (let i = 0; i < 5; i++) {
      const r = await call(app.url, 'POST', PATH, { token: k, body: await webhookBody({ webhook: { url: `https://hooks.example.test/svc?n=${i}` }, ...(i < 3 ? { task_id: taskId } : {}) }, t.id) })
      made.push(r.body.id)
    }
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const r: any = await call(app.url, 'GET', `${PATH}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: k })
      expect(r.status).toBe(200)
      seen.push(...r.body.items.map((s: any) => s.id))
      cursor = r.body.next_cursor
    } while (cursor)
    expect(seen).toEqual([...made].reverse())
    const filtered = await call(app.url, 'GET', `${PATH}?task_id=${taskId}&limit=2`, { token: k })
    expect(filtered.body.items.map((s: any) => s.id)).toEqual([made[2], made[1]])
    const wrongScope = await call(app.url, 'GET', `${PATH}?limit=2&cursor=${encodeURIComponent(filtered.body.next_cursor)}`, { token: k })
    expect(problemOf(wrongScope)).toMatchObject({ type: 'urn:svc:error:invalid_cursor', status: 422 })
    const byKind = await call(app.url, 'GET', `${PATH}?task_kind=evaluation_run`, { token: k })
    expect(byKind.body.items).toEqual([])
    expect(problemOf(await call(app.url, 'GET', `${PATH}?task_kind=nope`, { token: k })).errors![0]!.pointer).toBe('/task_kind')
    expect(problemOf(await call(app.url, 'GET', `${PATH}?limit=201`, { token: k })).errors![0]!.pointer).toBe('/limit')
  })

  test('a task_id that is not a UUID is 400 malformed, like any query value that does not convert (issue 16, item 6)', async () => {
    for (const value of ['abc', '42', `${crypto.randomUUID()}x`, '']) {
      const p = problemOf(await call(app.url, 'GET', `${PATH}?task_id=${encodeURIComponent(value)}`, { token: writeKey }))
      expect([value, p.type, p.status]).toEqual([value, 'urn:svc:error:malformed', 400])
      expect(p.detail).toContain('task_id')
    }
    expect((await call(app.url, 'GET', `${PATH}?task_id=${crypto.randomUUID().toUpperCase()}`, { token: writeKey })).status).toBe(200)
  })
})

describe('inline notifications on task-creating requests', () => {
  const principal = async (kind: 'key' | 'user', grant: string): Promise<Principal> => {
    if (kind === 'key') return { kind: 'api_key', tenantId: tenant.id, tenantStatus: 'active', keyId: crypto.randomUUID(), scopes: [grant as never], environment: 'live' }
    return { kind: 'user', tenantId: tenant.id, tenantStatus: 'active', userId: crypto.randomUUID(), sub: 's', role: grant as never, operator: false }
  }
  const items: InlineNotification[] = [
    { channel: 'webhook', webhook: { url: 'https://hooks.example.test/inline' } },
    { channel: 'email', email: { address: 'inline@example.com' } },
  ]

  test('each item becomes a subscription identical to the standalone resource', async () => {
    const taskId = crypto.randomUUID()
    const rows = await app.sql.begin((tx) => subscribeInline(tx, { kind: 'api_key', tenantId: tenant.id, tenantStatus: 'active', keyId: 'k', scopes: ['notifications:write', 'scenarios:write'], environment: 'live' },
      { tenantId: tenant.id, taskKind: 'document_ingestion', taskId, items }))
    expect(rows).toHaveLength(2)
    const listed = await call(app.url, 'GET', `${PATH}?task_id=${taskId}`, { token: writeKey })
    expect(listed.body.items).toHaveLength(2)
    for (const s of listed.body.items) {
      const one = await call(app.url, 'GET', `${PATH}/${s.id}`, { token: writeKey })
      expect(one.body).toEqual(s)
      expect(renderSubscription((await findSubscription(app.sql, tenant.id, s.id))!)).toEqual(s)
    }
    await seedTask(app.sql, tenant.id, 'document_ingestion', taskId)
    const standalone = await call(app.url, 'POST', PATH, { token: writeKey, body: { task_kind: 'document_ingestion', task_id: taskId, channel: 'email', email: { address: 'inline@example.com' } } })
    const inlineEmail = listed.body.items.find((s: any) => s.channel === 'email')
    // Identical to the inline one: the standalone request converges on it.
    expect(standalone.status).toBe(200)
    expect(standalone.body).toEqual(inlineEmail)
    const strip = (s: any) => ({ ...s, id: undefined, created_at: undefined })
    expect(strip(inlineEmail)).toEqual(strip(standalone.body))
    expect(Object.keys(inlineEmail).sort()).toEqual(Object.keys(standalone.body).sort())
  })

  test('the same write permission: 403 for other principals, and the caller stores nothing', async () => {
    for (const [kind, grant] of [['key', 'scenarios:write'], ['key', 'question_sets:write'], ['user', 'underwriter'], ['user', 'viewer']] as const) {
      const taskId = crypto.randomUUID()
      const p = await principal(kind, grant)
      const attempt = app.sql.begin(async (tx) => {
        await tx`insert into scenarios (tenant_id, id, name) values (${tenant.id}, ${taskId}, 'caller work')`
        await subscribeInline(tx, p, { tenantId: tenant.id, taskKind: 'document_ingestion', taskId, items })
      })
      await expect(attempt).rejects.toMatchObject({ code: 'forbidden', status: 403 })
      expect(await app.sql`select 1 from task_notification_subscriptions where task_id = ${taskId}`).toHaveLength(0)
      expect(await app.sql`select 1 from scenarios where id = ${taskId}`).toHaveLength(0)
    }
    for (const [kind, grant] of [['key', 'notifications:write'], ['user', 'admin'], ['user', 'reviewer']] as const) {
      const rows = await app.sql.begin(async (tx) => subscribeInline(tx, await principal(kind, grant), { tenantId: tenant.id, taskKind: 'diff_run', taskId: crypto.randomUUID(), items }))
      expect(rows).toHaveLength(2)
    }
    // No items: nothing to check, nothing refused.
    expect(await app.sql.begin(async (tx) => subscribeInline(tx, await principal('key', 'scenarios:write'), { tenantId: tenant.id, taskKind: 'diff_run', taskId: crypto.randomUUID(), items: undefined }))).toEqual([])
  })

  test('invalid items are 422 with pointers under /notifications/i, all of them, nothing stored', async () => {
    const taskId = crypto.randomUUID()
    const bad: InlineNotification[] = [
      { channel: 'webhook', webhook: { url: 'https://ok.example.test/' } },
      { channel: 'webhook', webhook: { url: 'http://plain.example.test/' } },
      { channel: 'email', email: { address: 'nope' } },
      { channel: 'email' },
    ]
    const writer = await principal('key', 'notifications:write')
    const attempt = app.sql.begin((tx) => subscribeInline(tx, writer, { tenantId: tenant.id, taskKind: 'document_ingestion', taskId, items: bad }))
    await expect(attempt).rejects.toMatchObject({
      code: 'validation',
      options: { errors: [
        { pointer: '/notifications/1/webhook/url', message: expect.any(String) },
        { pointer: '/notifications/2/email/address', message: expect.any(String) },
        { pointer: '/notifications/3/email', message: expect.any(String) },
      ] },
    })
    expect(await app.sql`select 1 from task_notification_subscriptions where task_id = ${taskId}`).toHaveLength(0)
  })
})

