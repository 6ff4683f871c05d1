import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(60_000)

let app: TestApp
let key: string
let readKey: string
let otherKey: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['question_sets:write', 'notifications:write'])
  readKey = await app.apiKey(t.id, ['question_sets:read'])
  const other = await app.tenant()
  otherKey = await app.apiKey(other.id, ['question_sets:write'])
})
afterAll(() => app.stop())

const q = (key: string, extra: Record<string, unknown> = {}) => ({ key, text: `What is ${key}?`, criticality: 'major', answer_type: 'number', ...extra })

async function newSet(body: Record<string, unknown> = { name: 'Commercial lending' }, token = key) {
  const r = await call(app.url, 'POST', '/v1/question-sets', { token, body })
  expect(r.status).toBe(201)
  return r.body
}

async function waitVersion(setId: string, versionId: string, until: (v: any) => boolean, token = key) {
  const end = Date.now() + 20_000
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/question-sets/${setId}/versions/${versionId}`, { token })
    if (until(r.body)) return r
    if (Date.now() > end) throw new Error(`version still ${r.body.status}`)
    await Bun.sleep(20)
  }
}

/** The envelopes delivered for a task, through the notification path (subscription deliveries). */
async function envelopes(taskKind: string, taskId: string, token = key): Promise<any[]> {
  const end = Date.now() + 20_000
  for (;;) {
    const subs = await call(app.url, 'GET', `/v1/task-notification-subscriptions?task_kind=${taskKind}&task_id=${taskId}`, { token })
    const out: any[] = []
    for (const s of subs.body.items) {
      const d = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${s.id}/deliveries`, { token })
      out.push(...d.body.items.map((x: any) => x.payload))
    }
    if (out.length > 0) return out
    if (Date.now() > end) throw new Error('no delivery')
    await Bun.sleep(25)
  }
}

