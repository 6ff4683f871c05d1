/**
 * Supersessions and directive review: publishing a version that changes or drops a question an
 * evaluated case answered raises supersessions with a directive_review notification (always
 * task.completed, task_id = the supersession, links.resource = the collection); confirming or
 * dismissing is human-only; a confirmed supersession with no analog in a later version raises a new one.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { caseWith, evaluationEnded, packFiles, PACK_QUESTIONS, publishedSet, publishVersion } from '../helpers/underwriting-pack'
import { deliveriesOf } from '../helpers/authoring'

setDefaultTimeout(60_000)

let app: TestApp
let issuer: TestIssuer
let key: string
let human: string
let viewer: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'notifications:write'])
  await app.member(t.id, 'sup-underwriter', 'underwriter')
  await app.member(t.id, 'sup-viewer', 'viewer')
  human = await issuer.token('sup-underwriter')
  viewer = await issuer.token('sup-viewer')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const list = async (scenarioId: string, q = '') => (await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/supersessions${q}`, { token: key })).body.items as any[]

describe('supersessions', () => {
  test('publishing a version that changes and drops answered questions raises supersessions, notified as directive_review', async () => {
    const { set, version: v1 } = await publishedSet(app, key, PACK_QUESTIONS, { name: 'Directive' })
    const { scenario } = await caseWith(app, key, await packFiles())
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
    expect((await evaluationEnded(app, key, scenario.id, e.body.id)).status).toBe('succeeded')
    // Watch the case for directive reviews (the supersession ids are not known yet).
    const sub = await call(app.url, 'POST', '/v1/task-notification-subscriptions', { token: key, body: { task_kind: 'directive_review', task_id: scenario.id, channel: 'email', email: { address: 'review@example.test' } } })
    expect(sub.status).toBe(201)
    expect(await list(scenario.id)).toEqual([])

    // v2: annual_revenue's threshold changes, prior_bankruptcy is dropped, the rest stays.
    const v2Questions = PACK_QUESTIONS.filter((q) => q.key !== 'prior_bankruptcy').map((q) => (q.key === 'annual_revenue' ? { ...q, accept: 'value >= 2000000' } : q))
    const v2 = await publishVersion(app, key, set.id, v2Questions)
    const raised = await list(scenario.id)
    expect(raised.map((s) => [s.question_key, s.reason, s.status]).sort()).toEqual([['annual_revenue', 'changed', 'pending_review'], ['prior_bankruptcy', 'dropped', 'pending_review']])
    const changed = raised.find((s) => s.question_key === 'annual_revenue')
    expect(changed).toMatchObject({
      scenario_id: scenario.id, question_set_id: set.id, evaluation_id: e.body.id, old_version_id: v1.id, new_version_id: v2.id,
      old: { key: 'annual_revenue', accept: 'value >= 1000000' }, new: { key: 'annual_revenue', accept: 'value >= 2000000' }, answer_value: '1250000.00',
    })
    expect(raised.find((s) => s.question_key === 'prior_bankruptcy')).toMatchObject({ new: null, old: { key: 'prior_bankruptcy' }, answer_value: false })
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/supersessions/${changed.id}`, { token: key })).body).toEqual(changed)
    for (const s of raised) {
      const [d] = await deliveriesOf(app, key, 'directive_review', s.id)
      expect(d.payload).toMatchObject({
        event_type: 'task.completed', task_kind: 'directive_review', task_id: s.id,
        outcome: { status: 'succeeded', error_code: null, summary: 'a supersession from a directive needs review' },
      })
      expect(d.payload.links.resource).toEndWith(`/v1/scenarios/${scenario.id}/supersessions`)
    }
    const events = await app.sql`select data from case_events where scenario_id = ${scenario.id} and type = 'supersession.status' order by seq`
    expect(events.map((x) => x.data.supersession_id).sort()).toEqual(raised.map((s) => s.id).sort())

    // Deciding is a human act: API keys 403 whatever the scope, viewers 403; once decided 409.
    const confirm = (id: string, token: string, body?: unknown) => call(app.url, 'POST', `/v1/scenarios/${scenario.id}/supersessions/${id}/confirm`, { token, body })
    expect(problemOf(await confirm(changed.id, key)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await confirm(changed.id, viewer)).type).toBe('urn:svc:error:forbidden')
    const ok = await confirm(changed.id, human, { note: 'the new threshold applies' })
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({ status: 'confirmed', note: 'the new threshold applies' })
    expect(problemOf(await confirm(changed.id, human)).type).toBe('urn:svc:error:conflict')
    const dropped = raised.find((s) => s.question_key === 'prior_bankruptcy')
    expect((await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/supersessions/${dropped.id}/dismiss`, { token: human })).body.status).toBe('dismissed')
    expect((await list(scenario.id, '?status=pending_review'))).toEqual([])

    // v3 drops annual_revenue: the confirmed supersession has no analog -> a new directive review;
    // prior_bankruptcy (dropped again, nothing new) is not raised twice.
    const v3 = await publishVersion(app, key, set.id, v2Questions.filter((q) => q.key !== 'annual_revenue'))
    const fresh = await list(scenario.id, '?status=pending_review')
    expect(fresh.map((s) => [s.question_key, s.reason]).sort()).toEqual([['annual_revenue', 'dropped'], ['annual_revenue', 'no_analog']])
    const noAnalog = fresh.find((s) => s.reason === 'no_analog')
    expect(noAnalog).toMatchObject({ origin_supersession_id: changed.id, old: { accept: 'value >= 2000000' }, new: null, new_version_id: v3.id })
    const [d] = await deliveriesOf(app, key, 'directive_review', noAnalog.id)
    expect(d.payload.outcome).toEqual({ status: 'succeeded', error_code: null, summary: 'a confirmed supersession has no analog in the latest directive re-derive' })
    // Another case that was never evaluated has none; another workspace sees none.
    const other = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'fresh' } })
    expect(await list(other.body.id)).toEqual([])
    const foreign = await app.apiKey((await app.tenant()).id, ['scenarios:read'])
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/supersessions`, { token: foreign })).status).toBe(404)
  })
})
