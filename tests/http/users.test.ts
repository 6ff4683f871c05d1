import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer }, runner: false })
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

/** A workspace with an admin, a viewer and an all-scopes key; subjects are unique per call. */
async function workspace() {
  const t = await app.tenant()
  const tag = crypto.randomUUID().slice(0, 6)
  const admin = await app.member(t.id, `adm-${tag}`, 'admin', `admin.${tag}@example.test`)
  const viewer = await app.member(t.id, `vie-${tag}`, 'viewer', `viewer.${tag}@example.test`)
  const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'settings:write', 'notifications:write', 'embed:mint'])
  return {
    t, admin, viewer, key,
    adminToken: await issuer.token(`adm-${tag}`),
    viewerToken: await issuer.token(`vie-${tag}`),
    tag,
  }
}

const patch = (userId: string, body: unknown, token: string) => call(app.url, 'PATCH', `/v1/users/${userId}`, { token, body })

describe('the roster', () => {
  test('any member reads it; items equal the single GET; pages with a cursor', async () => {
    const w = await workspace()
    const list = await call(app.url, 'GET', '/v1/users', { token: w.viewerToken })
    expect(list.status).toBe(200)
    expect(list.body.items.map((u: { email: string }) => u.email).sort()).toEqual([`admin.${w.tag}@example.test`, `viewer.${w.tag}@example.test`])
    const one = await call(app.url, 'GET', `/v1/users/${w.admin.id}`, { token: w.viewerToken })
    expect(one.body).toEqual({ id: w.admin.id, email: `admin.${w.tag}@example.test`, role: 'admin', status: 'active', created_at: expect.any(String), updated_at: expect.any(String) })
    expect(list.body.items.find((u: { id: string }) => u.id === w.admin.id)).toEqual(one.body)
    const p1 = await call(app.url, 'GET', '/v1/users?limit=1', { token: w.viewerToken })
    expect(p1.body.items).toHaveLength(1)
    const p2 = await call(app.url, 'GET', `/v1/users?limit=1&cursor=${encodeURIComponent(p1.body.next_cursor)}`, { token: w.viewerToken })
    expect(p2.body.items).toHaveLength(1)
    expect(p2.body.items[0].id).not.toBe(p1.body.items[0].id)
    expect(p2.body.next_cursor).toBeNull()
  })

  test('API keys are refused with 403 on the roster and its changes, whatever their scopes', async () => {
    const w = await workspace()
    for (const r of [
      await call(app.url, 'GET', '/v1/users', { token: w.key }),
      await call(app.url, 'GET', `/v1/users/${w.viewer.id}`, { token: w.key }),
      await patch(w.viewer.id, { role: 'admin' }, w.key),
    ]) {
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
      expect(problemOf(r).detail).toContain('human-only')
    }
    const [row] = await app.sql`select role from users where tenant_id = ${w.t.id} and id = ${w.viewer.id}`
    expect(row!.role).toBe('viewer')
  })

  test("another workspace's member is 404", async () => {
    const a = await workspace()
    const b = await workspace()
    expect(problemOf(await call(app.url, 'GET', `/v1/users/${b.admin.id}`, { token: a.adminToken })).status).toBe(404)
    expect(problemOf(await patch(b.viewer.id, { role: 'admin' }, a.adminToken)).status).toBe(404)
  })
})

describe('role change and deactivation', () => {
  test('an admin changes a role; it applies on the next request; it is audited', async () => {
    const w = await workspace()
    const r = await patch(w.viewer.id, { role: 'underwriter' }, w.adminToken)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: w.viewer.id, role: 'underwriter', status: 'active' })
    expect((await call(app.url, 'GET', '/v1/tenants/me', { token: w.viewerToken })).body.identity.role).toBe('underwriter')
    const [audit] = await app.sql`select kind, actor, data from audit_events where tenant_id = ${w.t.id} and kind = 'user.updated'`
    expect(audit).toEqual({
      kind: 'user.updated', actor: { kind: 'user', id: w.admin.id },
      data: { user_id: w.viewer.id, before: { role: 'viewer', status: 'active' }, after: { role: 'underwriter', status: 'active' } },
    })
  })

  test('deactivation takes effect at once (401); reactivation restores access', async () => {
    const w = await workspace()
    expect((await patch(w.viewer.id, { status: 'deactivated' }, w.adminToken)).body.status).toBe('deactivated')
    expect(problemOf(await call(app.url, 'GET', '/v1/tenants/me', { token: w.viewerToken })).status).toBe(401)
    const listed = await call(app.url, 'GET', '/v1/users?status=deactivated', { token: w.adminToken })
    expect(listed.body.items.map((u: { id: string }) => u.id)).toEqual([w.viewer.id])
    expect((await patch(w.viewer.id, { status: 'active' }, w.adminToken)).status).toBe(200)
    expect((await call(app.url, 'GET', '/v1/tenants/me', { token: w.viewerToken })).status).toBe(200)
  })

  test('the last active admin cannot be demoted or deactivated (409); with a second admin it can', async () => {
    const w = await workspace()
    expect(problemOf(await patch(w.admin.id, { role: 'viewer' }, w.adminToken))).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    expect(problemOf(await patch(w.admin.id, { status: 'deactivated' }, w.adminToken)).status).toBe(409)
    expect((await patch(w.viewer.id, { role: 'admin' }, w.adminToken)).status).toBe(200)
    expect((await patch(w.admin.id, { role: 'reviewer' }, w.adminToken)).body.role).toBe('reviewer')
    // The former admin is now a reviewer and may no longer change roles.
    expect(problemOf(await patch(w.viewer.id, { role: 'viewer' }, w.adminToken)).type).toBe('urn:svc:error:forbidden')
  })

  test('only admins change the roster; an unknown role is 422 with a pointer', async () => {
    const w = await workspace()
    expect(problemOf(await patch(w.admin.id, { role: 'viewer' }, w.viewerToken)).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await patch(w.viewer.id, { role: 'owner' }, w.adminToken)).errors?.[0]?.pointer).toBe('/role')
    expect(problemOf(await patch(w.viewer.id, { status: 'gone' }, w.adminToken)).errors?.[0]?.pointer).toBe('/status')
  })
})
