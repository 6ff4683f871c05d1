import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { readOutbox } from '../helpers/outbox'
import { runCli } from '../helpers/cli'
import { hasBreakGlassAccess } from '../../server/workspaces/break-glass-store'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer
let operator: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'op-bg' }, runner: false })
  operator = await issuer.token('op-bg')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

async function workspace(requireApproval: boolean) {
  const t = await app.tenant()
  const tag = crypto.randomUUID().slice(0, 6)
  const adminUser = await app.member(t.id, `bg-adm-${tag}`, 'admin')
  await app.member(t.id, `bg-vie-${tag}`, 'viewer')
  const admin = await issuer.token(`bg-adm-${tag}`)
  const r = await call(app.url, 'PUT', '/v1/tenant-settings', { token: admin, body: { break_glass_require_tenant_approval: requireApproval } })
  expect(r.status).toBe(200)
  return { t, admin, adminUser, viewer: await issuer.token(`bg-vie-${tag}`) }
}

const raise = (tenantId: string, body: unknown, token = operator) => call(app.url, 'POST', `/v1/tenants/${tenantId}/break-glass/requests`, { token, body })
const poll = (token: string, status = 'requested') => call(app.url, 'GET', `/v1/break-glass/requests?status=${status}`, { token })
const minutesFromNow = (iso: string) => (Date.parse(iso) - Date.now()) / 60_000

describe('approval required by the workspace', () => {
  test('a request waits as requested; the admin discovers it by polling and approves it', async () => {
    const w = await workspace(true)
    const r = await raise(w.t.id, { reason: 'Customer ticket 4711', duration_minutes: 30 })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.any(String), tenant_id: w.t.id, operator_sub: 'op-bg', reason: 'Customer ticket 4711', duration_minutes: 30,
      approval_required: true, status: 'requested', access_active: false, created_at: expect.any(String),
    })
    expect(await hasBreakGlassAccess(app.sql, w.t.id, 'op-bg')).toBe(false)

    const polled = await poll(w.admin)
    expect(polled.status).toBe(200)
    expect(polled.body.items).toEqual([r.body])

    const approved = await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/approve`, { token: w.admin, body: { note: 'ok for today' } })
    expect(approved.status).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', access_active: true, decided_by_user_id: w.adminUser.id, decision_note: 'ok for today' })
    expect(minutesFromNow(approved.body.access_expires_at)).toBeCloseTo(30, 0)
    expect(await hasBreakGlassAccess(app.sql, w.t.id, 'op-bg')).toBe(true)
    expect((await poll(w.admin)).body.items).toEqual([])
    expect((await poll(w.admin, 'approved')).body.items.map((i: { id: string }) => i.id)).toEqual([r.body.id])

    // The operator sees the decision on their side.
    const seen = await call(app.url, 'GET', `/v1/tenants/${w.t.id}/break-glass/requests/${r.body.id}`, { token: operator })
    expect(seen.body).toEqual(approved.body)
    // A decided request cannot be decided again.
    expect(problemOf(await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/deny`, { token: w.admin, body: {} }))).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
  })

  test('deny: no access; the decision may come without a body', async () => {
    const w = await workspace(true)
    const r = await raise(w.t.id, { reason: 'look at a failed run' })
    expect(r.body.duration_minutes).toBe(60)
    const denied = await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/deny`, { token: w.admin })
    expect(denied.status).toBe(200)
    expect(denied.body).toMatchObject({ status: 'denied', access_active: false })
    expect('access_expires_at' in denied.body).toBe(false)
    expect(await hasBreakGlassAccess(app.sql, w.t.id, 'op-bg')).toBe(false)
  })

  test('an approved window lapses', async () => {
    const w = await workspace(true)
    const r = await raise(w.t.id, { reason: 'short', duration_minutes: 1 })
    await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/approve`, { token: w.admin, body: {} })
    await app.sql`update break_glass_requests set access_expires_at = now() - interval '1 second' where tenant_id = ${w.t.id} and id = ${r.body.id}`
    expect(await hasBreakGlassAccess(app.sql, w.t.id, 'op-bg')).toBe(false)
    const one = await call(app.url, 'GET', `/v1/break-glass/requests/${r.body.id}`, { token: w.admin })
    expect(one.body).toMatchObject({ status: 'approved', access_active: false })
  })
})

