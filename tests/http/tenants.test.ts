import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { runCli } from '../helpers/cli'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer
let operator: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'op-1, op-2' }, runner: false })
  operator = await issuer.token('op-1')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const slug = () => `ws-${crypto.randomUUID().slice(0, 8)}`

describe('POST /v1/tenants', () => {
  test('convergent on slug: 201 the first time, 200 with an identical body on a rerun, one row', async () => {
    const s = slug()
    const body = { slug: s, name: 'Acme Lending', organization_id: 'org-acme' }
    const first = await call(app.url, 'POST', '/v1/tenants', { token: operator, body })
    expect(first.status).toBe(201)
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), slug: s, name: 'Acme Lending', organization_id: 'org-acme', status: 'active',
      created_at: expect.any(String), updated_at: expect.any(String),
    })
    expect(first.headers.get('location')).toBe(`/v1/tenants/${first.body.id}`)
    const again = await call(app.url, 'POST', '/v1/tenants', { token: operator, body })
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    const rows = await app.sql`select count(*)::int as n from tenants where slug = ${s}`
    expect(rows[0]!.n).toBe(1)
  })

  test('the name defaults to the slug; organization_id is absent when unbound', async () => {
    const s = slug()
    const r = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: s } })
    expect(r.status).toBe(201)
    expect(r.body.name).toBe(s)
    expect('organization_id' in r.body).toBe(false)
  })

  test('the same slug with other fields is 409 conflict and changes nothing', async () => {
    const s = slug()
    const first = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: s, name: 'One' } })
    const other = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: s, name: 'Two' } })
    expect(problemOf(other)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    const bound = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: s, name: 'One', organization_id: 'org-x' } })
    expect(problemOf(bound).status).toBe(409)
    const [row] = await app.sql`select name, organization_id from tenants where slug = ${s}`
    expect(row).toEqual({ name: 'One', organization_id: null })
    expect(first.status).toBe(201)
  })

  test('a bad slug is 422 with a pointer to /slug', async () => {
    const r = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: 'Not A Slug' } })
    const p = problemOf(r)
    expect(p.status).toBe(422)
    expect(p.errors?.map((e) => e.pointer)).toEqual(['/slug'])
  })

  test('only operators: a workspace admin and an API key are 403, no credential is 401', async () => {
    const t = await app.tenant()
    await app.member(t.id, 'admin-create', 'admin')
    const admin = await issuer.token('admin-create')
    const key = await app.apiKey(t.id, ['scenarios:write', 'settings:write'])
    for (const token of [admin, key]) {
      const r = await call(app.url, 'POST', '/v1/tenants', { token, body: { slug: slug() } })
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    }
    expect((await call(app.url, 'POST', '/v1/tenants', { body: { slug: slug() } })).status).toBe(401)
  })

  test('a member who is also an operator may create workspaces', async () => {
    const t = await app.tenant()
    await app.member(t.id, 'op-2', 'viewer')
    const r = await call(app.url, 'POST', '/v1/tenants', { token: await issuer.token('op-2'), body: { slug: slug() } })
    expect(r.status).toBe(201)
  })
})

describe('GET /v1/tenants/me', () => {
  test('a user sees the workspace and their identity context', async () => {
    const t = await app.tenant(undefined, { name: 'Me Inc' })
    const user = await app.member(t.id, 'me-user', 'reviewer', 'me.user@example.test')
    const r = await call(app.url, 'GET', '/v1/tenants/me', { token: await issuer.token('me-user') })
    expect(r.status).toBe(200)
    expect(r.body.tenant).toMatchObject({ id: t.id, slug: t.slug, name: 'Me Inc', status: 'active' })
    expect(r.body.identity).toEqual({ kind: 'user', user_id: user.id, email: 'me.user@example.test', role: 'reviewer', operator: false })
  })

  test('a test key is marked as such: environment test and its scopes; a live key says live', async () => {
    const t = await app.tenant()
    const testKey = await app.apiKey(t.id, ['scenarios:read'], { environment: 'test' })
    const liveKey = await app.apiKey(t.id, ['settings:write'])
    const a = await call(app.url, 'GET', '/v1/tenants/me', { token: testKey })
    expect(a.status).toBe(200)
    expect(a.body.identity).toMatchObject({ kind: 'api_key', environment: 'test', scopes: ['scenarios:read'], name: 'test' })
    expect(a.body.identity.api_key_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(a.body.tenant.id).toBe(t.id)
    const b = await call(app.url, 'GET', '/v1/tenants/me', { token: liveKey })
    expect(b.body.identity).toMatchObject({ kind: 'api_key', environment: 'live', scopes: ['settings:write'] })
  })

  test('an embed:mint key (which grants nothing else) and an operator without membership are 403', async () => {
    const t = await app.tenant()
    const mint = await app.apiKey(t.id, ['embed:mint'])
    expect(problemOf(await call(app.url, 'GET', '/v1/tenants/me', { token: mint })).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await call(app.url, 'GET', '/v1/tenants/me', { token: operator })).type).toBe('urn:svc:error:forbidden')
  })
})

