import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let key: string
let readKey: string
let otherKey: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write'])
  readKey = await app.apiKey(t.id, ['scenarios:read'])
  const other = await app.tenant()
  otherKey = await app.apiKey(other.id, ['scenarios:read', 'scenarios:write'])
})
afterAll(() => app.stop())

const post = (body: unknown, headers: Record<string, string> = {}, token = key) => call(app.url, 'POST', '/v1/scenarios', { token, body, headers })

describe('scenarios', () => {
  test('create returns 201 with status created, Location, and reads back identically', async () => {
    const r = await post({ name: 'Loan 1', external_ref: 'ext-1' })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'Loan 1', external_ref: 'ext-1', status: 'created' })
    expect(r.body.id).toMatch(/^[0-9a-f-]{36}$/)
    expect('vertical' in r.body).toBe(false)
    expect(r.headers.get('location')).toBe(`/v1/scenarios/${r.body.id}`)
    const g = await call(app.url, 'GET', `/v1/scenarios/${r.body.id}`, { token: readKey })
    expect(g.status).toBe(200)
    expect(g.body).toEqual(r.body)
  })

  test('a vertical from the catalog is kept; an unknown one is 422 with a pointer', async () => {
    const ok = await post({ name: 'Home', vertical: 'mortgage' })
    expect(ok.status).toBe(201)
    expect(ok.body.vertical).toBe('mortgage')
    const bad = await post({ name: 'Home', vertical: 'spaceships' })
    expect(bad.status).toBe(422)
    expect(problemOf(bad).errors).toEqual([{ pointer: '/vertical', message: expect.stringContaining('mortgage') }])
  })

  test('whitespace-only name is a domain 422 without errors[] naming the field', async () => {
    const r = await post({ name: '  \t ' })
    const p = problemOf(r)
    expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422, title: 'Validation failed', instance: '/v1/scenarios' })
    expect(p.errors).toBeUndefined()
    expect(p.detail).toContain('name')
  })

  test('schema violations are 422 with one pointer each', async () => {
    const r = await post({ external_ref: 5 })
    const p = problemOf(r)
    expect(p.status).toBe(422)
    expect(p.errors!.map((e) => e.pointer).sort()).toEqual(['/external_ref', '/name'])
  })

  test('a read-only key cannot create (403) and a write key can read', async () => {
    const r = await post({ name: 'x' }, {}, readKey)
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403, title: 'Forbidden' })
    const l = await call(app.url, 'GET', '/v1/scenarios', { token: key })
    expect(l.status).toBe(200)
  })

  test("another workspace's case is 404, indistinguishable from an absent one", async () => {
    const mine = await post({ name: 'Private' })
    const foreign = await call(app.url, 'GET', `/v1/scenarios/${mine.body.id}`, { token: otherKey })
    const absent = await call(app.url, 'GET', `/v1/scenarios/${crypto.randomUUID()}`, { token: otherKey })
    expect(foreign.status).toBe(404)
    expect(absent.status).toBe(404)
    const strip = (r: typeof foreign) => ({ ...problemOf(r), request_id: undefined, instance: undefined })
    expect(strip(foreign)).toEqual(strip(absent))
    expect([...foreign.headers.keys()].sort()).toEqual([...absent.headers.keys()].sort())
    const list = await call(app.url, 'GET', `/v1/scenarios?limit=200`, { token: otherKey })
    expect(list.body.items.map((s: { id: string }) => s.id)).not.toContain(mine.body.id)
  })

  test('pagination walks 7 cases with limit=3, each once, and survives inserts', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:write'])
    const made: string[] = []
    for (let i = 0; i < 7; i++) made.push((await post({ name: `case ${i}` }, {}, k)).body.id)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const r: Awaited<ReturnType<typeof call>> = await call(app.url, 'GET', `/v1/scenarios?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: k })
      expect(r.status).toBe(200)
      expect(r.body.items.length).toBeLessThanOrEqual(3)
      seen.push(...r.body.items.map((s: { id: string }) => s.id))
      cursor = r.body.next_cursor
      if (pages === 0) await post({ name: 'inserted while paging' }, {}, k)
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen.sort()).toEqual([...made].sort())
    // list items equal the single GET
    const one = await call(app.url, 'GET', `/v1/scenarios/${made[0]}`, { token: k })
    const page = await call(app.url, 'GET', `/v1/scenarios?limit=200`, { token: k })
    expect(page.body.items.find((s: { id: string }) => s.id === made[0])).toEqual(one.body)
  })

  test('a garbled cursor, or one reused with other filters, is 422 invalid_cursor', async () => {
    for (let i = 0; i < 3; i++) await post({ name: `c${i}`, external_ref: 'same' })
    const first = await call(app.url, 'GET', '/v1/scenarios?limit=1&external_ref=same', { token: key })
    const cursor = first.body.next_cursor as string
    expect(cursor).toBeString()
    const garbled = await call(app.url, 'GET', `/v1/scenarios?limit=1&external_ref=same&cursor=${encodeURIComponent(cursor.slice(0, -2) + 'xx')}`, { token: key })
    expect(problemOf(garbled)).toMatchObject({ type: 'urn:svc:error:invalid_cursor', status: 422, title: 'Invalid cursor' })
    // The MAC's last character with a different unused low bit reads as the same 16 bytes: still
    // refused (a cursor ending in "xw" garbled to "xx" was accepted once in 256 runs).
    const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = B64URL.indexOf(cursor.at(-1)!)
    const sameBytes = cursor.slice(0, -1) + B64URL[last ^ 1]
    expect(Buffer.from(sameBytes.split('.')[1]!, 'base64url')).toEqual(Buffer.from(cursor.split('.')[1]!, 'base64url'))
    const respelled = await call(app.url, 'GET', `/v1/scenarios?limit=1&external_ref=same&cursor=${encodeURIComponent(sameBytes)}`, { token: key })
    expect(problemOf(respelled).type).toBe('urn:svc:error:invalid_cursor')
    const refiltered = await call(app.url, 'GET', `/v1/scenarios?limit=1&external_ref=other&cursor=${encodeURIComponent(cursor)}`, { token: key })
    expect(problemOf(refiltered).type).toBe('urn:svc:error:invalid_cursor')
    const junk = await call(app.url, 'GET', `/v1/scenarios?cursor=notacursor`, { token: key })
    expect(problemOf(junk).type).toBe('urn:svc:error:invalid_cursor')
  })

  test('limit: abc is 400 malformed, 201 is 422 with pointer /limit, default is 50', async () => {
    const abc = await call(app.url, 'GET', '/v1/scenarios?limit=abc', { token: key })
    expect(problemOf(abc)).toMatchObject({ type: 'urn:svc:error:malformed', status: 400, title: 'Malformed request' })
    const big = await call(app.url, 'GET', '/v1/scenarios?limit=201', { token: key })
    const p = problemOf(big)
    expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
    expect(p.errors![0]!.pointer).toBe('/limit')
    const zero = await call(app.url, 'GET', '/v1/scenarios?limit=0', { token: key })
    expect(problemOf(zero).errors![0]!.pointer).toBe('/limit')
  })

  test('a non-UUID id is 400 malformed', async () => {
    const r = await call(app.url, 'GET', '/v1/scenarios/not-a-uuid', { token: key })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:malformed', status: 400 })
  })
})

describe('idempotency', () => {
  test('a replay returns the stored status and identical body; one case is made', async () => {
    const k = crypto.randomUUID()
    const a = await post({ name: 'Idem', external_ref: 'idem-ref', vertical: 'mortgage' }, { 'idempotency-key': k })
    const b = await post({ vertical: 'mortgage', external_ref: 'idem-ref', name: 'Idem' }, { 'idempotency-key': k })
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(b.text).toBe(a.text)
    expect(b.headers.get('location')).toBe(a.headers.get('location'))
    expect(b.headers.get('idempotent-replayed')).toBe('true')
  })

  test('the same key with a different body is 409 idempotency_conflict and stores nothing', async () => {
    const k = crypto.randomUUID()
    await post({ name: 'First' }, { 'idempotency-key': k })
    const before = await app.sql`select count(*)::int as n from scenarios`
    const r = await post({ name: 'Second' }, { 'idempotency-key': k })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:idempotency_conflict', status: 409 })
    const after = await app.sql`select count(*)::int as n from scenarios`
    expect(after[0]!.n).toBe(before[0]!.n)
  })

  test('a key of 256 characters is refused with 422; 255 is accepted', async () => {
    const r = await post({ name: 'Long' }, { 'idempotency-key': 'k'.repeat(256) })
    expect(problemOf(r).status).toBe(422)
    const ok = await post({ name: 'Long' }, { 'idempotency-key': 'k'.repeat(255) })
    expect(ok.status).toBe(201)
  })

  test('20 concurrent identical requests make one case', async () => {
    const k = crypto.randomUUID()
    const ref = `concurrent-${k}`
    const replies = await Promise.all(Array.from({ length: 20 }, () => post({ name: 'Race', external_ref: ref }, { 'idempotency-key': k })))
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([201]))
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
    const rows = await app.sql`select count(*)::int as n from scenarios where external_ref = ${ref}`
    expect(rows[0]!.n).toBe(1)
  })

  test('the key is scoped to the workspace: another workspace may use the same key', async () => {
    const k = crypto.randomUUID()
    const a = await post({ name: 'Mine' }, { 'idempotency-key': k })
    const b = await post({ name: 'Theirs' }, { 'idempotency-key': k }, otherKey)
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(b.body.id).not.toBe(a.body.id)
  })
})
