import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { PROBLEM_CATALOGUE } from '../../server/http/problem'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer
let key: string
let tenantId: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({
    env: { SVC_OIDC_ISSUER: issuer.issuer },
    extend: (a) => a.get('/test-only/boom', () => { throw new Error('database password is hunter2 at /srv/internal.ts:12') }),
  })
  const t = await app.tenant()
  tenantId = t.id
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
  await app.member(t.id, 'member-1', 'underwriter')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const now = () => Math.floor(Date.now() / 1000)

describe('authentication failures are one identical 401', () => {
  test('every cause gives the same body but for request_id and instance', async () => {
    const revoked = await app.apiKey(tenantId, ['scenarios:read'])
    await app.sql`update api_keys set revoked_at = now() where key_prefix = ${revoked.slice(0, 13)}`
    const expiredKey = await app.apiKey(tenantId, ['scenarios:read'])
    await app.sql`update api_keys set expires_at = now() - interval '1 second' where key_prefix = ${expiredKey.slice(0, 13)}`
    const causes: Record<string, Record<string, string>> = {
      'no header': {},
      'not bearer': { authorization: `Basic ${btoa('a:b')}` },
      garbage: { authorization: 'Bearer garbage' },
      'foreign-key signature': { authorization: `Bearer ${await issuer.token('member-1', {}, { forged: true })}` },
      expired: { authorization: `Bearer ${await issuer.token('member-1', { exp: now() - 60 })}` },
      'other issuer': { authorization: `Bearer ${await issuer.token('member-1', {}, { issuer: 'https://evil.example' })}` },
      nonce: { authorization: `Bearer ${await issuer.token('member-1', { nonce: 'n-1' })}` },
      at_hash: { authorization: `Bearer ${await issuer.token('member-1', { at_hash: 'abc' })}` },
      'unknown subject': { authorization: `Bearer ${await issuer.token('nobody-at-all')}` },
      'unknown API key': { authorization: `Bearer svc_live_${'A'.repeat(43)}` },
      'malformed API key': { authorization: 'Bearer svc_live_short' },
      'revoked API key': { authorization: `Bearer ${revoked}` },
      'expired API key': { authorization: `Bearer ${expiredKey}` },
    }
    const bodies: string[] = []
    for (const [cause, headers] of Object.entries(causes)) {
      const r = await call(app.url, 'GET', '/v1/scenarios', { headers })
      expect(r.status, cause).toBe(401)
      expect(r.headers.get('www-authenticate'), cause).toBe('Bearer')
      const p = problemOf(r)
      expect(p.type).toBe('urn:svc:error:unauthorized')
      expect(p.title).toBe('Unauthorized')
      bodies.push(JSON.stringify({ ...p, request_id: null, instance: null }))
    }
    expect(new Set(bodies).size).toBe(1)
  })

  test('a valid member token is accepted and a valid token reaches the case list', async () => {
    const r = await call(app.url, 'GET', '/v1/scenarios', { token: await issuer.token('member-1') })
    expect(r.status).toBe(200)
    expect(r.headers.get('www-authenticate')).toBeNull()
  })

  test('WWW-Authenticate only on 401', async () => {
    const r = await call(app.url, 'POST', '/v1/scenarios', { token: await app.apiKey(tenantId, ['scenarios:read']), body: { name: 'x' } })
    expect(r.status).toBe(403)
    expect(r.headers.get('www-authenticate')).toBeNull()
  })
})

