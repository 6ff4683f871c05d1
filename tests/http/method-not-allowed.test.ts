/**
 * A known path with a method it does not have is 405 with `Allow` (a problem object); an unknown
 * path stays 404. Optional bodies take no JSON but an object.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let key: string
let scenarioId: string
beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Methods' } })).body.id
})
afterAll(() => app.stop())

test('an unknown method on a known path is 405 with Allow, as a problem object', async () => {
  for (const [method, path, allow] of [
    ['DELETE', '/v1/scenarios', 'GET, HEAD, POST'],
    ['PATCH', `/v1/scenarios/${scenarioId}`, 'GET, HEAD'],
    ['PUT', `/v1/scenarios/${scenarioId}/evaluate`, 'POST'],
    ['GET', '/v1/webhook-signing-secret/rotate', 'POST'],
  ] as const) {
    const r = await call(app.url, method, path, { token: key })
    expect(r.status, `${method} ${path}`).toBe(405)
    expect(r.headers.get('allow')).toBe(allow)
    expect(r.headers.get('content-type')).toStartWith('application/problem+json')
    expect(r.body).toMatchObject({ type: 'urn:svc:error:method_not_allowed', status: 405, instance: path, request_id: r.headers.get('x-request-id') })
  }
  const unknown = await call(app.url, 'GET', '/v1/no-such-thing', { token: key })
  expect(unknown.status).toBe(404)
  expect(unknown.headers.get('allow')).toBeNull()
})

test('an optional body is absent or an object: any other JSON is 422 at "", a bad member points at itself, nothing started', async () => {
  for (const body of ['[1,"x"]', '"hello"', '42', 'null']) {
    const res = await fetch(`${app.url}/v1/scenarios/${scenarioId}/evaluate`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body })
    const problem = await res.json() as { errors: { pointer: string; message: string }[] }
    expect(res.status, body).toBe(422)
    expect(problem.errors).toEqual([{ pointer: '', message: 'the request body must be a JSON object' }])
  }
  const bad = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/reports`, { token: key, body: { evaluation_id: 'not-a-uuid' } })
  expect(bad.status).toBe(422)
  expect(bad.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/evaluation_id'])
  const size = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, { token: key, body: { filename: 'a.txt', content_type: 'text/plain', size_bytes: '157' } })
  expect(size.status).toBe(422)
  expect(size.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/size_bytes'])
  const [evaluations] = await app.sql<{ n: number }[]>`select count(*)::int as n from evaluations where scenario_id = ${scenarioId}`
  expect(evaluations?.n).toBe(0)
  const [documents] = await app.sql<{ d: number }[]>`select count(*)::int as d from documents where scenario_id = ${scenarioId}`
  expect(documents?.d).toBe(0)
})