describe('question sets', () => {
  test('create, read, list; vertical binds to the catalog and is absent on the default', async () => {
    const a = await newSet({ name: 'Default set' })
    expect(a).toMatchObject({ name: 'Default set' })
    expect('vertical' in a).toBe(false)
    expect('latest_version_id' in a).toBe(false)
    const b = await newSet({ name: 'Mortgage set', vertical: 'mortgage' })
    expect(b.vertical).toBe('mortgage')
    const bad = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'x', vertical: 'spaceships' } })
    expect(problemOf(bad).errors).toEqual([{ pointer: '/vertical', message: expect.stringContaining('mortgage') }])
    const blank = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: '   ' } })
    expect(problemOf(blank).errors).toBeUndefined()
    const one = await call(app.url, 'GET', `/v1/question-sets/${b.id}`, { token: readKey })
    expect(one.body).toEqual(b)
    const list = await call(app.url, 'GET', '/v1/question-sets?limit=200', { token: readKey })
    expect(list.body.items.map((s: any) => s.id)).toEqual(expect.arrayContaining([a.id, b.id]))
    const filtered = await call(app.url, 'GET', '/v1/question-sets?vertical=mortgage', { token: readKey })
    expect(filtered.body.items.map((s: any) => s.id)).toEqual([b.id])
    expect((await call(app.url, 'GET', `/v1/question-sets/${b.id}`, { token: otherKey })).status).toBe(404)
    expect((await call(app.url, 'POST', '/v1/question-sets', { token: readKey, body: { name: 'no' } })).status).toBe(403)
  })

  test('version schema errors point into the questions array', async () => {
    const s = await newSet()
    const r = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [q('a'), q('b'), q('c'), { ...q('d'), criticality: 'urgent' }, { key: 'e', criticality: 'minor', answer_type: 'text' }] } })
    const p = problemOf(r)
    expect(p.status).toBe(422)
    expect(p.errors).toEqual(expect.arrayContaining([
      { pointer: '/questions/3/criticality', message: 'must be one of: critical, major, minor' },
      { pointer: '/questions/4/text', message: 'is required' },
    ]))
  })

  test('accept rules are validated at version creation, with a pointer and the column', async () => {
    const s = await newSet()
    const r = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [
      q('rev', { fact_path: 'annual_revenue', accept: 'value >= 1000000' }),
      q('dscr', { fact_path: 'dscr', accept: 'value >=' }),
      q('name', { answer_type: 'text', fact_path: 'applicant', accept: 'value > 3' }),
    ] } })
    const p = problemOf(r)
    expect(p.errors).toEqual([
      { pointer: '/questions/1/accept', message: 'expected a value at the end (at column 9)' },
      { pointer: '/questions/2/accept', message: '">" does not apply to a text answer (use = or !=)' },
    ])
    const noFact = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [q('rev', { accept: 'value > 1' })] } })
    const np = problemOf(noFact)
    expect(np.errors).toBeUndefined()
    expect(np.detail).toContain('questions/0/accept needs questions/0/fact_path')
  })

  test('keys are unique per version: a domain 422 naming the field', async () => {
    const s = await newSet()
    const r = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [q('a'), q('b'), q('a')] } })
    const p = problemOf(r)
    expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
    expect(p.errors).toBeUndefined()
    expect(p.detail).toBe('questions/2/key "a" repeats questions/0/key; keys are unique within a version.')
    expect((await call(app.url, 'GET', `/v1/question-sets/${s.id}/versions`, { token: key })).body.items).toEqual([])
  })

  test('versions: numbered drafts with an ETag; a stale If-Match is 412; a published version is immutable', async () => {
    const s = await newSet()
    const v1 = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [q('a', { guidance: 'see the form' })] } })
    expect(v1.status).toBe(201)
    expect(v1.body).toMatchObject({ number: 1, status: 'draft', question_set_id: s.id, questions: [{ key: 'a', text: 'What is a?', criticality: 'major', answer_type: 'number', guidance: 'see the form' }] })
    expect(v1.headers.get('etag')).toBe(v1.body.etag)
    expect(v1.headers.get('location')).toBe(`/v1/question-sets/${s.id}/versions/${v1.body.id}`)
    const read = await call(app.url, 'GET', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: readKey })
    expect(read.body).toEqual(v1.body)
    expect(read.headers.get('etag')).toBe(v1.body.etag)

    // Edit the draft with its ETag: the ETag changes; the old one is now stale.
    const edit = await call(app.url, 'PUT', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: key, headers: { 'if-match': v1.body.etag }, body: { questions: [q('a'), q('b')] } })
    expect(edit.status).toBe(200)
    expect(edit.body.questions.map((x: any) => x.key)).toEqual(['a', 'b'])
    expect(edit.body.etag).not.toBe(v1.body.etag)
    const staleEdit = await call(app.url, 'PUT', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: key, headers: { 'if-match': v1.body.etag }, body: { questions: [q('z')] } })
    expect(problemOf(staleEdit)).toMatchObject({ type: 'urn:svc:error:precondition_failed', status: 412, title: 'Precondition failed' })
    const weak = await call(app.url, 'PUT', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: key, headers: { 'if-match': `W/${edit.body.etag}` }, body: { questions: [q('z')] } })
    expect(weak.status).toBe(412)

    // Publish (stale ETag refused first), then the version is published and immutable.
    const stalePublish = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v1.body.id}/publish`, { token: key, headers: { 'if-match': v1.body.etag } })
    expect(problemOf(stalePublish).status).toBe(412)
    const pub = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v1.body.id}/publish`, { token: key, headers: { 'if-match': edit.body.etag }, body: { notifications: [{ channel: 'email', email: { address: 'owner@example.test' } }] } })
    expect(pub.status).toBe(202)
    expect(pub.body.status).toBe('publishing')
    expect(pub.headers.get('location')).toBe(`/v1/question-sets/${s.id}/versions/${v1.body.id}`)
    const done = await waitVersion(s.id, v1.body.id, (v) => v.status !== 'publishing')
    expect(done.body).toMatchObject({ status: 'published', published_at: expect.any(String) })
    const [env] = await envelopes('question_set_publish', v1.body.id)
    expect(env).toMatchObject({ event_type: 'task.completed', task_kind: 'question_set_publish', task_id: v1.body.id, outcome: { status: 'succeeded', summary: 'version is published', error_code: null } })
    expect(env.links.resource).toEndWith(`/v1/question-sets/${s.id}/versions/${v1.body.id}`)

    // The pre-publish ETag is stale (412); without If-Match the published version refuses edits (409).
    const afterPublish = await call(app.url, 'PUT', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: key, headers: { 'if-match': edit.body.etag }, body: { questions: [q('z')] } })
    expect(problemOf(afterPublish).type).toBe('urn:svc:error:precondition_failed')
    const noPrecondition = await call(app.url, 'PUT', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: key, body: { questions: [q('z')] } })
    expect(problemOf(noPrecondition).type).toBe('urn:svc:error:conflict')
    const again = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v1.body.id}/publish`, { token: key })
    expect(problemOf(again).type).toBe('urn:svc:error:conflict')
    const unchanged = await call(app.url, 'GET', `/v1/question-sets/${s.id}/versions/${v1.body.id}`, { token: key })
    expect(unchanged.body.questions.map((x: any) => x.key)).toEqual(['a', 'b'])
    expect(unchanged.body.etag).toBe(done.body.etag)

    // A new version based on the newest one: If-Match names it; naming an older one is 412.
    const v2 = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, headers: { 'if-match': done.body.etag }, body: { questions: [q('a'), q('b'), q('c')] } })
    expect(v2.status).toBe(201)
    expect(v2.body.number).toBe(2)
    const basedOnOld = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, headers: { 'if-match': done.body.etag }, body: { questions: [q('x')] } })
    expect(problemOf(basedOnOld).status).toBe(412)
    const set = await call(app.url, 'GET', `/v1/question-sets/${s.id}`, { token: key })
    expect(set.body).toMatchObject({ latest_version_id: v2.body.id, published_version_id: v1.body.id })
    const list = await call(app.url, 'GET', `/v1/question-sets/${s.id}/versions?status=published`, { token: key })
    expect(list.body.items.map((v: any) => v.id)).toEqual([v1.body.id])
  })

  test('publishing a version with no questions fails, delivered as question_set_publish_failed', async () => {
    const s = await newSet()
    const v = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [] } })
    const pub = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v.body.id}/publish`, { token: key, body: { notifications: [{ channel: 'email', email: { address: 'owner@example.test' } }] } })
    expect(pub.status).toBe(202)
    const done = await waitVersion(s.id, v.body.id, (x) => x.status !== 'publishing')
    expect(done.body).toMatchObject({ status: 'failed', failure_reason: 'the version has no questions' })
    const [env] = await envelopes('question_set_publish', v.body.id)
    expect(env).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', summary: 'version could not be published', error_code: 'question_set_publish_failed' } })
  })

  test('publish is idempotent with Idempotency-Key: one task, the same reply', async () => {
    const s = await newSet()
    const v = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [q('a')] } })
    const headers = { 'idempotency-key': `pub-${v.body.id}` }
    const first = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v.body.id}/publish`, { token: key, headers })
    const second = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v.body.id}/publish`, { token: key, headers })
    expect(first.status).toBe(202)
    expect(second.status).toBe(202)
    expect(second.body).toEqual(first.body)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    const done = await waitVersion(s.id, v.body.id, (x) => x.status === 'published')
    // revision 1 (created), 2 (publishing), 3 (published): published once.
    expect(done.body.etag).toBe(`"${v.body.id}.3"`)
  })

  test("another workspace's versions are 404; a non-UUID id is 400", async () => {
    const s = await newSet()
    const v = await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions`, { token: key, body: { questions: [q('a')] } })
    expect((await call(app.url, 'GET', `/v1/question-sets/${s.id}/versions/${v.body.id}`, { token: otherKey })).status).toBe(404)
    expect((await call(app.url, 'POST', `/v1/question-sets/${s.id}/versions/${v.body.id}/publish`, { token: otherKey })).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/question-sets/not-a-uuid`, { token: key })).status).toBe(400)
  })
})

