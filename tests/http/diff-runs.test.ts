/**
 * Diff runs: a changed guideline re-uploaded (replaces_guideline_id) compared block by block with
 * the old one, with proposals against the base version built from the old guideline's drafts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { publishVersion } from '../helpers/underwriting-pack'
import { createGroup, createSet, deliveriesOf, EMAIL, guidelineText, readyGuideline, runReaches } from '../helpers/authoring'

setDefaultTimeout(60_000)

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1' } })
  key = await app.apiKey((await app.tenant()).id, ['question_sets:write', 'notifications:write'])
})
afterAll(() => app.stop())

const OLD = 'Annual revenue must be at least USD 1,000,000.\n\nThe applicant must not have a prior bankruptcy.\n\nYears in business should be at least 2.\n'
const NEW = 'Annual revenue must be at least USD 1,500,000.\n\nYears in business should be at least 2.\n\nThe loan-to-value ratio must not exceed 80%.\n'

describe('diff runs', () => {
  test('a changed guideline: block changes and add/change/remove proposals against the base version; diff_run completed', async () => {
    const group = await createGroup(app, key)
    const old = await readyGuideline(app, key, group.id, guidelineText(OLD, 'policy.txt'))
    const set = await createSet(app, key)
    const run = await runReaches(app, key, set.id, (await call(app.url, 'POST', `/v1/question-sets/${set.id}/generate`, { token: key, body: { guideline_ids: [old.id] } })).body.id)
    const draft = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${run.id}/accept`, { token: key, body: {} })
    const base = await publishVersion(app, key, set.id, draft.body.questions)
    const changed = await readyGuideline(app, key, group.id, guidelineText(NEW, 'policy-v2.txt'), { replaces_guideline_id: old.id })
    expect(changed.replaces_guideline_id).toBe(old.id)

    const r = await call(app.url, 'POST', `/v1/question-sets/${set.id}/diff-runs`, { token: key, body: { guideline_id: changed.id, base_version_id: base.id, notifications: EMAIL }, headers: { 'idempotency-key': 'diff-1' } })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ guideline_id: changed.id, previous_guideline_id: old.id, base_version_id: base.id, status: 'queued' })
    expect(r.headers.get('location')).toBe(`/v1/question-sets/${set.id}/diff-runs/${r.body.id}`)
    let done: any
    for (let i = 0; i < 500; i++) {
      done = (await call(app.url, 'GET', `/v1/question-sets/${set.id}/diff-runs/${r.body.id}`, { token: key })).body
      if (done.status !== 'queued' && done.status !== 'running') break
      await Bun.sleep(20)
    }
    expect(done.status).toBe('succeeded')
    expect(done.summary).toEqual({ blocks_added: 1, blocks_removed: 1, blocks_changed: 1, blocks_unchanged: 1 })
    expect(done.block_changes.map((c: any) => [c.change, c.old_text ?? null, c.new_text ?? null])).toEqual([
      ['changed', 'Annual revenue must be at least USD 1,000,000.', 'Annual revenue must be at least USD 1,500,000.'],
      ['removed', 'The applicant must not have a prior bankruptcy.', null],
      ['added', null, 'The loan-to-value ratio must not exceed 80%.'],
    ])
    const byKey = Object.fromEntries(done.proposals.map((p: any) => [p.question_key, p]))
    expect(done.proposals).toHaveLength(3)
    expect(byKey.annual_revenue).toMatchObject({ action: 'change', previous: { accept: 'value >= 1000000' }, question: { key: 'annual_revenue', accept: 'value >= 1500000' } })
    expect(byKey.annual_revenue.citations[0]).toMatchObject({ guideline_id: changed.id, quote: 'Annual revenue must be at least USD 1,500,000.' })
    expect(byKey.prior_bankruptcy).toMatchObject({ action: 'remove', previous: { key: 'prior_bankruptcy' } })
    expect(byKey.loan_to_value_ratio).toMatchObject({ action: 'add', question: { key: 'loan_to_value_ratio', accept: 'value <= 80', criticality: 'critical' } })
    const [d] = await deliveriesOf(app, key, 'diff_run', r.body.id)
    expect(d.payload).toMatchObject({ event_type: 'task.completed', task_kind: 'diff_run', outcome: { status: 'succeeded', error_code: null, summary: 're-upload diff ready for review' } })
    expect(d.payload.links.resource).toEndWith(`/v1/question-sets/${set.id}/diff-runs/${r.body.id}`)
    const again = await call(app.url, 'POST', `/v1/question-sets/${set.id}/diff-runs`, { token: key, body: { guideline_id: changed.id, base_version_id: base.id, notifications: EMAIL }, headers: { 'idempotency-key': 'diff-1' } })
    expect(again.body.id).toBe(r.body.id)
    const listed = await call(app.url, 'GET', `/v1/question-sets/${set.id}/diff-runs`, { token: key })
    expect(listed.body.items).toEqual([done])

    // Refusals: a guideline that replaces nothing, a version of another set, an unknown guideline.
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/diff-runs`, { token: key, body: { guideline_id: old.id, base_version_id: base.id } })).detail).toContain('replaces no earlier source')
    const otherSet = await createSet(app, key)
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${otherSet.id}/diff-runs`, { token: key, body: { guideline_id: changed.id, base_version_id: base.id } })).detail).toContain('base_version_id')
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/diff-runs`, { token: key, body: { guideline_id: crypto.randomUUID(), base_version_id: base.id } })).type).toBe('urn:svc:error:validation')
  })

  test('an obligation replaced in place by an unrelated one: removed + added, the old key never on the new question', async () => {
    const before = 'Annual revenue must be at least USD 1,000,000.\n\nThe applicant must not have a prior bankruptcy.\n\nThe borrower should have at least 3 years in business.\n'
    const after = 'Annual revenue must be at least USD 1,200,000.\n\nThe loan-to-value ratio must not exceed 80%.\n\nBorrowers must have at least 5 years in business.\n'
    const group = await createGroup(app, key)
    const old = await readyGuideline(app, key, group.id, guidelineText(before, 'policy.txt'))
    const set = await createSet(app, key)
    const run = await runReaches(app, key, set.id, (await call(app.url, 'POST', `/v1/question-sets/${set.id}/generate`, { token: key, body: { guideline_ids: [old.id] } })).body.id)
    const draft = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generation-runs/${run.id}/accept`, { token: key, body: {} })
    expect(draft.body.questions.map((q: any) => q.key)).toEqual(['annual_revenue', 'prior_bankruptcy', 'years_in_business'])
    const base = await publishVersion(app, key, set.id, draft.body.questions)
    const changed = await readyGuideline(app, key, group.id, guidelineText(after, 'policy-v2.txt'), { replaces_guideline_id: old.id })
    const r = await call(app.url, 'POST', `/v1/question-sets/${set.id}/diff-runs`, { token: key, body: { guideline_id: changed.id, base_version_id: base.id } })
    expect(r.status).toBe(202)
    let done: any
    for (let i = 0; i < 500; i++) {
      done = (await call(app.url, 'GET', `/v1/question-sets/${set.id}/diff-runs/${r.body.id}`, { token: key })).body
      if (done.status !== 'queued' && done.status !== 'running') break
      await Bun.sleep(20)
    }
    expect(done.status).toBe('succeeded')
    expect(done.summary).toEqual({ blocks_added: 1, blocks_removed: 1, blocks_changed: 2, blocks_unchanged: 0 })
    expect(done.block_changes.map((c: any) => [c.change, c.old_text ?? null, c.new_text ?? null])).toEqual([
      ['changed', 'Annual revenue must be at least USD 1,000,000.', 'Annual revenue must be at least USD 1,200,000.'],
      ['removed', 'The applicant must not have a prior bankruptcy.', null],
      ['added', null, 'The loan-to-value ratio must not exceed 80%.'],
      ['changed', 'The borrower should have at least 3 years in business.', 'Borrowers must have at least 5 years in business.'],
    ])
    expect(done.proposals.map((p: any) => [p.action, p.question_key, p.question?.fact_path ?? null])).toEqual([
      ['change', 'annual_revenue', 'annual_revenue'],
      ['remove', 'prior_bankruptcy', null],
      ['add', 'loan_to_value_ratio', 'loan_to_value_ratio'],
      ['change', 'years_in_business', 'years_in_business'],
    ])
    const byKey = Object.fromEntries(done.proposals.map((p: any) => [p.question_key, p]))
    expect(byKey.years_in_business).toMatchObject({ previous: { accept: 'value >= 3' }, question: { accept: 'value >= 5', text: 'How many years has the borrower been in business?' } })
  })
})
