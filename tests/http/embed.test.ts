// The embed handoff mint, the session exchange and the session bearer's reach, over real HTTP:
// every rule of Authentication 9-10 and Errors 5-6, including a concurrent double exchange and an
// origin removed from the allow-list between mint and exchange.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { createHash } from 'node:crypto'
import { call, problemOf, startApp, type Reply, type TestApp } from '../helpers/app'
import { uploadAndComplete, settled, type SampleFile } from '../helpers/samples'
import { caseWith, evaluationEnded, packFiles, publishedSet } from '../helpers/underwriting-pack'

// The preload's default does not reach every file of a multi-file run: set it here too.
setDefaultTimeout(60_000)

const textFile = (text: string): SampleFile => ({ filename: 'note.txt', contentType: 'text/plain', bytes: new TextEncoder().encode(text) })

const HOST = 'https://host.example'
const OTHER_HOST = 'https://other-host.example:8443'

let app: TestApp
let tenant: { id: string; slug: string }
let mintKey: string
let writeKey: string
let settingsKey: string
let caseA: string
let caseB: string
let foreignCase: string
const alice = 'alice@example.test'
const bob = 'bob@example.test'

const mint = (body: Record<string, unknown>, token = mintKey) => call(app.url, 'POST', '/v1/embed/handoffs', { token, body })
const mintFor = async (scenarioId = caseA, email = alice, hostOrigin = HOST) => {
  const r = await mint({ scenario_id: scenarioId, host_origin: hostOrigin, subject_email: email })
  expect(r.status).toBe(201)
  return r.body.handoff as string
}
const exchange = (handoff: unknown, hostOrigin: unknown = HOST) => call(app.url, 'POST', '/v1/embed/sessions', { body: { handoff, host_origin: hostOrigin } })
const setOrigins = async (origins: string[]) => {
  const r = await call(app.url, 'PUT', '/v1/tenant-settings', { token: settingsKey, body: { embed_allowed_origins: origins } })
  expect(r.status).toBe(200)
}
const sessionFor = async (scenarioId = caseA) => {
  const r = await exchange(await mintFor(scenarioId))
  expect(r.status).toBe(201)
  return r.body.session as string
}
const sha256 = (s: string) => createHash('sha256').update(s).digest()

/** The parts of a 401 that must be identical whatever the cause. */
const shapeOf401 = (r: Reply) => {
  const p = problemOf(r)
  expect(r.status).toBe(401)
  expect(r.headers.get('www-authenticate')).toBe('Bearer')
  return { body: { ...p, request_id: undefined }, headers: [...r.headers.keys()].sort() }
}

beforeAll(async () => {
  app = await startApp()
  tenant = await app.tenant()
  mintKey = await app.apiKey(tenant.id, ['embed:mint'])
  writeKey = await app.apiKey(tenant.id, ['scenarios:write', 'scenarios:read'])
  settingsKey = await app.apiKey(tenant.id, ['settings:write'])
  await app.member(tenant.id, 'alice-sub', 'viewer', alice)
  await app.member(tenant.id, 'bob-sub', 'underwriter', bob)
  await app.sql`update users set status = 'deactivated' where tenant_id = ${tenant.id} and email = ${bob}`
  caseA = (await call(app.url, 'POST', '/v1/scenarios', { token: writeKey, body: { name: 'Case A' } })).body.id
  caseB = (await call(app.url, 'POST', '/v1/scenarios', { token: writeKey, body: { name: 'Case B' } })).body.id
  const other = await app.tenant()
  const otherKey = await app.apiKey(other.id, ['scenarios:write'])
  foreignCase = (await call(app.url, 'POST', '/v1/scenarios', { token: otherKey, body: { name: 'Foreign' } })).body.id
  await setOrigins([HOST, OTHER_HOST])
})
afterAll(() => app.stop())