describe('request parsing', () => {
  test('a body that is not JSON is 400 malformed', async () => {
    const r = await call(app.url, 'POST', '/v1/scenarios', { token: key, raw: '{"name": ', headers: { 'content-type': 'application/json' } })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:malformed', status: 400, title: 'Malformed request', instance: '/v1/scenarios' })
  })

  test('a JSON body with another content type is 415 and creates nothing', async () => {
    const before = await app.sql`select count(*)::int as n from scenarios`
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await call(app.url, 'POST', '/v1/scenarios', { token: key, raw: '{"name":"x"}', headers: { 'content-type': ct } })
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:unsupported_media_type', status: 415, title: 'Unsupported media type' })
    }
    const none = await fetch(`${app.url}/v1/scenarios`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': '' }, body: new Blob(['{"name":"x"}']) })
    expect(none.status).toBe(415)
    const after = await app.sql`select count(*)::int as n from scenarios`
    expect(after[0]!.n).toBe(before[0]!.n)
  })

  test('application/json with a charset is accepted', async () => {
    const r = await call(app.url, 'POST', '/v1/scenarios', { token: key, raw: '{"name":"utf8 ✓"}', headers: { 'content-type': 'application/json; charset=utf-8' } })
    expect(r.status).toBe(201)
    expect(r.body.name).toBe('utf8 ✓')
  })

  test('a body over 1 MiB is 413, by Content-Length and when streamed', async () => {
    const big = JSON.stringify({ name: 'x', external_ref: 'y'.repeat(1_100_000) })
    const r = await call(app.url, 'POST', '/v1/scenarios', { token: key, raw: big, headers: { 'content-type': 'application/json' } })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:payload_too_large', status: 413, title: 'Payload too large' })
    const stream = new ReadableStream({
      start(c) { for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode('x'.repeat(100_000))); c.close() },
    })
    const s = await fetch(`${app.url}/v1/scenarios`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit)
    expect(s.status).toBe(413)
    expect(s.headers.get('content-type')).toBe('application/problem+json')
  })

  test('an unknown route is a 404 problem', async () => {
    const r = await call(app.url, 'GET', '/v1/nothing-here', { token: key })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:not_found', status: 404, title: 'Not found', instance: '/v1/nothing-here' })
    const events = await call(app.url, 'GET', '/v1/events', { token: key })
    expect(events.status).toBe(404)
  })

  test('a thrown exception is a 500 whose detail reveals nothing', async () => {
    const r = await call(app.url, 'GET', '/test-only/boom')
    const p = problemOf(r)
    expect(p).toMatchObject({ type: 'urn:svc:error:internal', status: 500, title: 'Internal error' })
    expect(r.text).not.toContain('hunter2')
    expect(r.text).not.toContain('internal.ts')
  })
})

describe('headers', () => {
  test('X-Request-Id: fresh UUID, or a safe inbound token echoed; unsafe inbound values replaced', async () => {
    const fresh = await call(app.url, 'GET', '/healthz')
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await call(app.url, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-abc.123' } })
    expect(echoed.headers.get('x-request-id')).toBe('trace-abc.123')
    const unsafe = await call(app.url, 'GET', '/v1/scenarios', { headers: { 'x-request-id': '<script>alert(1)</script>' } })
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(problemOf(unsafe).request_id).toBe(unsafe.headers.get('x-request-id')!)
    const long = await call(app.url, 'GET', '/healthz', { headers: { 'x-request-id': 'a'.repeat(65) } })
    expect(long.headers.get('x-request-id')).not.toBe('a'.repeat(65))
  })

  test('no CORS headers anywhere, OPTIONS included', async () => {
    const origin = { origin: 'https://evil.example', 'access-control-request-method': 'POST' }
    for (const [method, path] of [['OPTIONS', '/v1/scenarios'], ['GET', '/v1/scenarios'], ['GET', '/healthz'], ['OPTIONS', '/v1/openapi.json']] as const) {
      const r = await fetch(app.url + path, { method, headers: origin })
      const cors = [...r.headers.keys()].filter((h) => h.startsWith('access-control-'))
      expect(cors, `${method} ${path}`).toEqual([])
    }
  })

  test('the catalogue covers every row of the spec Errors table (plus method_not_allowed, 405 with Allow)', () => {
    expect(Object.keys(PROBLEM_CATALOGUE).sort()).toEqual([
      'budget_exceeded', 'conflict', 'forbidden', 'idempotency_conflict', 'internal', 'invalid_cursor', 'malformed',
      'method_not_allowed', 'not_admitted', 'not_found', 'payload_too_large', 'precondition_failed', 'rate_limited', 'tenant_suspended',
      'unauthorized', 'unavailable', 'unsupported_media_type', 'validation',
    ])
    expect(PROBLEM_CATALOGUE.tenant_suspended.status).toBe(403)
    expect(PROBLEM_CATALOGUE.budget_exceeded.status).toBe(402)
    expect(PROBLEM_CATALOGUE.invalid_cursor.status).toBe(422)
  })
})
