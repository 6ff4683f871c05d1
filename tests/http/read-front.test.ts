/**
 * The read front (server/resources/read-front.ts) answers exactly as the framework path does: the
 * same requests go to the app with the front on and to the same app built with SVC_READ_FRONT=0
 * (same database, same credentials), and status, the headers a client can see, the request id's
 * shape and the body are compared. The front's own counter proves which requests it served and
 * which it left to Elysia; access lines and metrics are recorded on both paths alike.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { createApp } from '../../server/app'
import { SERVER_BODY_LIMIT } from '../../server/http/body'
import { readFrontServed } from '../../server/resources/read-front'
import { onLogLine } from '../../server/observability/log'
import { invalidateCredentials } from '../../server/auth/credential-cache'
import { revokeApiKey } from '../../server/workspaces/api-keys-store'
import { updateTenantStatus } from '../../server/workspaces/tenants-store'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let framework: ReturnType<typeof createApp>
let frameworkUrl: string
const ids = { own: '', foreign: '' }
const keys = { read: '', write: '', wrongScope: '', revoked: '', suspended: '', foreign: '' }
let tenantId = ''
let suspendedId = ''
let suspendedTenant = ''
const lines: Record<string, unknown>[] = []
let stopWatching: () => void

beforeAll(async () => {
  stopWatching = onLogLine((line) => { if (line.includes('"message":"request"')) lines.push(JSON.parse(line)) })
  app = await startApp({ runner: false, env: { SVC_METRICS_PORT: '0' } })
  expect(app.deps.config.readFront).toBe(true)
  // The framework path: the same dependencies (database, authenticator and its cache, logger,
  // metrics), the front switched off, on a listener of its own.
  framework = createApp({ ...app.deps, config: { ...app.deps.config, readFront: false } })
  framework.listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: SERVER_BODY_LIMIT })
  frameworkUrl = `http://127.0.0.1:${framework.server!.port}`

  const t = await app.tenant()
  tenantId = t.id
  keys.read = await app.apiKey(t.id, ['scenarios:read'])
  keys.write = await app.apiKey(t.id, ['scenarios:write'])
  keys.wrongScope = await app.apiKey(t.id, ['question_sets:read'])
  keys.revoked = await app.apiKey(t.id, ['scenarios:read'])
  const other = await app.tenant()
  keys.foreign = await app.apiKey(other.id, ['scenarios:read', 'scenarios:write'])
  const suspended = await app.tenant()
  suspendedTenant = suspended.id
  keys.suspended = await app.apiKey(suspended.id, ['scenarios:read', 'scenarios:write'])
  const create = async (key: string, body: unknown) => (await (await fetch(`${app.url}/v1/scenarios`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  })).json() as { id: string }).id
  ids.own = await create(keys.write, { name: 'Front case', external_ref: 'front-1', vertical: 'mortgage' })
  ids.foreign = await create(keys.foreign, { name: 'Other case' })
  suspendedId = await create(keys.suspended, { name: 'Suspended case' })
  await app.sql.begin((tx) => updateTenantStatus(tx, suspended.id, 'suspended'))
  const [row] = await app.sql`select id from api_keys where key_prefix = ${keys.revoked.slice(0, 13)}`
  await app.sql.begin((tx) => revokeApiKey(tx, t.id, row!.id))
  invalidateCredentials()
})
afterAll(async () => {
  stopWatching()
  await framework.stop(true)
  await app.stop()
})

/** What a client sees of a response, with the per-request values (request id, date) checked and set aside. */
async function seen(base: string, method: string, path: string, headers: Record<string, string>) {
  const r = await fetch(base + path, { method, headers })
  const text = await r.text()
  const requestId = r.headers.get('x-request-id')
  const header: Record<string, string> = {}
  r.headers.forEach((v, k) => { if (k !== 'date' && k !== 'x-request-id') header[k] = v })
  let body: unknown = text
  if (text !== '') {
    const parsed = JSON.parse(text) as Record<string, unknown>
    if ('request_id' in parsed) {
      expect(parsed.request_id).toBe(requestId!) // a problem names the request's own id
      parsed.request_id = '<request id>'
    }
    body = parsed
  }
  return { status: r.status, header, requestId, body }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** Sends one request through both paths; returns what the front side answered and whether the front served it. */
async function both(method: string, path: string, headers: Record<string, string>, expectedRequestId?: string) {
  const before = readFrontServed()
  const front = await seen(app.url, method, path, headers)
  const servedByFront = readFrontServed() - before
  const plain = await seen(frameworkUrl, method, path, headers)
  expect(readFrontServed() - before).toBe(servedByFront) // the framework app never takes the front
  expect({ status: front.status, header: front.header, body: front.body }).toEqual({ status: plain.status, header: plain.header, body: plain.body })
  for (const r of [front, plain]) {
    if (expectedRequestId) expect(r.requestId).toBe(expectedRequestId)
    else expect(r.requestId).toMatch(UUID)
  }
  return { ...front, plainRequestId: plain.requestId, servedByFront: servedByFront === 1 }
}

describe('the read front answers as the framework does', () => {
  test('a case read with a read key and with a write key (200)', async () => {
    for (const key of [keys.read, keys.write]) {
      const r = await both('GET', `/v1/scenarios/${ids.own}`, bearer(key))
      expect(r.status).toBe(200)
      expect(r.servedByFront).toBe(true)
      expect(r.header['content-type']).toBe('application/json;charset=utf-8')
      expect(r.body).toMatchObject({ id: ids.own, name: 'Front case', external_ref: 'front-1', vertical: 'mortgage', status: 'created' })
    }
  })

  test('the id in upper case reads the same case', async () => {
    const r = await both('GET', `/v1/scenarios/${ids.own.toUpperCase()}`, bearer(keys.read))
    expect(r.status).toBe(200)
    expect(r.servedByFront).toBe(true)
  })

  test("another workspace's case and an unknown id are 404 problems", async () => {
    for (const id of [ids.foreign, crypto.randomUUID()]) {
      const r = await both('GET', `/v1/scenarios/${id}`, bearer(keys.read))
      expect(r.status).toBe(404)
      expect(r.servedByFront).toBe(true)
      expect(r.header['content-type']).toBe('application/problem+json')
      expect(r.header['cache-control']).toBe('no-store')
    }
  })

  test('refusals of the credential: 401 for a revoked, unknown or malformed key, 403 for a wrong scope or a suspended workspace', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      [ids.own, bearer(keys.revoked), 401, 'unauthorized'],
      [ids.own, bearer(`svc_live_${'A'.repeat(43)}`), 401, 'unauthorized'],
      [ids.own, bearer('svc_test_short'), 401, 'unauthorized'],
      [ids.own, { authorization: `Bearer ${keys.read} extra` }, 401, 'unauthorized'],
      [ids.own, bearer(keys.wrongScope), 403, 'forbidden'],
      [suspendedId, bearer(keys.suspended), 403, 'tenant_suspended'],
    ]
    for (const [id, headers, status, code] of cases) {
      const r = await both('GET', `/v1/scenarios/${id}`, headers)
      expect(r.status).toBe(status)
      expect((r.body as { type: string }).type).toBe(`urn:svc:error:${code}`)
      expect(r.servedByFront).toBe(true)
      if (status === 401) expect(r.header['www-authenticate']).toBe('Bearer')
    }
  })

  test('the caller\'s X-Request-Id is kept and a traceparent gives the trace id as the request id', async () => {
    const mine = await both('GET', `/v1/scenarios/${ids.own}`, { ...bearer(keys.read), 'x-request-id': 'front-check.1' }, 'front-check.1')
    expect(mine.servedByFront).toBe(true)
    const missing = await both('GET', `/v1/scenarios/${crypto.randomUUID()}`, { ...bearer(keys.read), 'x-request-id': 'front-check.2' }, 'front-check.2')
    expect(missing.status).toBe(404)
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const traced = await both('GET', `/v1/scenarios/${ids.own}`, { ...bearer(keys.read), traceparent: `00-${traceId}-00f067aa0ba902b7-01` }, '4bf92f35-77b3-4da6-a3ce-929d0e0e4736')
    expect(traced.servedByFront).toBe(true)
  })

  test('what the front leaves to the framework gets the framework\'s answer', async () => {
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ['GET', '/v1/scenarios/not-a-uuid', bearer(keys.read), 400], // malformed id
      ['GET', `/v1/scenarios/${ids.own}x`, bearer(keys.read), 400],
      ['GET', '/v1/scenarios/not-a-uuid', {}, 401], // the credential is judged before the id
      ['GET', `/v1/scenarios/${ids.own}`, {}, 401], // no credential
      ['GET', `/v1/scenarios/${ids.own}`, { authorization: 'Basic abc' }, 401],
      ['GET', `/v1/scenarios/${ids.own}`, { authorization: 'Bearer not-a-key' }, 401], // not an API key: embed sessions, tokens
      ['GET', `/v1/scenarios/${ids.own}`, { authorization: `bearer ${keys.read}` }, 200], // another spelling of the scheme
      ['GET', `/v1/scenarios/${ids.own}?x=1`, bearer(keys.read), 200], // a query string
      ['GET', `/v1/scenarios/${ids.own}?x=%FF`, bearer(keys.read), 400], // one that is not UTF-8
      ['GET', `/v1/scenarios/${ids.own}`, { ...bearer(keys.read), 'svc-tenant-id': tenantId }, 200], // break-glass header, own workspace
      ['GET', `/v1/scenarios/${ids.own}`, { ...bearer(keys.read), 'svc-tenant-id': suspendedTenant }, 403], // another workspace
      ['GET', `/v1/scenarios/${ids.own}`, { ...bearer(keys.read), 'svc-tenant-id': 'nope' }, 400],
      ['HEAD', `/v1/scenarios/${ids.own}`, bearer(keys.read), 200],
      ['HEAD', `/v1/scenarios/${ids.own}`, {}, 401],
      ['DELETE', `/v1/scenarios/${ids.own}`, bearer(keys.write), 405],
    ]
    for (const [method, path, headers, status] of cases) {
      const r = await both(method, path, headers)
      expect(`${method} ${path} ${r.status}`).toBe(`${method} ${path} ${status}`)
      expect(r.servedByFront).toBe(false)
    }
  })
})

