/**
 * A list cursor is bound to its workspace: the cursor of one workspace's list, presented by another
 * workspace on the same list with the same filters, is 422 invalid_cursor, while it keeps working in
 * its own workspace. The workspace id is part of what the cursor's HMAC signs.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { Cursors, cursorScope } from '../../server/http/pagination'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let keyA: string
let keyB: string

const SCOPES = ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write']

beforeAll(async () => {
  app = await startApp({ runner: false })
  const a = await app.tenant()
  const b = await app.tenant()
  keyA = await app.apiKey(a.id, SCOPES)
  keyB = await app.apiKey(b.id, SCOPES)
  // Both workspaces hold the same shape of data, so each list has a second page in each.
  for (const key of [keyA, keyB]) {
    for (let i = 0; i < 3; i++) {
      expect((await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `case ${i}`, external_ref: 'shared-ref' } })).status).toBe(201)
      expect((await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: `set ${i}` } })).status).toBe(201)
      expect((await call(app.url, 'POST', '/v1/question-groups', { token: key, body: { name: `group ${i}` } })).status).toBe(201)
    }
  }
})
afterAll(() => app.stop())

const lists = ['/v1/scenarios?limit=1', '/v1/scenarios?limit=1&external_ref=shared-ref', '/v1/question-sets?limit=1', '/v1/question-groups?limit=1']

test.each(lists)("%s: another workspace's cursor is 422 invalid_cursor; in its own workspace it pages on", async (list) => {
  const first = await call(app.url, 'GET', list, { token: keyA })
  expect(first.status).toBe(200)
  const cursor = first.body.next_cursor as string
  expect(cursor).toEqual(expect.any(String))
  const next = `${list}&cursor=${encodeURIComponent(cursor)}`

  const foreign = await call(app.url, 'GET', next, { token: keyB })
  expect(problemOf(foreign)).toMatchObject({ status: 422, type: 'urn:svc:error:invalid_cursor' })

  const own = await call(app.url, 'GET', next, { token: keyA })
  expect(own.status).toBe(200)
  expect(own.body.items).toHaveLength(1)
  expect(own.body.items[0].id).not.toBe(first.body.items[0].id)
  // And the other way round: B's cursor is refused in A.
  const bFirst = await call(app.url, 'GET', list, { token: keyB })
  const bNext = `${list}&cursor=${encodeURIComponent(bFirst.body.next_cursor)}`
  expect(problemOf(await call(app.url, 'GET', bNext, { token: keyA }))).toMatchObject({ status: 422, type: 'urn:svc:error:invalid_cursor' })
})

test('the codec signs the workspace: same list and position, other workspace, refused; a tampered workspace breaks the signature', () => {
  const cursors = new Cursors(new Uint8Array(32).fill(7))
  const a = cursorScope('0190a7c4-0000-7000-8000-00000000000a', 'scenarios|')
  const b = cursorScope('0190a7c4-0000-7000-8000-00000000000b', 'scenarios|')
  const cursor = cursors.encode('0190a7c4-1111-7000-8000-000000000001', a)
  expect(cursors.decode(cursor, a)).toBe('0190a7c4-1111-7000-8000-000000000001')
  expect(() => cursors.decode(cursor, b)).toThrow('The cursor is not valid for this list')
  // Rewriting the workspace inside the payload keeps the old MAC, which no longer matches.
  const [payload, mac] = cursor.split('.')
  const forged = JSON.parse(Buffer.from(payload!, 'base64url').toString())
  forged.t = b.tenantId
  expect(() => cursors.decode(`${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`, b)).toThrow('The cursor is not valid for this list')
})