describe('POST /v1/embed/handoffs', () => {
  test('mints {handoff, expires_at}: opaque, about 60 s, stored only as its SHA-256, not cached', async () => {
    const before = Date.now()
    const r = await mint({ scenario_id: caseA, host_origin: HOST, subject_email: alice })
    expect(r.status).toBe(201)
    expect(Object.keys(r.body).sort()).toEqual(['expires_at', 'handoff'])
    expect(r.body.handoff).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(r.headers.get('cache-control')).toBe('no-store')
    const ttl = Date.parse(r.body.expires_at) - before
    expect(ttl).toBeGreaterThan(55_000)
    expect(ttl).toBeLessThan(65_000)
    const rows = await app.sql`select * from embed_handoffs where tenant_id = ${tenant.id} and handoff_hash = ${sha256(r.body.handoff)}`
    expect(rows.length).toBe(1)
    expect(rows[0]).toMatchObject({ scenario_id: caseA, host_origin: HOST, subject_email: alice, spent_at: null })
    const all = await app.sql`select * from embed_handoffs`
    expect(JSON.stringify(all)).not.toContain(r.body.handoff)
  })

  test('needs an API key with embed:mint: other scopes are 403, no credential 401', async () => {
    const body = { scenario_id: caseA, host_origin: HOST, subject_email: alice }
    expect(problemOf(await mint(body, writeKey)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await mint(body, settingsKey)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await call(app.url, 'POST', '/v1/embed/handoffs', { body })).type).toBe('urn:svc:error:unauthorized')
  })

  test('embed:mint grants nothing else', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/scenarios', undefined],
      ['GET', `/v1/scenarios/${caseA}`, undefined],
      ['POST', '/v1/scenarios', { name: 'x' }],
      ['GET', '/v1/tenant-settings', undefined],
      ['GET', `/v1/scenarios/${caseA}/documents`, undefined],
    ] as const) {
      const r = await call(app.url, method, path, { token: mintKey, body })
      expect([r.status, problemOf(r).type]).toEqual([403, 'urn:svc:error:forbidden'])
    }
  })

  test('a non-UUID scenario_id is 422 with a pointer', async () => {
    const p = problemOf(await mint({ scenario_id: 'case-1', host_origin: HOST, subject_email: alice }))
    expect(p.status).toBe(422)
    expect(p.errors!.map((e) => e.pointer)).toEqual(['/scenario_id'])
  })

  test.each([
    ['http://host.example', 'http'],
    ['https://*.host.example', 'wildcard'],
    ['https://host.example/', 'trailing slash'],
    ['https://host.example/embed', 'path'],
    ['https://host.example?x=1', 'query'],
    ['https://host.example#top', 'fragment'],
    ['https://user@host.example', 'userinfo'],
    ['https://Host.Example', 'upper case'],
    ['https://host.example:443', 'default port spelt out'],
    ['host.example', 'no scheme'],
    ['*', 'bare wildcard'],
    [`https://${'a'.repeat(250)}.example`, 'over 255 characters'],
  ])('a malformed host_origin is 422: %s (%s)', async (origin) => {
    const p = problemOf(await mint({ scenario_id: caseA, host_origin: origin, subject_email: alice }))
    expect(p.status).toBe(422)
    expect(p.type).toBe('urn:svc:error:validation')
    expect(p.errors!.map((e) => e.pointer)).toEqual(['/host_origin'])
  })

  test('missing fields and a malformed email are 422 with pointers', async () => {
    const p = problemOf(await mint({}))
    expect(p.errors!.map((e) => e.pointer).sort()).toEqual(['/host_origin', '/scenario_id', '/subject_email'])
    const q = problemOf(await mint({ scenario_id: caseA, host_origin: HOST, subject_email: 'not an email' }))
    expect(q.errors!.map((e) => e.pointer)).toEqual(['/subject_email'])
  })

  test('never reveals whether the case or the person exists: unknown ones mint exactly alike', async () => {
    const known = await mint({ scenario_id: caseA, host_origin: HOST, subject_email: alice })
    const unknownCase = await mint({ scenario_id: crypto.randomUUID(), host_origin: HOST, subject_email: alice })
    const foreign = await mint({ scenario_id: foreignCase, host_origin: HOST, subject_email: alice })
    const unknownPerson = await mint({ scenario_id: caseA, host_origin: HOST, subject_email: 'nobody@example.test' })
    const inactive = await mint({ scenario_id: caseA, host_origin: HOST, subject_email: bob })
    for (const r of [unknownCase, foreign, unknownPerson, inactive]) {
      expect(r.status).toBe(known.status)
      expect(Object.keys(r.body).sort()).toEqual(Object.keys(known.body).sort())
      expect([...r.headers.keys()].sort()).toEqual([...known.headers.keys()].sort())
    }
  })
})