describe('approval not required', () => {
  test('a request is approved when raised and never waits in the poll', async () => {
    const w = await workspace(false)
    const r = await raise(w.t.id, { reason: 'incident 12', duration_minutes: 15 })
    expect(r.body).toMatchObject({ approval_required: false, status: 'approved', access_active: true })
    expect(minutesFromNow(r.body.access_expires_at)).toBeCloseTo(15, 0)
    expect((await poll(w.admin)).body.items).toEqual([])
    expect(problemOf(await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/approve`, { token: w.admin, body: {} })).status).toBe(409)
  })
})

describe('poll-only and audited', () => {
  test('no notification is sent: no email, no job; every step is on the audit chain', async () => {
    const w = await workspace(true)
    const jobsBefore = await app.sql`select to_regclass('jobs') as t`.then(async ([r]) => r!.t ? (await app.sql`select count(*)::int as n from jobs`)[0]!.n : 0)
    const r = await raise(w.t.id, { reason: 'audit me' })
    await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/approve`, { token: w.admin, body: {} })
    expect(readOutbox(app.config.dataDir)).toEqual([])
    const jobsAfter = await app.sql`select to_regclass('jobs') as t`.then(async ([x]) => x!.t ? (await app.sql`select count(*)::int as n from jobs`)[0]!.n : 0)
    expect(jobsAfter).toBe(jobsBefore)
    const kinds = (await app.sql`select kind, actor from audit_events where tenant_id = ${w.t.id} order by seq`).map((a) => [a.kind, a.actor.kind])
    expect(kinds).toEqual([['tenant.settings.updated', 'user'], ['break_glass.requested', 'operator'], ['break_glass.approved', 'user']])
  })
})

describe('who may do what', () => {
  test('workspace side: admins only (viewers and API keys 403, operators without membership 403)', async () => {
    const w = await workspace(true)
    const r = await raise(w.t.id, { reason: 'x' })
    const key = await app.apiKey(w.t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'settings:write', 'notifications:write', 'embed:mint'])
    for (const token of [w.viewer, key, operator]) {
      expect(problemOf(await poll(token)).status).toBe(403)
      expect(problemOf(await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/approve`, { token, body: {} })).status).toBe(403)
    }
    expect((await call(app.url, 'GET', `/v1/break-glass/requests/${r.body.id}`, { token: w.admin })).body.status).toBe('requested')
  })

  test('operator side: operators only; an unknown workspace is 404; another workspace\'s request is 404 to an admin', async () => {
    const w = await workspace(true)
    const other = await workspace(true)
    expect(problemOf(await raise(w.t.id, { reason: 'x' }, w.admin)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await call(app.url, 'GET', `/v1/tenants/${w.t.id}/break-glass/requests`, { token: w.admin })).status).toBe(403)
    expect(problemOf(await raise(crypto.randomUUID(), { reason: 'x' })).status).toBe(404)
    const r = await raise(other.t.id, { reason: 'theirs' })
    expect(problemOf(await call(app.url, 'POST', `/v1/break-glass/requests/${r.body.id}/approve`, { token: w.admin, body: {} })).status).toBe(404)
    const list = await call(app.url, 'GET', `/v1/tenants/${other.t.id}/break-glass/requests?status=requested`, { token: operator })
    expect(list.body.items.map((i: { id: string }) => i.id)).toEqual([r.body.id])
    expect(problemOf(await raise(w.t.id, { reason: '   ' })).status).toBe(422)
  })

  test('the operator CLI raises and lists requests', async () => {
    const w = await workspace(true)
    const made = await runCli(app, ['break-glass', 'request', '--tenant', w.t.slug, '--operator', 'op-cli', '--reason', 'from the CLI', '--minutes', '45'])
    expect(made.stderr).toBe('')
    expect(made.code).toBe(0)
    expect(made.json).toMatchObject({ tenant_id: w.t.id, operator_sub: 'op-cli', reason: 'from the CLI', duration_minutes: 45, status: 'requested' })
    const listed = await runCli(app, ['break-glass', 'list', '--tenant', w.t.slug, '--status', 'requested'])
    expect(listed.json.items.map((i: { id: string }) => i.id)).toEqual([made.json.id])
    expect((await poll(w.admin)).body.items.map((i: { id: string }) => i.id)).toEqual([made.json.id])
    const bad = await runCli(app, ['break-glass', 'request', '--tenant', w.t.slug, '--operator', 'op-cli', '--reason', 'x', '--minutes', '0'])
    expect(bad.code).toBe(2)
  })
})
