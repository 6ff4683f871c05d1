/**
 * Every input gets its problem: on every operation with a JSON body (from the OpenAPI document),
 * a NUL or an unpaired surrogate in a string or a member name, JSON nested 10,000 levels, invalid
 * UTF-8 and bodies over the JSON and upload limits each end in a problem object, never a 5xx.
 * Then the exact answers where a credential reaches the rule: 422 with the pointer, nothing stored.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(120_000)

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'settings:write', 'notifications:write', 'embed:mint'])
})
afterAll(() => app?.stop())

const enc = new TextEncoder()
const NUL = '{"name":"a\\u0000b","external_ref":"x"}'
const SURROGATE = '{"name":"broken \\ud800 text"}'
const NUL_KEY = '{"a\\u0000b":1}'
const DEEP = `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
const BAD_UTF8 = new Uint8Array([...enc.encode('{"name":"'), 0xff, 0xfe, 0xc3, ...enc.encode('"}')])
const OVER_JSON = `{"name":"${'x'.repeat(1_048_577)}"}`

/** Sends a raw JSON body to `method path` with the all-scope key. */
const send = (method: string, path: string, body: BodyInit) =>
  call(app.url, method, path, { token: key, raw: body, headers: { 'content-type': 'application/json' } })

describe('every operation with a body', () => {
  test('NUL, unpaired surrogates, NUL keys, deep nesting, invalid UTF-8 and oversized bodies are problems, never 5xx', async () => {
    const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
    const ops: [string, string][] = []
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      if (!path.startsWith('/v1/') || path.startsWith('/v1/uploads/')) continue
      for (const method of ['post', 'put', 'patch']) if (item[method]) ops.push([method.toUpperCase(), path.replace(/\{[^}]+\}/g, () => crypto.randomUUID())])
    }
    expect(ops.length).toBeGreaterThanOrEqual(30)
    const cases: [string, BodyInit, number[]][] = [
      ['NUL', NUL, [422]],
      ['unpaired surrogate', SURROGATE, [422]],
      ['NUL in a member name', NUL_KEY, [422]],
      ['10,000 levels', DEEP, [400]],
      ['invalid UTF-8', BAD_UTF8, [400]],
      ['over the JSON limit', OVER_JSON, [413]],
    ]
    const seen: string[] = []
    for (const [method, path] of ops) {
      for (const [name, body, statuses] of cases) {
        const r = await send(method, path, body)
        const p = problemOf(r)
        expect(p.type).toStartWith('urn:svc:error:')
        seen.push(`${method} ${path.replace(/[0-9a-f-]{36}/g, '{id}')} ${name} -> ${r.status}`)
        // The embed session exchange answers every failure, an unreadable body included, with the same 401.
        const expected = path === '/v1/embed/sessions' ? [401] : statuses
        expect({ op: `${method} ${path}`, name, ok: expected.includes(r.status) }).toEqual({ op: `${method} ${path}`, name, ok: true })
      }
    }
    expect(seen.length).toBe(ops.length * cases.length)
  })

  test('a body over the upload limit sent to a JSON route is a 413 problem, not the server\'s bare refusal', async () => {
    const big = new Uint8Array(app.config.maxUploadBytes + 2 * 1_048_576).fill(0x20)
    const r = await send('POST', '/v1/scenarios', big)
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:payload_too_large', status: 413 })
  })
})

describe('the exact answers', () => {
  test('a NUL in a case name is 422 at /name and nothing is stored; an unpaired surrogate in question text 422 at its pointer', async () => {
    const r = await send('POST', '/v1/scenarios', NUL)
    expect(problemOf(r)).toMatchObject({ status: 422, type: 'urn:svc:error:validation', errors: [{ pointer: '/name', message: 'must not contain NUL (U+0000)' }] })
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).body.items).toEqual([])
    const set = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'Hygiene' } })
    const v = await send('POST', `/v1/question-sets/${set.body.id}/versions`,
      '{"questions":[{"key":"q1","text":"Fine","criticality":"minor","answer_type":"text"},{"key":"q2","text":"Broken \\udc00 here","criticality":"minor","answer_type":"text"}]}')
    expect(problemOf(v)).toMatchObject({ status: 422, errors: [{ pointer: '/questions/1/text', message: 'must not contain an unpaired surrogate (U+D800-U+DFFF)' }] })
    const key2 = await send('POST', '/v1/scenarios', '{"name":"ok","meta/x~y\\u0000":1}')
    expect(problemOf(key2).errors).toEqual([{ pointer: '/meta~1x~0y\u0000', message: 'a member name must not contain NUL (U+0000)' }])
  })

  test('invalid UTF-8 (body or query string) and deep nesting are 400 malformed; a NUL in a query value is 400; well-paired surrogates (emoji) are fine', async () => {
    expect(problemOf(await send('POST', '/v1/scenarios', BAD_UTF8))).toMatchObject({ status: 400, type: 'urn:svc:error:malformed', detail: 'The request body is not valid UTF-8.' })
    expect(problemOf(await send('POST', '/v1/scenarios', DEEP))).toMatchObject({ status: 400, detail: 'The request body is nested deeper than 64 levels.' })
    const q = await call(app.url, 'GET', '/v1/scenarios?external_ref=a%00b', { token: key })
    expect(problemOf(q)).toMatchObject({ status: 400, type: 'urn:svc:error:malformed' })
    // A query value (or name) whose bytes are not UTF-8: an encoded surrogate, a byte no UTF-8 has, an overlong form.
    for (const bad of ['external_ref=%ED%A0%80', 'external_ref=%FF', 'external_ref=a%C0%AFb', 'status%FF=x', 'external_ref=%E2%82']) {
      const r = await call(app.url, 'GET', `/v1/scenarios?${bad}`, { token: key })
      expect(problemOf(r), bad).toMatchObject({ status: 400, type: 'urn:svc:error:malformed', detail: 'The query string is not valid UTF-8.' })
    }
    for (const good of ['external_ref=caf%C3%A9', 'external_ref=%F0%9F%98%80', 'external_ref=100%25', 'external_ref=a+b']) {
      expect((await call(app.url, 'GET', `/v1/scenarios?${good}`, { token: key })).status).toBe(200)
    }
    const ok = await send('POST', '/v1/scenarios', '{"name":"Café \\ud83d\\ude00 case"}')
    expect(ok.status).toBe(201)
    expect(ok.body.name).toBe('Café 😀 case')
  })
})
