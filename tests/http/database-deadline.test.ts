// A statement whose answer does not come (here: it waits on a lock the test holds; behind a pooler:
// an answer the pooler dropped) ends as 503 `unavailable` with Retry-After once the statement
// deadline passes (SVC_DB_STATEMENT_TIMEOUT_MS), and a request that finds no free connection within
// the pool wait (SVC_DB_POOL_WAIT_MS) likewise; the connections are replaced and the next request
// is served. PostgreSQL only: the embedded database is one in-process session without a deadline.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { postgresClient, type Sql } from '../../server/db/connect'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000)

const enabled = Boolean(process.env.DATABASE_URL)
if (!enabled) console.warn('database-deadline test skipped: it needs DATABASE_URL (PostgreSQL)')

describe.if(enabled)(skipTitle('statement deadline and pool wait', NEEDS_POSTGRES), () => {
  let app: TestApp
  let key: string
  let caseId: string
  let locker: Sql

  if (enabled) beforeAll(async () => {
    app = await startApp({ env: { SVC_DB_STATEMENT_TIMEOUT_MS: '1000', SVC_DB_POOL_WAIT_MS: '500', SVC_DB_POOL_MAX: '2' }, runner: false })
    const tenant = await app.tenant()
    key = await app.apiKey(tenant.id, ['scenarios:read', 'scenarios:write'])
    const c = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Deadline' } })
    expect(c.status).toBe(201)
    caseId = c.body.id
    locker = postgresClient(app.config.databaseUrl!, { max: 1, onnotice: () => {} })
  })
  if (enabled) afterAll(async () => {
    await locker?.end({ timeout: 1 })
    await app?.stop()
  })

  test('statements blocked past the deadline, and requests that found no connection, answer 503 with Retry-After; then service resumes', async () => {
    let release!: () => void
    const released = new Promise<void>((r) => (release = r))
    let locked!: () => void
    const holding = new Promise<void>((r) => (locked = r))
    const tx = locker.begin(async (sql) => {
      await sql`lock table scenarios in access exclusive mode`
      locked()
      await released
    })
    await holding
    try {
      const replies = await Promise.all(Array.from({ length: 4 }, () => call(app.url, 'GET', `/v1/scenarios/${caseId}`, { token: key })))
      for (const r of replies) {
        expect(r.status).toBe(503)
        expect(problemOf(r).type).toBe('urn:svc:error:unavailable')
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
      }
    } finally {
      release()
      await tx
    }
    const again = await call(app.url, 'GET', `/v1/scenarios/${caseId}`, { token: key })
    expect(again.status).toBe(200)
    expect(again.body.id).toBe(caseId)
  })
})
