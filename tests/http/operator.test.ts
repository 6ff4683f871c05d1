/**
 * The operator surface (outside the /v1 promise): every operator-only route of the OpenAPI
 * document refuses every workspace credential alike (admins, reviewers, underwriters, viewers, API
 * keys of every scope, an embed session, a suspended workspace's admin and key): the same 403 body
 * whatever the credential. Operators get platform cost figures, cache figures and a workspace
 * evaluation policy that evaluation (engine, question cap) and ingestion (page cap, OCR off)
 * honour, with the pages read metered in the usage ledger.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { startModelStub, type ModelStub } from '../helpers/model-stub'
import { longPdfSample, pngSample, settled, uploadAndComplete } from '../helpers/samples'
import { PACK_QUESTIONS, publishedSet } from '../helpers/underwriting-pack'
import { ROLES, SCOPES } from '../../server/auth/principal'
import { recordUsage } from '../../server/billing/budgets'

setDefaultTimeout(90_000)

let app: TestApp
let issuer: TestIssuer
let stub: ModelStub
let operator: string
let tenant: { id: string; slug: string }
const credentials: { name: string; token: string }[] = []

beforeAll(async () => {
  issuer = await startIssuer()
  stub = startModelStub()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'surface-operator', SVC_MODEL_URL: stub.url, SVC_MODEL_MAX_RETRIES: '0', SVC_RATE_RUN: '1000/1' } })
  operator = await issuer.token('surface-operator')
  tenant = await app.tenant()
  for (const role of ROLES) {
    await app.member(tenant.id, `surface-${role}`, role)
    credentials.push({ name: `user:${role}`, token: await issuer.token(`surface-${role}`) })
  }
  for (const scope of SCOPES) credentials.push({ name: `api_key:${scope}`, token: await app.apiKey(tenant.id, [scope]) })
  credentials.push({ name: 'api_key:all scopes', token: await app.apiKey(tenant.id, [...SCOPES]) })
  credentials.push({ name: 'api_key:test environment', token: await app.apiKey(tenant.id, [...SCOPES], { environment: 'test' }) })

  const s = await app.tenant()
  await app.member(s.id, 'surface-suspended-admin', 'admin')
  credentials.push({ name: 'suspended admin', token: await issuer.token('surface-suspended-admin') })
  credentials.push({ name: 'suspended all-scopes key', token: await app.apiKey(s.id, [...SCOPES]) })
  await app.sql`update tenants set status = 'suspended' where id = ${s.id}`

  const e = await app.tenant()
  await app.member(e.id, 'surface-embed-viewer', 'viewer', 'surface.viewer@example.test')
  await app.sql`insert into tenant_settings (tenant_id, embed_allowed_origins) values (${e.id}, ${['https://host.example']})`
  const writer = await app.apiKey(e.id, ['scenarios:write'])
  const scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: writer, body: { name: 'embedded' } })).body.id
  const handoff = await call(app.url, 'POST', '/v1/embed/handoffs', {
    token: await app.apiKey(e.id, ['embed:mint']), body: { scenario_id: scenarioId, host_origin: 'https://host.example', subject_email: 'surface.viewer@example.test' },
  })
  const session = await call(app.url, 'POST', '/v1/embed/sessions', { body: { handoff: handoff.body.handoff, host_origin: 'https://host.example' } })
  expect(session.status).toBe(201)
  credentials.push({ name: 'embed session', token: session.body.session })
})
afterAll(async () => {
  await app.stop()
  stub.stop()
  issuer.stop()
})

const ops = (method: string, path: string, body?: unknown) => call(app.url, method, path, { token: operator, body })

describe('the operator surface', () => {
  test('every operator-only route refuses every workspace credential with the same answer', async () => {
    const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
    const routes = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).filter(([, op]) => {
        const a = op['x-svc-access']
        return a?.operator && !a.public && a.roles.length === 0 && a.scopes.length === 0 && !a.embed && !a.invitee
      }).map(([method]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, tenant.id) })))
    const paths = routes.map((r) => `${r.method} ${r.path.replaceAll(tenant.id, '{id}')}`)
    for (const expected of [
      'GET /v1/operator/costs', 'GET /v1/operator/caches', 'GET /v1/operator/workspaces/{id}/evaluation-policy', 'PUT /v1/operator/workspaces/{id}/evaluation-policy',
      'POST /v1/operator/workspaces/{id}/billing-contracts', 'GET /v1/operator/workspaces/{id}/billing-contracts', 'POST /v1/operator/workspaces/{id}/billing-contracts/{id}/end',
      'GET /v1/operator/workspaces/{id}/billing-usage', 'GET /v1/operator/workspaces/{id}/cost-budget', 'PUT /v1/operator/workspaces/{id}/cost-budget',
      'GET /v1/tenants/{id}/cost-budget', 'PUT /v1/tenants/{id}/cost-budget',
    ]) expect(paths).toContain(expected)

    const answers = new Set<string>()
    for (const route of routes) {
      for (const c of credentials) {
        const r = await call(app.url, route.method, `${route.path}?period=2026-02`, { token: c.token, ...(route.method === 'GET' ? {} : { body: {} }) })
        const p = problemOf(r)
        if (r.status !== 403) throw new Error(`${c.name} on ${route.method} ${route.path}: ${r.status} ${r.text}`)
        answers.add(JSON.stringify({ status: r.status, type: p.type, title: p.title, detail: p.detail, errors: p.errors, www: r.headers.get('www-authenticate') }))
      }
    }
    expect(credentials.length).toBeGreaterThanOrEqual(16)
    expect([...answers].map((x) => JSON.parse(x))).toEqual([{ status: 403, type: 'urn:svc:error:forbidden', title: 'Forbidden', detail: 'This operation is for platform operators only.', www: null }])
    // The operator is admitted.
    expect((await ops('GET', '/v1/operator/costs?period=2026-02')).status).toBe(200)
  })

  test('platform cost figures by workspace and period; cache figures of the process', async () => {
    const other = await app.tenant()
    await app.sql.begin(async (tx) => {
      await recordUsage(tx, tenant.id, { runKind: 'generation_run', runId: crypto.randomUUID(), step: 0, input_tokens: 1000, output_tokens: 500, cost_micro: 1_250_000 })
      await recordUsage(tx, other.id, { runKind: 'generation_run', runId: crypto.randomUUID(), step: 3, input_tokens: 10, output_tokens: 20, cost_micro: 30 })
    })
    const period = new Date().toISOString().slice(0, 7)
    const costs = (await ops('GET', `/v1/operator/costs?period=${period}`)).body
    const mine = costs.workspaces.find((w: any) => w.tenant_id === tenant.id)
    expect(mine).toMatchObject({ slug: tenant.slug, model_cost_micro: 1_250_000, model_cost: '1.25', input_tokens: 1000, output_tokens: 500, usage: { model_cost_micro: '1250000' } })
    expect(costs.workspaces.find((w: any) => w.tenant_id === other.id)).toMatchObject({ model_cost_micro: 30, usage: { model_cost_micro: '30' } })
    expect(costs.totals.model_cost_micro).toBe(costs.workspaces.reduce((n: number, w: any) => n + w.model_cost_micro, 0))
    expect((await ops('GET', '/v1/operator/costs?period=2001-01')).body.workspaces).toEqual([])
    expect(problemOf(await ops('GET', '/v1/operator/costs?period=2026-1')).status).toBe(422)

    const key = credentials.find((c) => c.name === 'api_key:all scopes')!.token
    for (let i = 0; i < 3; i++) await call(app.url, 'GET', '/v1/tenants/me', { token: key })
    const caches = (await ops('GET', '/v1/operator/caches')).body
    const keys = caches.caches.find((c: any) => c.name === 'credentials.api_keys')
    expect(keys.hits).toBeGreaterThanOrEqual(2)
    expect(keys).toMatchObject({ ttl_ms: 5000, max_entries: 10000, size: expect.any(Number), misses: expect.any(Number) })
    expect(caches.caches.map((c: any) => c.name)).toContain('credentials.members')
    expect(caches.parser_pool).toMatchObject({ processes: expect.any(Number), queued: expect.any(Number) })
  })

  test('the evaluation policy: engine, question cap, page cap and OCR are honoured; pages read are metered', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:write'])
    expect((await ops('GET', `/v1/operator/workspaces/${t.id}/evaluation-policy`)).body).toEqual({ engine: 'any', max_questions: null, max_pages_per_document: null, ocr: true })
    expect((await ops('GET', `/v1/operator/workspaces/${crypto.randomUUID()}/evaluation-policy`)).status).toBe(404)
    const { set } = await publishedSet(app, key, PACK_QUESTIONS)
    const scenario = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Policy' } })).body
    const evaluate = () => call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })

    // No policy: the deployment's engine (the model).
    const model = await evaluate()
    expect(model.body.engine).toBe('model')
    await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluations/${model.body.id}/cancel`, { token: key })

    expect((await ops('PUT', `/v1/operator/workspaces/${t.id}/evaluation-policy`, { engine: 'builtin', max_questions: 5, max_pages_per_document: 2, ocr: false })).body)
      .toEqual({ engine: 'builtin', max_questions: 5, max_pages_per_document: 2, ocr: false })
    const [audited] = await app.sql`select actor, data from audit_events where tenant_id = ${t.id} and kind = 'evaluation_policy.updated'`
    expect(audited).toMatchObject({ actor: { kind: 'operator', sub: 'surface-operator' }, data: { before: { engine: 'any', ocr: true }, after: { engine: 'builtin', ocr: false } } })
    const capped = problemOf(await evaluate())
    expect(capped).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
    expect(capped.detail).toContain('max_questions')

    await ops('PUT', `/v1/operator/workspaces/${t.id}/evaluation-policy`, { engine: 'builtin', max_pages_per_document: 2, ocr: false })
    const calls = stub.calls
    const builtin = await evaluate()
    expect(builtin.body.engine).toBe('builtin')
    for (let i = 0; i < 200; i++) {
      if ((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations/${builtin.body.id}`, { token: key })).body.status === 'succeeded') break
      await Bun.sleep(25)
    }
    expect(stub.calls).toBe(calls)
    const evEvents = await app.sql`select meter, quantity::int as q from usage_events where tenant_id = ${t.id} and source_id = ${builtin.body.id}`
    expect(evEvents.map((e) => [e.meter, e.q])).toEqual([['evaluations_succeeded', 1]])

    // A 5-page PDF: 2 pages read (the policy's cap), the rest unreadable; the ledger meters the 2.
    const five = await uploadAndComplete(app, key, scenario.id, { filename: 'five.pdf', contentType: 'application/pdf', bytes: await longPdfSample(5) })
    const doc = await settled(app, key, scenario.id, five.doc.id)
    expect(doc.pages).toMatchObject({ total: 5, text_layer: 2, unreadable: 3 })
    expect(doc.status).toBe('ready_degraded')
    expect(JSON.stringify(doc)).toContain("pages 3-5 unreadable: beyond the page limit 2 (the workspace's evaluation policy)")
    const pageEvents = await app.sql`select meter, quantity::int as q, source_ref from usage_events where tenant_id = ${t.id} and source_id = ${doc.id}`
    expect(pageEvents.map((e) => [e.meter, e.q, e.source_ref])).toEqual([['pages_text_layer', 2, expect.stringMatching(/^generation:\d+$/)]])
    // An image with OCR off: no recognition, the page unreadable naming the policy.
    const scan = await uploadAndComplete(app, key, scenario.id, { filename: 'scan.png', contentType: 'image/png', bytes: pngSample() })
    const image = await settled(app, key, scenario.id, scan.doc.id)
    expect(image.pages).toMatchObject({ ocr: 0, unreadable: 1 })
    expect(image.status).toBe('failed') // content that could not be read never ends ready with no blocks
    expect(image.error ?? image.error_detail ?? '').toContain("OCR is off in this workspace's evaluation policy")
    expect((await app.sql`select 1 from usage_events where tenant_id = ${t.id} and source_id = ${image.id}`).length).toBe(0)
  })
})