describe('organization binding', () => {
  let bound: { id: string; slug: string }
  beforeAll(async () => {
    const r = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: slug(), organization_id: 'org-bound' } })
    bound = r.body
    await app.member(bound.id, 'bound-member', 'viewer')
  })
  const claim = (org: string) => ({ 'urn:idp:iam:user:resourceowner:id': org })

  test('a member token stating the bound organization is admitted', async () => {
    const r = await call(app.url, 'GET', '/v1/tenants/me', { token: await issuer.token('bound-member', claim('org-bound')) })
    expect(r.status).toBe(200)
    expect(r.body.tenant.id).toBe(bound.id)
  })

  test('a member token without the organization claim, or with another, is the one 401', async () => {
    for (const token of [await issuer.token('bound-member'), await issuer.token('bound-member', claim('org-other'))]) {
      const r = await call(app.url, 'GET', '/v1/tenants/me', { token })
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:unauthorized', status: 401 })
      expect(r.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  test('a valid non-member of a bound organization is 403 not_admitted, not 401', async () => {
    const r = await call(app.url, 'GET', '/v1/tenants/me', { token: await issuer.token('stranger', claim('org-bound')) })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:not_admitted', status: 403, title: 'Not admitted' })
    expect(r.headers.get('www-authenticate')).toBeNull()
  })

  test('a non-member of an unknown organization, or without one, is 401', async () => {
    for (const token of [await issuer.token('stranger', claim('org-nobody')), await issuer.token('stranger')]) {
      expect(problemOf(await call(app.url, 'GET', '/v1/tenants/me', { token })).status).toBe(401)
    }
  })
})

describe('suspension (svc tenant suspend|resume)', () => {
  test('every call of a suspended workspace is 403 tenant_suspended; resume restores it; both are audited', async () => {
    const t = await app.tenant()
    await app.member(t.id, 'susp-admin', 'admin')
    const user = await issuer.token('susp-admin')
    const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status).toBe(200)

    const s = await runCli(app, ['tenant', 'suspend', '--slug', t.slug])
    expect(s.stderr).toBe('')
    expect(s.code).toBe(0)
    expect(s.json).toMatchObject({ id: t.id, status: 'suspended', changed: true })
    // The CLI is another process: its change reaches this one's credential cache by NOTIFY, a few
    // milliseconds later (longer on a loaded machine); wait for it, at most 2 s.
    for (const end = Date.now() + 2_000; Date.now() < end; await Bun.sleep(20)) {
      if ((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status === 403) break
    }
    for (const [method, path, token] of [
      ['GET', '/v1/scenarios', key], ['POST', '/v1/scenarios', key], ['GET', '/v1/tenants/me', user],
      ['GET', '/v1/users', user], ['GET', '/v1/tenant-settings', user],
    ] as const) {
      const r = await call(app.url, method, path, { token, ...(method === 'POST' ? { body: { name: 'x' } } : {}) })
      expect(problemOf(r), `${method} ${path}`).toMatchObject({ type: 'urn:svc:error:tenant_suspended', status: 403, title: 'Workspace suspended' })
    }
    const again = await runCli(app, ['tenant', 'suspend', '--slug', t.slug])
    expect(again.json).toMatchObject({ status: 'suspended', changed: false })

    const r = await runCli(app, ['tenant', 'resume', '--slug', t.slug])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({ status: 'active', changed: true })
    for (const end = Date.now() + 2_000; Date.now() < end; await Bun.sleep(20)) {
      if ((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status === 200) break
    }
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).status).toBe(200)
    expect((await call(app.url, 'GET', '/v1/tenants/me', { token: user })).body.tenant.status).toBe('active')
    const audit = await app.sql`select kind, actor from audit_events where tenant_id = ${t.id} order by seq`
    expect(audit.map((a) => a.kind)).toEqual(['tenant.suspended', 'tenant.resumed'])
    expect(audit[0]!.actor).toEqual({ kind: 'cli' })
  })

  test('an unknown slug is a clear CLI refusal with exit code 2', async () => {
    const r = await runCli(app, ['tenant', 'suspend', '--slug', 'no-such-workspace'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('no workspace with slug "no-such-workspace"')
  })
})
