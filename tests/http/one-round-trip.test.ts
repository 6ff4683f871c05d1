/**
 * One round trip per case (and question-set) create (issue 30): the idempotency record, the resource and the answer are
 * one statement, so no backend ever sits "idle in transaction" waiting for the service; replays,
 * conflicts, expired keys and the workspace's default vertical behave as before.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { postgresClient } from '../../server/db/connect'

setDefaultTimeout(60_000)

let app: TestApp
let tenantId: string
let key: string

beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  tenantId = t.id
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app.stop())

const post = (body: unknown, idem?: string, path = '/v1/scenarios') =>
  call(app.url, 'POST', path, { token: key, body, headers: idem ? { 'idempotency-key': idem } : {} })

describe('one-statement case create', () => {
  test.skipIf(!process.env.DATABASE_URL)('16 concurrent creators of cases and question sets: no backend is ever idle in a transaction', async () => {
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
        const r = await post({ name: `burst ${w}-${i}` }, i % 2 === 0 ? crypto.randomUUID() : undefined, w % 2 === 0 ? '/v1/scenarios' : '/v1/question-sets')
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
})
