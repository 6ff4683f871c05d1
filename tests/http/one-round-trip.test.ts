/**
 * One round trip per case, question-set and document-upload create (issue 30): the idempotency
 * record, the resource (with its case event) and the answer are
 * one statement, so no backend ever sits "idle in transaction" waiting for the service; replays,
 * conflicts, expired keys and the workspace's default vertical behave as before.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { postgresClient } from '../../server/db/connect'
import { CASE_EVENTS_CHANNEL } from '../../server/events/log'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000)

let app: TestApp
let tenantId: string
let key: string
let caseId: string

beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  tenantId = t.id
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  caseId = (await post({ name: 'documents go here' })).body.id
})
afterAll(() => app.stop())

const post = (body: unknown, idem?: string, path = '/v1/scenarios') =>
  call(app.url, 'POST', path, { token: key, body, headers: idem ? { 'idempotency-key': idem } : {} })

describe('one-statement case create', () => {
  test.skipIf(!process.env.DATABASE_URL)(skipTitle('16 concurrent creators of cases, question sets and document uploads: no backend is ever idle in a transaction', NEEDS_POSTGRES), async () => {
    const sampler = postgresClient(app.config.databaseUrl!, { max: 1, onnotice: () => {} })
    const db = (await sampler<{ db: string }[]>`select current_database() as db`)[0]!.db
    const states: Record<string, number> = {}
    let running = true
    const sampling = (async () => {
      while (running) {
        const rows = await sampler<{ state: string }[]>`
          select state from pg_stat_activity
          where datname = ${db} and backend_type = 'client backend' and pid <> pg_backend_pid() and state <> 'idle'`
        for (const r of rows) states[r.state] = (states[r.state] ?? 0) + 1
        await Bun.sleep(2)
      }
    })()
    let made = 0
    const until = Date.now() + 2_000
    await Promise.all(Array.from({ length: 16 }, async (_, w) => {
      for (let i = 0; Date.now() < until; i++) {
        const idem = i % 2 === 0 ? crypto.randomUUID() : undefined
        const r = w % 3 === 2
          ? await post({ filename: `burst-${w}-${i}.pdf`, content_type: 'application/pdf', size_bytes: 1000 }, idem, `/v1/scenarios/${caseId}/documents`)
          : await post({ name: `burst ${w}-${i}` }, idem, w % 3 === 0 ? '/v1/scenarios' : '/v1/question-sets')
        expect(r.status).toBe(201)
        made++
      }
    }))
    running = false
    await sampling
    await sampler.end()
    console.log(`one-round-trip: ${made} creates; backend states sampled:`, states)
    expect(made).toBeGreaterThan(50)
    expect(states.active ?? 0).toBeGreaterThan(0)
    expect(states['idle in transaction'] ?? 0).toBe(0)
  })

  test('the response is the stored replay, byte for byte; another body is 409', async () => {
    const idem = crypto.randomUUID()
    const first = await post({ name: 'Quote "a" \u00e9\u2028', external_ref: 'r-1' }, idem)
    expect(first.status).toBe(201)
    const again = await post({ external_ref: 'r-1', name: 'Quote "a" \u00e9\u2028' }, idem)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
    const read = await call(app.url, 'GET', first.headers.get('location')!, { token: key })
    expect(read.text).toBe(first.text)
    const other = await post({ name: 'different' }, idem)
    expect(problemOf(other)).toMatchObject({ status: 409, type: 'urn:svc:error:idempotency_conflict' })
    const n = (await app.sql<{ n: number }[]>`select count(*)::int as n from scenarios where tenant_id = ${tenantId} and external_ref = 'r-1'`)[0]!.n
    expect(n).toBe(1)
  })

  test('an expired key is taken over: the request creates again', async () => {
    const idem = crypto.randomUUID()
    const first = await post({ name: 'before expiry' }, idem)
    expect(first.status).toBe(201)
    await app.sql`update idempotency_keys set expires_at = now() - interval '1 second' where tenant_id = ${tenantId} and key = ${idem}`
    const second = await post({ name: 'after expiry' }, idem)
    expect(second.status).toBe(201)
    expect(second.headers.get('idempotent-replayed')).toBeNull()
    expect(second.body.id).not.toBe(first.body.id)
    const replay = await post({ name: 'after expiry' }, idem)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body.id).toBe(second.body.id)
  })

  test("a case without a vertical takes the workspace's default, read in the same statement", async () => {
    await app.sql`
      insert into tenant_settings (tenant_id, vertical) values (${tenantId}, 'mortgage')
      on conflict (tenant_id) do update set vertical = excluded.vertical`
    const keyed = await post({ name: 'defaulted' }, crypto.randomUUID())
    expect(keyed.body.vertical).toBe('mortgage')
    const plain = await post({ name: 'defaulted, no key' })
    expect(plain.body.vertical).toBe('mortgage')
    const explicitNull = await post({ name: 'no vertical', vertical: null })
    expect('vertical' in explicitNull.body).toBe(false)
    const named = await post({ name: 'named', vertical: 'life_insurance' })
    expect(named.body.vertical).toBe('life_insurance')
    const set = await post({ name: 'defaulted set' }, crypto.randomUUID(), '/v1/question-sets')
    expect(set.body.vertical).toBe('mortgage')
    const plainSet = await post({ name: 'set without vertical', vertical: null }, undefined, '/v1/question-sets')
    expect('vertical' in plainSet.body).toBe(false)
    for (const r of [keyed, plain, explicitNull, named, set, plainSet]) {
      const read = await call(app.url, 'GET', r.headers.get('location')!, { token: key })
      expect(read.text).toBe(r.text)
    }
    await app.sql`update tenant_settings set vertical = null where tenant_id = ${tenantId}`
  })

  test('a document upload start: the answer is the read plus its upload; one case event per document, announced; a replay adds nothing', async () => {
    const scenario = (await post({ name: 'uploads' })).body.id as string
    const listener = process.env.DATABASE_URL ? postgresClient(app.config.databaseUrl!, { max: 1, onnotice: () => {} }) : undefined
    const heard: string[] = []
    await listener?.listen(CASE_EVENTS_CHANNEL, (payload) => { heard.push(payload) })
    const path = `/v1/scenarios/${scenario}/documents`
    const idem = crypto.randomUUID()
    const body = { filename: 'statement.pdf', content_type: 'application/pdf', size_bytes: 2048, checksum_sha256: 'AB'.repeat(32) }
    const first = await post(body, idem, path)
    expect(first.status).toBe(201)
    expect(first.headers.get('location')).toBe(`${path}/${first.body.id}`)
    expect(first.body).toMatchObject({ status: 'awaiting_upload', checksum_sha256: 'ab'.repeat(32), upload: { method: 'PUT' } })
    const again = await post({ ...body }, idem, path)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
    expect(problemOf(await post({ ...body, size_bytes: 1 }, idem, path))).toMatchObject({ status: 409, type: 'urn:svc:error:idempotency_conflict' })
    const { upload: _, ...document } = first.body
    const read = await call(app.url, 'GET', first.headers.get('location')!, { token: key })
    expect(read.body).toEqual(document)
    const second = await post({ ...body, filename: 'second.pdf' }, undefined, path)
    expect(second.status).toBe(201)
    const events = await app.sql<{ seq: string; type: string; data: { document_id: string; status: string } }[]>`
      select seq, type, data from case_events where tenant_id = ${tenantId} and scenario_id = ${scenario} order by seq`
    expect(events.map((e) => [Number(e.seq), e.type, e.data.document_id, e.data.status])).toEqual([
      [1, 'document.status', first.body.id, 'awaiting_upload'],
      [2, 'document.status', second.body.id, 'awaiting_upload'],
    ])
    if (listener) {
      for (let i = 0; i < 100 && heard.length < 2; i++) await Bun.sleep(20)
      await listener.end()
      expect(heard).toEqual([`${tenantId}:${scenario}:1`, `${tenantId}:${scenario}:2`])
    }
  })
})