describe('POST /v1/embed/sessions', () => {
  test('exchanges a handoff for an opaque read-only bearer of about 30 minutes, stored hashed', async () => {
    const handoff = await mintFor()
    const before = Date.now()
    const r = await exchange(handoff)
    expect(r.status).toBe(201)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.body.session).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(r.body.scenario_id).toBe(caseA)
    expect(r.body.expires_in).toBe(1800)
    expect(r.body.time_zone).toBe('UTC') // the workspace's zone for the frame's times (no setting: UTC)
    const ttl = Date.parse(r.body.expires_at) - before
    expect(ttl).toBeGreaterThan(1795_000)
    expect(ttl).toBeLessThan(1805_000)
    const [row] = await app.sql`select * from embed_sessions where token_hash = ${sha256(r.body.session)}`
    expect(row).toMatchObject({ tenant_id: tenant.id, scenario_id: caseA, host_origin: HOST })
    expect(JSON.stringify(await app.sql`select * from embed_sessions`)).not.toContain(r.body.session)
    const [spent] = await app.sql`select spent_at from embed_handoffs where handoff_hash = ${sha256(handoff)}`
    expect(spent!.spent_at).toBeInstanceOf(Date)
    const g = await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: r.body.session })
    expect(g.status).toBe(200)
    expect(g.body.name).toBe('Case A')
  })

  test('single use: a second exchange is 401', async () => {
    const handoff = await mintFor()
    expect((await exchange(handoff)).status).toBe(201)
    shapeOf401(await exchange(handoff))
  })

  test('two concurrent exchanges of one handoff: exactly one wins', async () => {
    for (let i = 0; i < 3; i++) {
      const handoff = await mintFor()
      const results = await Promise.all([exchange(handoff), exchange(handoff), exchange(handoff)])
      expect(results.map((r) => r.status).sort()).toEqual([201, 401, 401])
    }
    const sessions = await app.sql`select handoff_id, count(*)::int as n from embed_sessions group by handoff_id having count(*) > 1`
    expect(sessions.length).toBe(0)
  })

  test('every failure is one identical 401, and a presented handoff is spent whatever the outcome', async () => {
    const failures: Reply[] = []
    // An origin other than the minted one (a listed one, even); then the handoff is spent.
    const h1 = await mintFor()
    failures.push(await exchange(h1, OTHER_HOST))
    failures.push(await exchange(h1, HOST))
    // Expired.
    const h2 = await mintFor()
    await app.sql`update embed_handoffs set expires_at = now() - interval '1 second' where handoff_hash = ${sha256(h2)}`
    failures.push(await exchange(h2))
    // Unknown person, inactive person, unknown case, another workspace's case.
    failures.push(await exchange(await mintFor(caseA, 'nobody@example.test')))
    failures.push(await exchange(await mintFor(caseA, bob)))
    failures.push(await exchange(await mintFor(crypto.randomUUID())))
    failures.push(await exchange(await mintFor(foreignCase)))
    // An origin that was never allow-listed (minted normally).
    failures.push(await exchange(await mintFor(caseA, alice, 'https://unlisted.example'), 'https://unlisted.example'))
    // Unknown, garbage and missing handoffs; missing origin; not an object.
    failures.push(await exchange('A'.repeat(43)))
    failures.push(await exchange('not-a-handoff'))
    failures.push(await exchange(undefined))
    failures.push(await call(app.url, 'POST', '/v1/embed/sessions', { body: { handoff: await mintFor() } }))
    failures.push(await call(app.url, 'POST', '/v1/embed/sessions', { body: [1, 2] }))
    failures.push(await call(app.url, 'POST', '/v1/embed/sessions', { body: {} }))
    const shapes = failures.map(shapeOf401)
    for (const s of shapes) expect(s).toEqual(shapes[0]!)
    expect(shapes[0]!.body).toMatchObject({ type: 'urn:svc:error:unauthorized', status: 401, instance: '/v1/embed/sessions' })
  })

  test('a body that is not JSON, another content type, an empty, oversized or unreadable body: the same 401', async () => {
    const post = (raw: BodyInit | undefined, contentType?: string) =>
      call(app.url, 'POST', '/v1/embed/sessions', { raw, headers: contentType !== undefined ? { 'content-type': contentType } : {} })
    const valid = async () => JSON.stringify({ handoff: await mintFor(), host_origin: HOST })
    const json = 'application/json'
    const failures: [string, Reply][] = [
      ['a failed exchange (unknown handoff)', await exchange('A'.repeat(43))],
      ['not JSON', await post('{"handoff": ', json)],
      ['not JSON at all', await post('handoff=abc&host_origin=x', json)],
      ['text/plain carrying a valid exchange', await post(await valid(), 'text/plain')],
      ['form-urlencoded', await post(`handoff=${await mintFor()}&host_origin=${encodeURIComponent(HOST)}`, 'application/x-www-form-urlencoded')],
      ['multipart', await post((() => { const f = new FormData(); f.set('handoff', 'x'); return f })())],
      ['no content type', await post(await valid(), '')],
      ['an empty body', await post(undefined, json)],
      ['an empty string body', await post('', json)],
      ['whitespace only', await post('   ', json)],
      ['JSON null', await post('null', json)],
      ['a JSON string', await post('"handoff"', json)],
      ['over 4 KiB', await post(JSON.stringify({ handoff: await mintFor(), host_origin: HOST, pad: 'x'.repeat(5000) }), json)],
      ['over the JSON limit (1 MiB)', await post(JSON.stringify({ handoff: await mintFor(), host_origin: HOST, pad: 'x'.repeat(1_100_000) }), json)],
      ['over the upload limit', await post(new Uint8Array(app.config.maxUploadBytes + 1_048_576).fill(0x20), json)],
      ['invalid UTF-8', await post(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), json)],
      ['nested 10,000 levels', await post(`{"handoff":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, json)],
      ['NUL in host_origin', await post(JSON.stringify({ handoff: await mintFor(), host_origin: `${HOST}\u0000` }), json)],
      ['unpaired surrogate in host_origin', await post(`{"handoff":"${await mintFor()}","host_origin":"\\ud800"}`, json)],
    ]
    const shapes = failures.map(([cause, r]) => {
      expect({ cause, status: r.status }).toEqual({ cause, status: 401 })
      return shapeOf401(r)
    })
    for (const s of shapes) expect(s).toEqual(shapes[0]!)
    // The route still takes a well-formed exchange with a charset parameter.
    expect((await post(await valid(), 'application/json; charset=utf-8')).status).toBe(201)
  })

  test('an origin removed from the allow-list between mint and exchange: 401', async () => {
    const handoff = await mintFor(caseA, alice, OTHER_HOST)
    await setOrigins([HOST])
    try {
      shapeOf401(await exchange(handoff, OTHER_HOST))
    } finally {
      await setOrigins([HOST, OTHER_HOST])
    }
    // The same flow with the origin still listed succeeds.
    expect((await exchange(await mintFor(caseA, alice, OTHER_HOST), OTHER_HOST)).status).toBe(201)
  })

  test('a suspended workspace cannot exchange', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['embed:mint', 'scenarios:write', 'settings:write'])
    await app.member(t.id, 'carol-sub', 'viewer', 'carol@example.test')
    await call(app.url, 'PUT', '/v1/tenant-settings', { token: k, body: { embed_allowed_origins: [HOST] } })
    const c = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'S' } })).body.id
    const h = (await mint({ scenario_id: c, host_origin: HOST, subject_email: 'carol@example.test' }, k)).body.handoff
    await app.sql`update tenants set status = 'suspended' where id = ${t.id}`
    shapeOf401(await exchange(h))
  })
})

describe('the session bearer', () => {
  let session: string
  let docId: string
  let otherDocId: string
  beforeAll(async () => {
    const file = textFile('Applicant: Jane Doe\n\nIncome: 85,000 EUR\n')
    const { doc } = await uploadAndComplete(app, writeKey, caseA, file)
    docId = doc.id
    await settled(app, writeKey, caseA, docId)
    const other = await uploadAndComplete(app, writeKey, caseB, textFile('Other case\n'))
    otherDocId = other.doc.id
    await settled(app, writeKey, caseB, otherDocId)
    session = await sessionFor(caseA)
  })

  test('reads its bound case and that case\'s sub-resources, the download included', async () => {
    expect((await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: session })).status).toBe(200)
    const list = await call(app.url, 'GET', `/v1/scenarios/${caseA}/documents`, { token: session })
    expect(list.status).toBe(200)
    expect(list.body.items.map((d: { id: string }) => d.id)).toEqual([docId])
    expect((await call(app.url, 'GET', `/v1/scenarios/${caseA}/documents/${docId}`, { token: session })).status).toBe(200)
    const blocks = await call(app.url, 'GET', `/v1/scenarios/${caseA}/documents/${docId}/blocks`, { token: session })
    expect(blocks.status).toBe(200)
    expect(blocks.body.items.length).toBeGreaterThan(0)
    const dl = await call(app.url, 'GET', `/v1/scenarios/${caseA}/documents/${docId}/download`, { token: session })
    expect(dl.status).toBe(200)
    expect(dl.text).toContain('Jane Doe')
  })

  test('another case (same workspace or not) looks absent', async () => {
    for (const path of [
      `/v1/scenarios/${caseB}`, `/v1/scenarios/${foreignCase}`, `/v1/scenarios/${crypto.randomUUID()}`,
      `/v1/scenarios/${caseB}/documents`, `/v1/scenarios/${caseB}/documents/${otherDocId}/download`,
    ]) {
      const r = await call(app.url, 'GET', path, { token: session })
      expect([path, r.status, problemOf(r).type]).toEqual([path, 404, 'urn:svc:error:not_found'])
    }
    // Another case's document under the bound case's path is absent too.
    expect((await call(app.url, 'GET', `/v1/scenarios/${caseA}/documents/${otherDocId}/download`, { token: session })).status).toBe(404)
  })

  test('lists, writes and everything outside the case are refused', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/scenarios', undefined],
      ['POST', '/v1/scenarios', { name: 'x' }],
      ['POST', `/v1/scenarios/${caseA}/documents`, { filename: 'a.txt', content_type: 'text/plain', size_bytes: 3 }],
      ['POST', `/v1/scenarios/${caseA}/documents/${docId}/complete`, {}],
      ['GET', '/v1/tenant-settings', undefined],
      ['PUT', '/v1/tenant-settings', { embed_allowed_origins: [] }],
      ['GET', '/v1/tenants/me', undefined],
      ['GET', '/v1/api-keys', undefined],
      ['POST', '/v1/embed/handoffs', { scenario_id: caseA, host_origin: HOST, subject_email: alice }],
    ] as const) {
      const r = await call(app.url, method, path, { token: session, body })
      expect([method, path, r.status]).toEqual([method, path, 403])
    }
  })

  test('an expired session, a deactivated person or a delisted origin: 401 like any bad credential', async () => {
    const expired = await sessionFor()
    await app.sql`update embed_sessions set expires_at = now() - interval '1 second' where token_hash = ${sha256(expired)}`
    const a = shapeOf401(await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: expired }))
    const garbage = shapeOf401(await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: 'x'.repeat(43) }))
    expect({ ...a.body, instance: undefined }).toEqual({ ...garbage.body, instance: undefined })

    const delisted = await sessionFor()
    await setOrigins([OTHER_HOST])
    try {
      shapeOf401(await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: delisted }))
    } finally {
      await setOrigins([HOST, OTHER_HOST])
    }
    expect((await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: delisted })).status).toBe(200)

    await app.member(tenant.id, 'dave-sub', 'viewer', 'dave@example.test')
    const daveSession = (await exchange(await mintFor(caseA, 'dave@example.test'))).body.session
    expect((await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: daveSession })).status).toBe(200)
    await app.sql`update users set status = 'deactivated' where tenant_id = ${tenant.id} and email = 'dave@example.test'`
    shapeOf401(await call(app.url, 'GET', `/v1/scenarios/${caseA}`, { token: daveSession }))
  })
})

describe('the session bearer on an evaluated case', () => {
  test('answers, decision, evidence, evaluations, reports and the event stream of the bound case: yes; of another case: absent', async () => {
    const key = await app.apiKey(tenant.id, ['scenarios:write', 'question_sets:write'])
    await publishedSet(app, key)
    const { scenario } = await caseWith(app, key, await packFiles())
    const started = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
    expect(started.status).toBe(202)
    expect((await evaluationEnded(app, key, scenario.id, started.body.id)).status).toBe('succeeded')
    const session = await sessionFor(scenario.id)
    for (const path of ['answers', 'decision', 'evidence', 'evaluations', `evaluations/${started.body.id}`, 'reports']) {
      const r = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/${path}`, { token: session })
      expect([path, r.status]).toEqual([path, 200])
    }
    const evidence = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evidence`, { token: session })
    expect(evidence.body.items[0]).toMatchObject({ document_id: expect.any(String), block_id: expect.any(String), quote: expect.any(String) })
    // The event stream answers with SSE for the bound case and 404 for another.
    const abort = new AbortController()
    const sse = await fetch(`${app.url}/v1/scenarios/${scenario.id}/events`, { headers: { authorization: `Bearer ${session}` }, signal: abort.signal })
    expect(sse.status).toBe(200)
    expect(sse.headers.get('content-type')).toContain('text/event-stream')
    abort.abort()
    for (const path of ['answers', 'decision', 'evidence', 'evaluations', 'reports', 'events']) {
      const r = await call(app.url, 'GET', `/v1/scenarios/${caseA}/${path}`.replace(caseA, caseB), { token: session })
      expect([path, r.status]).toEqual([path, 404])
    }
    // Starting work is a write: refused.
    expect((await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: session })).status).toBe(403)
    expect((await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/reports`, { token: session, body: {} })).status).toBe(403)
  })
})