describe('question-set create: one statement with its idempotency record', () => {
  const post = (body: unknown, k?: string) => call(app.url, 'POST', '/v1/question-sets', { token: key, body, ...(k ? { headers: { 'idempotency-key': k } } : {}) })

  test('the answer is the set as a read returns it; a replay returns the identical text; another body is 409; 20 concurrent duplicates make one set', async () => {
    for (const body of [{ name: 'One statement' }, { name: 'One statement, mortgage', vertical: 'mortgage' }]) {
      const created = await post(body)
      expect(created.status).toBe(201)
      expect(created.headers.get('location')).toBe(`/v1/question-sets/${created.body.id}`)
      const read = await call(app.url, 'GET', `/v1/question-sets/${created.body.id}`, { token: readKey })
      expect(read.body).toEqual(created.body)
    }
    const k = crypto.randomUUID()
    const a = await post({ name: 'Idem', vertical: 'mortgage' }, k)
    const b = await post({ vertical: 'mortgage', name: 'Idem' }, k)
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    expect(b.text).toBe(a.text)
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(problemOf(await post({ name: 'Other' }, k))).toMatchObject({ type: 'urn:svc:error:idempotency_conflict', status: 409 })

    const race = crypto.randomUUID()
    const name = `Race ${race}`
    const replies = await Promise.all(Array.from({ length: 20 }, () => post({ name }, race)))
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([201]))
    expect(new Set(replies.map((r) => r.text)).size).toBe(1)
    expect((await app.sql`select count(*)::int as n from question_sets where name = ${name}`)[0]!.n).toBe(1)
  })
})
