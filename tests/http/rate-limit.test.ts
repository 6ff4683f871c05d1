import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { postgresClient, type Sql } from '../../server/db/connect'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { consumeRate, takeRateToken, type RateClassName } from '../../server/http/rate-limit'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
import { emptyRateBucket } from '../helpers/rate-buckets'
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): concurrent takes through two database clients: the embedded database is one session owned by one process')

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

// Run class: burst 3, one token back every 0.5 s (refill tests). Unit class: burst 5, one per hour (exact counts).
let app: TestApp
let second: Sql | undefined

beforeAll(async () => {
  let self: TestApp | undefined
  app = await startApp({
    env: { SVC_RATE_RUN: '3/0.5', SVC_RATE_UNIT: '5/3600' },
    runner: false,
    // A test-only route that spends one token of the caller-named workspace and class.
    extend: (a) => a.post('/test-only/rate/:klass', async ({ params, request }) => {
      await consumeRate(self!.deps, request.headers.get('x-tenant')!, params.klass as RateClassName)
      return { ok: true }
    }),
  })
  self = app
  // A second client of the same database, standing in for another API process (PostgreSQL only:
  // the embedded database is one session owned by one process, so it has no second API process).
  if (app.config.databaseUrl) second = postgresClient(app.config.databaseUrl, { max: 4, onnotice: () => {} })
})
afterAll(async () => {
  await second?.end({ timeout: 5 })
  await app.stop()
})

const spend = (tenantId: string, klass: RateClassName) => call(app.url, 'POST', `/test-only/rate/${klass}`, { headers: { 'x-tenant': tenantId } })
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('the run-starting class (burst 3, refill 0.5 s)', () => {
  test('the burst passes; the next call is 429 with equal Retry-After and retry_after_seconds', async () => {
    const t = await app.tenant()
    for (let i = 0; i < 3; i++) expect((await spend(t.id, 'run')).status).toBe(200)
    const refused = await spend(t.id, 'run')
    const p = problemOf(refused)
    expect(p).toMatchObject({ type: 'urn:svc:error:rate_limited', status: 429, title: 'Rate limited', retry_after_seconds: 1 })
    expect(refused.headers.get('retry-after')).toBe(String(p.retry_after_seconds))
    expect(p.detail).toContain('run-starting')
  })

  test('a token comes back after the refill interval, and only one', async () => {
    const t = await app.tenant()
    for (let i = 0; i < 3; i++) await spend(t.id, 'run')
    expect((await spend(t.id, 'run')).status).toBe(429)
    await sleep(600)
    expect((await spend(t.id, 'run')).status).toBe(200)
    expect((await spend(t.id, 'run')).status).toBe(429)
  })

  test('an idle bucket refills to the burst, never beyond it', async () => {
    const t = await app.tenant()
    for (let i = 0; i < 3; i++) await spend(t.id, 'run')
    await sleep(2_200) // four intervals' worth
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await spend(t.id, 'run')).status)
    expect(statuses).toEqual([200, 200, 200, 429])
  })
})

describe('buckets per workspace and class', () => {
  test("one workspace's empty bucket does not limit another, nor the other class", async () => {
    const a = await app.tenant()
    const b = await app.tenant()
    for (let i = 0; i < 3; i++) await spend(a.id, 'run')
    expect((await spend(a.id, 'run')).status).toBe(429)
    expect((await spend(b.id, 'run')).status).toBe(200)
    expect((await spend(a.id, 'unit')).status).toBe(200)
  })

  test('the unit-of-work class: burst 5, then 429 with Retry-After of the hour-long refill', async () => {
    const t = await app.tenant()
    for (let i = 0; i < 5; i++) expect((await spend(t.id, 'unit')).status).toBe(200)
    const refused = await spend(t.id, 'unit')
    const p = problemOf(refused)
    expect(p.type).toBe('urn:svc:error:rate_limited')
    expect(p.retry_after_seconds).toBeGreaterThan(3590)
    expect(p.retry_after_seconds).toBeLessThanOrEqual(3600)
    expect(refused.headers.get('retry-after')).toBe(String(p.retry_after_seconds))
    expect(p.detail).toContain('unit-of-work')
  })

  test('the bucket is one row per workspace and class in PostgreSQL', async () => {
    const t = await app.tenant()
    await spend(t.id, 'unit')
    await spend(t.id, 'run')
    const rows = await app.sql`select class, tokens from rate_buckets where tenant_id = ${t.id} order by class`
    expect(rows.map((r) => r.class)).toEqual(['run', 'unit'])
    expect(Number(rows.find((r) => r.class === 'unit')!.tokens)).toBeCloseTo(4, 2)
  })
})

describe('shared by every API process', () => {
  test.skipIf(!process.env.DATABASE_URL)(skipTitle('concurrent takes through two database clients spend exactly the burst', NEEDS_POSTGRES), async () => {
    const t = await app.tenant()
    const deps2 = { sql: second!, config: app.config }
    const takes = await Promise.all([
      ...Array.from({ length: 10 }, () => takeRateToken(app.deps, t.id, 'unit')),
      ...Array.from({ length: 10 }, () => takeRateToken(deps2 as never, t.id, 'unit')),
    ])
    expect(takes.filter((x) => x.allowed)).toHaveLength(5)
    // The bucket the other "process" emptied refuses this one's HTTP calls too.
    expect((await spend(t.id, 'unit')).status).toBe(429)
  })

  test('a token spent inside a transaction that rolls back is given back', async () => {
    const t = await app.tenant()
    await app.sql.begin(async (tx) => {
      for (let i = 0; i < 5; i++) await consumeRate(app.deps, t.id, 'unit', tx)
      throw new Error('work failed')
    }).catch(() => {})
    expect((await spend(t.id, 'unit')).status).toBe(200)
  })
})

describe('on a route the spec names (publishing a version: unit of work)', () => {
  test('an empty unit bucket refuses the publish with 429 and publishes nothing', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['question_sets:write', 'question_sets:read'])
    const set = await call(app.url, 'POST', '/v1/question-sets', { token: key, body: { name: 'Rate' } })
    expect(set.status).toBe(201)
    const version = await call(app.url, 'POST', `/v1/question-sets/${set.body.id}/versions`, {
      token: key, body: { questions: [{ key: 'q1', text: 'Is it?', criticality: 'minor', answer_type: 'boolean' }] },
    })
    expect(version.status).toBe(201)
    await emptyRateBucket(app, t.id, 'unit')
    const refused = await call(app.url, 'POST', `/v1/question-sets/${set.body.id}/versions/${version.body.id}/publish`, {
      token: key, body: {}, headers: { 'if-match': version.headers.get('etag') ?? '*' },
    })
    const p = problemOf(refused)
    expect(p).toMatchObject({ type: 'urn:svc:error:rate_limited', status: 429 })
    expect(refused.headers.get('retry-after')).toBe(String(p.retry_after_seconds))
    const after = await call(app.url, 'GET', `/v1/question-sets/${set.body.id}/versions/${version.body.id}`, { token: key })
    expect(after.body.status).toBe('draft')
  })
})
