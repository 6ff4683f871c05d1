/**
 * Structure tasks: a proposal to split a compound question, to regroup related ones, or to keep one,
 * each a structure_task with its notification row; read at the task-kind path.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { publishedSet } from '../helpers/underwriting-pack'
import { deliveriesOf, EMAIL } from '../helpers/authoring'

setDefaultTimeout(60_000)

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1' } })
  key = await app.apiKey((await app.tenant()).id, ['question_sets:write', 'notifications:write'])
})
afterAll(() => app.stop())

const QUESTIONS = [
  { key: 'revenue_and_profit', text: 'What is the annual revenue and the net profit?', criticality: 'major', answer_type: 'number' },
  { key: 'min_balance', text: 'What is the lowest bank balance?', criticality: 'major', answer_type: 'number', fact_path: 'bank_statement.balance.min' },
  { key: 'avg_balance', text: 'What is the average bank balance?', criticality: 'minor', answer_type: 'number', fact_path: 'bank_statement.balance.avg' },
  { key: 'litigation', text: 'Is there any outstanding litigation?', criticality: 'minor', answer_type: 'text' },
]

async function structure(setId: string, versionId: string, questionKey: string) {
  const r = await call(app.url, 'POST', `/v1/question-sets/${setId}/versions/${versionId}/structure-tasks`, { token: key, body: { question_key: questionKey, notifications: EMAIL } })
  expect(r.status).toBe(202)
  expect(r.headers.get('location')).toBe(`/v1/question-sets/${setId}/versions/${versionId}/structure-tasks/${r.body.id}`)
  for (let i = 0; i < 500; i++) {
    const t = await call(app.url, 'GET', r.headers.get('location')!, { token: key })
    if (t.body.status === 'succeeded' || t.body.status === 'failed') return t.body
    await Bun.sleep(20)
  }
  throw new Error('structure task did not end')
}

describe('structure tasks', () => {
  test('split, regroup and keep proposals, each with structure_task completed', async () => {
    const { set, version } = await publishedSet(app, key, QUESTIONS, { name: 'Structure' })
    const split = await structure(set.id, version.id, 'revenue_and_profit')
    expect(split).toMatchObject({ status: 'succeeded', question_key: 'revenue_and_profit', proposal: { action: 'split' } })
    expect(split.proposal.questions).toEqual([
      { key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'major', answer_type: 'number' },
      { key: 'net_profit', text: 'What is the net profit?', criticality: 'major', answer_type: 'number' },
    ])
    const regroup = await structure(set.id, version.id, 'min_balance')
    expect(regroup.proposal).toMatchObject({ action: 'regroup', questions: [], group: { name: 'bank balance', question_keys: ['min_balance', 'avg_balance'] } })
    const keep = await structure(set.id, version.id, 'litigation')
    expect(keep.proposal).toMatchObject({ action: 'keep', questions: [] })
    for (const t of [split, regroup, keep]) {
      const [d] = await deliveriesOf(app, key, 'structure_task', t.id)
      expect(d.payload).toMatchObject({ event_type: 'task.completed', task_kind: 'structure_task', task_id: t.id, outcome: { status: 'succeeded', error_code: null, summary: 'structuring completed, look at the proposal' } })
      expect(d.payload.links.resource).toEndWith(`/v1/question-sets/${set.id}/versions/${version.id}/structure-tasks/${t.id}`)
    }
    const listed = await call(app.url, 'GET', `/v1/question-sets/${set.id}/versions/${version.id}/structure-tasks`, { token: key })
    expect(listed.body.items.map((x: any) => x.id)).toEqual([keep.id, regroup.id, split.id])
    expect(problemOf(await call(app.url, 'POST', `/v1/question-sets/${set.id}/versions/${version.id}/structure-tasks`, { token: key, body: { question_key: 'nope' } })).detail).toContain('question_key')
    expect((await call(app.url, 'GET', `/v1/question-sets/${set.id}/versions/${crypto.randomUUID()}/structure-tasks/${split.id}`, { token: key })).status).toBe(404)
    expect((await call(app.url, 'POST', `/v1/question-sets/${set.id}/versions/${crypto.randomUUID()}/structure-tasks`, { token: key, body: { question_key: 'x' } })).status).toBe(404)
  })
})