describe('observability on the front', () => {
  test('access lines and metrics are recorded as on the framework path', async () => {
    const scrape = async () => (await fetch(app.metricsUrl!)).text()
    const count = (text: string, status: number) => {
      const m = new RegExp(`^svc_http_requests_total\\{method="GET",route="/v1/scenarios/:scenarioId",status="${status}"\\} (\\d+)$`, 'm').exec(text)
      return m ? Number(m[1]) : 0
    }
    const before = await scrape()
    lines.length = 0
    const ok = await both('GET', `/v1/scenarios/${ids.own}`, bearer(keys.read))
    const missing = await both('GET', `/v1/scenarios/${ids.foreign}`, bearer(keys.read))
    expect(ok.servedByFront && missing.servedByFront).toBe(true)
    // The framework path records after its response is sent: wait for its lines (not a retry: the count is checked once).
    for (const until = Date.now() + 10_000; lines.length < 4 && Date.now() < until;) await Bun.sleep(10)
    const after = await scrape()
    expect(count(after, 200) - count(before, 200)).toBe(2)
    expect(count(after, 404) - count(before, 404)).toBe(2)
    const shape = (l: Record<string, unknown>) => ({ ...l, time: '', request_id: '', trace_id: '', duration_ms: 0 })
    expect(lines.length).toBe(4)
    const lineOf = (requestId: string | null) => lines.find((l) => l.request_id === requestId)!
    const [okFront, okPlain, missingFront, missingPlain] = [ok.requestId, ok.plainRequestId, missing.requestId, missing.plainRequestId].map(lineOf)
    for (const l of lines) {
      expect(l.route).toBe('/v1/scenarios/:scenarioId')
      expect(l.tenant_id).toBe(tenantId)
      expect(l.request_id).toMatch(UUID)
      expect(l.trace_id).toBe(String(l.request_id).replaceAll('-', ''))
    }
    expect(shape(okFront!)).toEqual(shape(okPlain!))
    expect(shape(missingFront!)).toEqual(shape(missingPlain!))
    expect(okFront).toMatchObject({ method: 'GET', status: 200, bytes: Number(ok.header['content-length']) })
    expect(missingFront).toMatchObject({ status: 404, bytes: Number(missing.header['content-length']) })
  })
})
