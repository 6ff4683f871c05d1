import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
beforeAll(async () => { app = await startApp() })
afterAll(() => app.stop())

test('GET /v1/openapi.json is an OpenAPI 3.1 document without a credential', async () => {
  const r = await call(app.url, 'GET', '/v1/openapi.json')
  expect(r.status).toBe(200)
  expect(r.body.openapi).toMatch(/^3\.1\./)
  expect(r.body.components.schemas.Problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'detail', 'instance', 'request_id']))
})

test('every route is listed with its access entry and problem responses', async () => {
  const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
  const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })))
  const listed = ops.map((o) => `${o.method.toUpperCase()} ${o.path}`)
  for (const route of ['GET /healthz', 'GET /readyz', 'GET /v1/verticals', 'POST /v1/scenarios', 'GET /v1/scenarios', 'GET /v1/scenarios/{scenarioId}']) {
    expect(listed).toContain(route)
  }
  for (const { path, method, op } of ops) {
    const where = `${method.toUpperCase()} ${path}`
    expect(op['x-svc-access'], where).toBeDefined()
    expect(op.responses['500'], where).toBeDefined()
    const success = Object.keys(op.responses).filter((s) => s.startsWith('2'))
    expect(success.length, where).toBeGreaterThan(0)
    if (!op['x-svc-access'].public) {
      expect(op.responses['401'].content['application/problem+json'].schema.$ref, where).toBe('#/components/schemas/Problem')
      expect(op.responses['403'], where).toBeDefined()
    }
    if (path.includes('{')) expect(op.responses['404'] ?? op.responses['400'], where).toBeDefined()
    // The embed exchange answers every failure, a bad body included, with the same 401.
    if (op.requestBody && path !== '/v1/embed/sessions') expect(op.responses['422'], where).toBeDefined()
  }
})

test('each error type is named once per response description', async () => {
  const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
  const twice: string[] = []
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, { description: string; 'x-svc-problem-types'?: string[] }>)) {
        const urns = response.description.match(/urn:svc:error:[a-z_]+/g) ?? []
        if (new Set(urns).size !== urns.length) twice.push(`${method.toUpperCase()} ${path} ${status}: ${response.description}`)
        const types = response['x-svc-problem-types'] ?? []
        if (new Set(types).size !== types.length) twice.push(`${method.toUpperCase()} ${path} ${status}: x-svc-problem-types ${types.join(', ')}`)
      }
    }
  }
  expect(twice).toEqual([])
})

test('list routes document limit and cursor as query parameters', async () => {
  const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
  for (const path of [
    '/v1/scenarios/{scenarioId}/documents', '/v1/scenarios/{scenarioId}/documents/{documentId}/blocks',
    '/v1/question-groups/{groupId}/guidelines', '/v1/question-groups/{groupId}/guidelines/{guidelineId}/blocks',
    '/v1/question-sets/{questionSetId}/diff-runs', '/v1/question-sets/{questionSetId}/generation-runs',
    '/v1/question-sets/{questionSetId}/versions/{versionId}/structure-tasks', '/v1/scenarios/{scenarioId}/supersessions',
    '/v1/scenarios/{scenarioId}/evaluations', '/v1/task-notification-subscriptions',
  ]) {
    const names = doc.paths[path].get.parameters.filter((p: { in?: string }) => p.in === 'query').map((p: { name: string }) => p.name)
    expect(names, path).toEqual(expect.arrayContaining(['limit', 'cursor']))
  }
  const params = doc.paths['/v1/scenarios'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)
  expect(params).toEqual(expect.arrayContaining(['query:limit', 'query:cursor']))
  const limit = doc.paths['/v1/scenarios'].get.parameters.find((p: { name: string }) => p.name === 'limit')
  expect(limit.schema).toMatchObject({ type: 'integer', maximum: 200 })
})

test('GET /v1/verticals is bounded: exactly one entry without a key, no cursor', async () => {
  const t = await app.tenant()
  const r = await call(app.url, 'GET', '/v1/verticals', { token: await app.apiKey(t.id, ['scenarios:read']) })
  expect(r.status).toBe(200)
  expect(r.body.next_cursor).toBeNull()
  expect(r.body.items.filter((v: { key?: string }) => v.key === undefined)).toHaveLength(1)
  for (const v of r.body.items) expect(v).toMatchObject({ id: expect.any(String), label: expect.any(String) })
})

test('health: /healthz and /readyz answer without a credential', async () => {
  expect((await call(app.url, 'GET', '/healthz')).body).toEqual({ status: 'ok' })
  expect((await call(app.url, 'GET', '/readyz')).body).toEqual({ status: 'ok' })
})

test('unknown members are dropped from every body, and the document marks no body closed, before or after requests were validated', async () => {
  const closedIn = (doc: any) => {
    const closed: string[] = []
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return
      if ((node as Record<string, unknown>).additionalProperties === false) closed.push(where)
      for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`)
    }
    walk(doc, '')
    return closed
  }
  expect(closedIn((await call(app.url, 'GET', '/v1/openapi.json')).body)).toEqual([])
  const t = await app.tenant()
  const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  const scenario = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'P', unexpected_member: 1 } })
  expect(scenario.status).toBe(201)
  expect(scenario.body.unexpected_member).toBeUndefined()
  const set = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'Q', unexpected_member: 1 } })
  expect(set.status).toBe(201)
  const version = await call(app.url, 'POST', `/v1/question-sets/${set.body.id}/versions`, {
    token: key, body: { questions: [{ key: 'q1', text: 'Revenue?', criticality: 'minor', answer_type: 'text', unexpected_member: 1 }] },
  })
  expect(version.status).toBe(201)
  expect(version.body.questions).toEqual([{ key: 'q1', text: 'Revenue?', criticality: 'minor', answer_type: 'text' }])
  const again = await call(app.url, 'GET', `/v1/question-sets/${set.body.id}/versions/${version.body.id}`, { token: key })
  expect(again.body.questions[0].unexpected_member).toBeUndefined()
  // Validating those bodies marked their schemas closed in place (Elysia's normalize); the document still says nothing of it.
  expect(closedIn((await call(app.url, 'GET', '/v1/openapi.json')).body)).toEqual([])
})
