import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { SCOPES } from '../../server/auth/principal'
import { caseWith, DEFAULT_FACTS, evaluationEnded, packFiles, publishedSet } from '../helpers/underwriting-pack'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(60_000)

let app: TestApp
let issuer: TestIssuer
let key: string
let allScopes: string
const users: Record<string, { id: string; token: string }> = {}
let scenarioId: string
let evaluationId: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write'])
  allScopes = await app.apiKey(t.id, [...SCOPES])
  for (const role of ['admin', 'reviewer', 'underwriter', 'viewer']) {
    const sub = `review-${role}-${crypto.randomUUID().slice(0, 6)}`
    const m = await app.member(t.id, sub, role)
    users[role] = { id: m.id, token: await issuer.token(sub) }
  }
  await publishedSet(app, key)
  const { scenario } = await caseWith(app, key, await packFiles({ ...DEFAULT_FACTS, annualRevenue: '950,000.00' }))
  scenarioId = scenario.id
  const e = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key })
  evaluationId = e.body.id
  await evaluationEnded(app, key, scenarioId, evaluationId)
})
afterAll(async () => { await app.stop(); issuer.stop() })

const review = (token: string, body: unknown) => call(app.url, 'POST', `/v1/scenarios/${scenarioId}/decision/review`, { token, body })

describe('decision review and override (human-only)', () => {
  test('API keys are refused at any scope; underwriters and viewers too', async () => {
    for (const token of [key, allScopes]) {
      const r = await review(token, { outcome: 'approve', reason: 'looks fine' })
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    }
    expect((await review(users.underwriter!.token, { outcome: 'approve', reason: 'x' })).status).toBe(403)
    expect((await review(users.viewer!.token, { outcome: 'approve', reason: 'x' })).status).toBe(403)
    const d = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/decision`, { token: key })
    expect(d.body).toMatchObject({ outcome: 'decline', final_outcome: 'decline' })
    expect('override' in d.body).toBe(false)
  })

  test('a reviewer overrides: kept beside the computed decision, in the audit chain and on the case event stream', async () => {
    const r = await review(users.reviewer!.token, { outcome: 'refer', reason: 'Revenue is seasonal; refer to a senior underwriter.' })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      evaluation_id: evaluationId,
      outcome: 'decline',
      reasons: [expect.objectContaining({ question_key: 'annual_revenue', effect: 'decline' })],
      computed_at: expect.any(String),
      override: { id: expect.any(String), outcome: 'refer', reason: 'Revenue is seasonal; refer to a senior underwriter.', reviewer: { user_id: users.reviewer!.id }, reviewed_at: expect.any(String) },
      final_outcome: 'refer',
    })
    const d = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/decision`, { token: key })
    expect(d.body).toEqual(r.body)

    const audit = await call(app.url, 'GET', '/v1/audit-events?kind=decision.reviewed', { token: users.admin!.token })
    expect(audit.status).toBe(200)
    expect(audit.body.items[0]).toMatchObject({
      kind: 'decision.reviewed',
      actor: { kind: 'user', id: users.reviewer!.id },
      data: { scenario_id: scenarioId, evaluation_id: evaluationId, review_id: r.body.override.id, computed_outcome: 'decline', outcome: 'refer', reason: 'Revenue is seasonal; refer to a senior underwriter.' },
    })
    const verify = await app.sql`select count(*)::int as n from audit_events where kind = 'decision.reviewed'`
    expect(verify[0]!.n).toBe(1)

    const events = await app.sql<{ data: any }[]>`select data from case_events where scenario_id = ${scenarioId} and type = 'decision.reviewed' order by seq`
    expect(events.map((e) => e.data)).toEqual([{ evaluation_id: evaluationId, review_id: r.body.override.id, computed_outcome: 'decline', outcome: 'refer', reviewer: { user_id: users.reviewer!.id } }])
  })

  test('an admin may review too; the newest review is the override in force, the computed outcome never changes', async () => {
    const r = await review(users.admin!.token, { outcome: 'approve', reason: 'Collateral covers the shortfall.', evaluation_id: evaluationId })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ outcome: 'decline', final_outcome: 'approve', override: { outcome: 'approve', reviewer: { user_id: users.admin!.id } } })
    const rows = await app.sql`select outcome from decision_reviews where evaluation_id = ${evaluationId} order by id`
    expect(rows.map((x) => x.outcome)).toEqual(['refer', 'approve'])
    const [computed] = await app.sql`select outcome from evaluation_decisions where evaluation_id = ${evaluationId}`
    expect(computed!.outcome).toBe('decline')
  })

  test('validation: unknown outcome (422 with pointer), blank reason (domain 422), nothing to review (409)', async () => {
    const bad = await review(users.reviewer!.token, { outcome: 'maybe', reason: 'x' })
    expect(problemOf(bad).errors).toEqual([{ pointer: '/outcome', message: 'must be one of: approve, refer, decline' }])
    const blank = await review(users.reviewer!.token, { outcome: 'approve', reason: '   ' })
    expect(problemOf(blank).errors).toBeUndefined()
    expect(problemOf(blank).detail).toContain('reason')
    const fresh = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'no evaluation' } })
    const none = await call(app.url, 'POST', `/v1/scenarios/${fresh.body.id}/decision/review`, { token: users.reviewer!.token, body: { outcome: 'approve', reason: 'x' } })
    expect(problemOf(none).type).toBe('urn:svc:error:conflict')
    const absent = await call(app.url, 'POST', `/v1/scenarios/${crypto.randomUUID()}/decision/review`, { token: users.reviewer!.token, body: { outcome: 'approve', reason: 'x' } })
    expect(absent.status).toBe(404)
  })

  test('the decision has an id: the same on every read and after reviews; another evaluation has another (issue 16, item 7)', async () => {
    const read = async (query = '') => (await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/decision${query}`, { token: key })).body
    const first = await read()
    expect(first.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect((await read()).id).toBe(first.id)
    const reviewed = await review(users.admin!.token, { outcome: 'approve', reason: 'Checked by hand.' })
    expect(reviewed.body.id).toBe(first.id)
    expect(reviewed.body.override.id).not.toBe(first.id)
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key })
    await evaluationEnded(app, key, scenarioId, e.body.id)
    const latest = await read()
    expect(latest.evaluation_id).toBe(e.body.id)
    expect(latest.id).not.toBe(first.id)
    expect((await read(`?evaluation_id=${evaluationId}`)).id).toBe(first.id)
  })

  test('the review surface is documented as human-only for reviewers and admins', async () => {
    const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
    const op = doc.paths['/v1/scenarios/{scenarioId}/decision/review'].post
    expect(op['x-svc-access']).toMatchObject({ roles: ['admin', 'reviewer'], scopes: [], human_only: true })
  })
})
