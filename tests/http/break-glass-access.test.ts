/**
 * Break-glass access: while an approved request's window is open, its operator reads the
 * workspace's cases, documents, answers and reports through the normal GET routes, never writes,
 * and every read is on the workspace's audit chain naming the request. 403 before approval, after
 * expiry and after revocation (at once, and in another service process); denied requests and other
 * operators' grants give nothing. The workspace is named with SVC-Tenant-Id, or implied by the
 * operator's one open grant.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { runCli } from '../helpers/cli'
import { spawnService, type ServiceProcess } from '../helpers/service-process'
import { caseWith, evaluationEnded, packFiles, publishedSet } from '../helpers/underwriting-pack'
import { postgresClient } from '../../server/db/connect'
import { verifyAuditChain } from '../../server/workspaces/audit-store'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer
let w: { id: string; slug: string }
let key: string
let admin: string
let operator: string
/** Every read of a case's family: [path, whether it answers JSON]. */
let reads: [string, boolean][]

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'op-read,op-other,op-member' } })
  w = await app.tenant()
  key = await app.apiKey(w.id, ['scenarios:read', 'scenarios:write', 'question_sets:write', 'settings:write'])
  await app.member(w.id, 'bga-admin', 'admin')
  admin = await issuer.token('bga-admin')
  operator = await issuer.token('op-read')
  expect((await call(app.url, 'PUT', '/v1/tenant-settings', { token: key, body: { break_glass_require_tenant_approval: true } })).status).toBe(200)

  // A case with documents, an evaluation (answers, evidence, decision) and a report.
  await publishedSet(app, key)
  const { scenario, docs } = await caseWith(app, key, await packFiles())
  const evaluation = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
  expect((await evaluationEnded(app, key, scenario.id, evaluation.body.id)).status).toBe('succeeded')
  const report = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/reports`, { token: key, body: {} })
  expect(report.status).toBe(202)
  for (let end = Date.now() + 30_000; ;) {
    const r = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/reports/${report.body.id}`, { token: key })
    if (r.body.status === 'succeeded') break
    if (Date.now() > end || r.body.status === 'failed') throw new Error(`report ${r.body.status}`)
    await Bun.sleep(25)
  }
  const s = `/v1/scenarios/${scenario.id}`
  const d = `${s}/documents/${Object.values(docs)[0].id}`
  reads = [
    ['/v1/scenarios', true], [s, true], [`${s}/documents`, true], [d, true], [`${d}/blocks`, true], [`${d}/download`, false],
    [`${s}/answers`, true], [`${s}/evidence`, true], [`${s}/decision`, true],
    [`${s}/evaluations`, true], [`${s}/evaluations/${evaluation.body.id}`, true],
    [`${s}/reports`, true], [`${s}/reports/${report.body.id}`, true], [`${s}/reports/${report.body.id}/download`, false],
    [`${s}/supersessions`, true],
  ]
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const get = (path: string, token: string, tenant?: string) =>
  call(app.url, 'GET', path, { token, headers: tenant ? { 'svc-tenant-id': tenant } : {} })
const raise = (tenantId: string, token = operator, minutes = 30) =>
  call(app.url, 'POST', `/v1/tenants/${tenantId}/break-glass/requests`, { token, body: { reason: 'Customer ticket 77', duration_minutes: minutes } })
const decide = (id: string, verb: 'approve' | 'deny' | 'revoke', token = admin) => call(app.url, 'POST', `/v1/break-glass/requests/${id}/${verb}`, { token })
const readRows = async (tenantId = w.id) =>
  app.sql`select seq, actor, data from audit_events where tenant_id = ${tenantId} and kind = 'break_glass.read' order by seq`

/** Every read of the family is 403 for `token`, and none of them is recorded. */
async function expectNoAccess(token: string, tenant?: string) {
  const before = (await readRows()).length
  for (const [path] of reads) {
    const r = await get(path, token, tenant)
    expect({ path, status: r.status, type: problemOf(r).type }).toEqual({ path, status: 403, type: 'urn:svc:error:forbidden' })
  }
  expect((await readRows()).length).toBe(before)
}

/** Every read of the family answers exactly what a member's key reads. */
async function expectReads(token: string, tenant?: string) {
  for (const [path, json] of reads) {
    const [mine, theirs] = await Promise.all([get(path, token, tenant), get(path, key)])
    expect({ path, status: mine.status }).toEqual({ path, status: 200 })
    if (json) expect(mine.body).toEqual(theirs.body)
    else expect(mine.text.length).toBe(theirs.text.length)
  }
}

/** Ends every open window of the workspace (tests start from none). */
const closeAll = () => app.sql`update break_glass_requests set access_expires_at = now() - interval '1 second' where status = 'approved'`

describe('an approved window', () => {
  test('403 before approval; during the window every read of cases, documents, answers and reports, each on the audit chain; 403 after expiry', async () => {
    await closeAll()
    await expectNoAccess(operator)
    await expectNoAccess(operator, w.id)

    const r = await raise(w.id)
    expect(r.body).toMatchObject({ status: 'requested', access_active: false })
    await expectNoAccess(operator)

    expect((await decide(r.body.id, 'approve')).body).toMatchObject({ status: 'approved', access_active: true })
    const before = (await readRows()).length
    await expectReads(operator) // the workspace implied by the one open grant
    await expectReads(operator, w.id) // and named
    await expectReads(operator, w.id.toUpperCase())

    // One chain entry per read, naming the request, the operator, the method and the path.
    const rows = (await readRows()).slice(before)
    expect(rows).toHaveLength(reads.length * 3)
    expect(rows.map((x) => x.data.path)).toEqual([...reads, ...reads, ...reads].map(([p]) => p))
    for (const row of rows) {
      expect(row.actor).toEqual({ kind: 'operator', sub: 'op-read' })
      expect(row.data).toMatchObject({ request_id: r.body.id, method: 'GET', http_request_id: expect.any(String) })
    }
    expect(await verifyAuditChain(app.sql, w.id)).toMatchObject({ ok: true })
    // The admin reads them in the audit list too.
    const listed = await call(app.url, 'GET', '/v1/audit-events?kind=break_glass.read&limit=1', { token: admin })
    expect(listed.body.items[0]).toMatchObject({ kind: 'break_glass.read', data: { request_id: r.body.id } })

    // The window lapses: the very next read is 403 and nothing more is recorded.
    await app.sql`update break_glass_requests set access_expires_at = now() - interval '1 second' where tenant_id = ${w.id} and id = ${r.body.id}`
    await expectNoAccess(operator)
    await expectNoAccess(operator, w.id)
  })

  test('never a write, and nothing beyond the case family: 403, unrecorded', async () => {
    await closeAll()
    const r = await raise(w.id)
    await decide(r.body.id, 'approve')
    const scenarioPath = reads[1]![0]
    const before = (await readRows()).length
    const refused: [string, string, unknown?][] = [
      ['POST', '/v1/scenarios', { name: 'from an operator' }],
      ['POST', `${scenarioPath}/evaluate`],
      ['POST', `${scenarioPath}/reports`, {}],
      ['POST', `${scenarioPath}/documents`, { filename: 'x.pdf', content_type: 'application/pdf', size_bytes: 10 }],
      ['POST', `${scenarioPath}/decision/review`, { outcome: 'refer', reason: 'x' }],
      ['PUT', '/v1/tenant-settings', {}],
      ['GET', '/v1/tenant-settings'], ['GET', '/v1/users'], ['GET', '/v1/api-keys'], ['GET', '/v1/audit-events'],
      ['GET', '/v1/break-glass/requests'], ['GET', '/v1/question-sets'], ['GET', '/v1/task-notification-subscriptions'],
      ['GET', '/v1/tenants/me'], ['GET', `${scenarioPath}/events`],
    ]
    for (const [method, path, body] of refused) {
      for (const headers of [{}, { 'svc-tenant-id': w.id }] as Record<string, string>[]) {
        const res = await call(app.url, method, path, { token: operator, body, headers })
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 })
      }
    }
    expect((await readRows()).length).toBe(before)
    expect((await call(app.url, 'GET', '/v1/scenarios', { token: key })).body.items).toHaveLength(1)
  })
})

describe('revocation', () => {
  test('an admin revokes the window: the next read is 403; only an open window can be revoked', async () => {
    await closeAll()
    const r = await raise(w.id)
    await decide(r.body.id, 'approve')
    expect((await get('/v1/scenarios', operator)).status).toBe(200)
    const revoked = await decide(r.body.id, 'revoke')
    expect(revoked.status).toBe(200)
    expect(revoked.body).toMatchObject({ status: 'revoked', access_active: false, revoked_at: expect.any(String), revoked_by_user_id: expect.any(String) })
    await expectNoAccess(operator)
    await expectNoAccess(operator, w.id)
    expect(problemOf(await decide(r.body.id, 'revoke'))).toMatchObject({ status: 409 })
    const pending = await raise(w.id)
    expect(problemOf(await decide(pending.body.id, 'revoke'))).toMatchObject({ status: 409 })
    await decide(pending.body.id, 'deny')
    // On the chain, and listed by status.
    const [row] = await app.sql`select actor, data from audit_events where tenant_id = ${w.id} and kind = 'break_glass.revoked' order by seq desc limit 1`
    expect(row!.data).toEqual({ request_id: r.body.id, operator_sub: 'op-read' })
    expect((await call(app.url, 'GET', '/v1/break-glass/requests?status=revoked', { token: admin })).body.items.map((i: { id: string }) => i.id)).toContain(r.body.id)
    // Only admins revoke: the operator, a key and a viewer are 403.
    const again = await raise(w.id)
    await decide(again.body.id, 'approve')
    expect((await decide(again.body.id, 'revoke', operator)).status).toBe(403)
    expect((await decide(again.body.id, 'revoke', key)).status).toBe(403)
    // The operator CLI revokes too.
    const cli = await runCli(app, ['break-glass', 'revoke', '--tenant', w.slug, '--id', again.body.id])
    expect(cli.code).toBe(0)
    expect(cli.json).toMatchObject({ id: again.body.id, status: 'revoked' })
    await expectNoAccess(operator)
  })

  test('a revocation made by another process ends access in this one at once', async () => {
    await closeAll()
    const r = await raise(w.id)
    await decide(r.body.id, 'approve')
    expect((await get('/v1/scenarios', operator)).status).toBe(200)
    if (app.config.databaseUrl) {
      const other = postgresClient(app.config.databaseUrl, { max: 1, onnotice: () => {} })
      await other`update break_glass_requests set status = 'revoked', revoked_at = now() where tenant_id = ${w.id} and id = ${r.body.id}`
      await other.end()
    } else {
      await app.sql`update break_glass_requests set status = 'revoked', revoked_at = now() where tenant_id = ${w.id} and id = ${r.body.id}`
    }
    // No waiting: the very next read.
    expect((await get('/v1/scenarios', operator)).status).toBe(403)
  })

  test('a window revoked through one service process is closed in another service process', async () => {
    if (!app.config.databaseUrl) return // the embedded database belongs to one process
    await closeAll()
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-bg-'))
    let second: ServiceProcess | undefined
    try {
      second = await spawnService(['bun', 'server/main.ts'], {
        DATABASE_URL: app.config.databaseUrl, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: randomBytes(32).toString('base64'),
        ...issuer.env, SVC_OPERATOR_SUBJECTS: 'op-read', SVC_JOB_CONCURRENCY: '1', SVC_PARSE_WORKERS: '1',
      })
      const r = await raise(w.id)
      await decide(r.body.id, 'approve')
      const there = (path: string) => call(second!.url, 'GET', path, { token: operator })
      expect((await there('/v1/scenarios')).status).toBe(200)
      expect((await decide(r.body.id, 'revoke')).status).toBe(200)
      expect((await there('/v1/scenarios')).status).toBe(403)
      expect((await get('/v1/scenarios', operator)).status).toBe(403)
    } finally {
      await second?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('what grants nothing', () => {
  test('a denied request, a requested one, and another operator\'s window', async () => {
    await closeAll()
    const denied = await raise(w.id)
    await decide(denied.body.id, 'deny')
    await expectNoAccess(operator)
    await raise(w.id) // left requested
    await expectNoAccess(operator)
    const others = await raise(w.id, await issuer.token('op-other'))
    await decide(others.body.id, 'approve')
    await expectNoAccess(operator)
    await expectNoAccess(operator, w.id)
    expect((await get('/v1/scenarios', await issuer.token('op-other'))).status).toBe(200)
    // A grant raised by the CLI for a subject that is not an operator: its token is not even a credential here.
    const made = await runCli(app, ['break-glass', 'request', '--tenant', w.slug, '--operator', 'not-an-operator', '--reason', 'x'])
    await decide(made.json.id, 'approve')
    expect((await get('/v1/scenarios', await issuer.token('not-an-operator'))).status).toBe(401)
  })

  test('a suspended workspace: tenant_suspended, unrecorded', async () => {
    await closeAll()
    const t = await app.tenant()
    const r = await raise(t.id)
    expect(r.body.status).toBe('approved')
    expect((await get('/v1/scenarios', operator)).status).toBe(200)
    await app.sql`update tenants set status = 'suspended' where id = ${t.id}`
    const before = (await readRows(t.id)).length
    expect(problemOf(await get('/v1/scenarios', operator)).type).toBe('urn:svc:error:tenant_suspended')
    expect((await readRows(t.id)).length).toBe(before)
  })
})

describe('naming the workspace', () => {
  test('two open windows need SVC-Tenant-Id; each names its own workspace; a workspace without a window, or a bad id, is refused', async () => {
    await closeAll()
    const x = await app.tenant()
    const xKey = await app.apiKey(x.id, ['scenarios:write'])
    const xCase = await call(app.url, 'POST', '/v1/scenarios', { token: xKey, body: { name: 'X case' } })
    const inW = await raise(w.id)
    await decide(inW.body.id, 'approve')
    const inX = await raise(x.id) // X needs no approval
    expect(inX.body.status).toBe('approved')

    const ambiguous = await get('/v1/scenarios', operator)
    expect(problemOf(ambiguous)).toMatchObject({ status: 403, type: 'urn:svc:error:forbidden' })
    expect(ambiguous.body.detail).toContain('SVC-Tenant-Id')
    expect((await get('/v1/scenarios', operator, x.id)).body.items.map((i: { id: string }) => i.id)).toEqual([xCase.body.id])
    await expectReads(operator, w.id)
    // Another workspace's case looks absent under X's window.
    expect((await get(reads[1]![0], operator, x.id)).status).toBe(404)
    const [last] = await app.sql`select data from audit_events where tenant_id = ${x.id} and kind = 'break_glass.read' order by seq desc limit 1`
    expect(last!.data).toMatchObject({ request_id: inX.body.id, path: reads[1]![0] })

    const y = await app.tenant()
    expect(problemOf(await get('/v1/scenarios', operator, y.id))).toMatchObject({ status: 403 })
    expect(problemOf(await get('/v1/scenarios', operator, 'not-a-uuid'))).toMatchObject({ status: 400, type: 'urn:svc:error:malformed' })
  })

  test('a member naming another workspace is refused; an operator who is also a member reads their own workspace without the header and the granted one with it', async () => {
    await closeAll()
    const z = await app.tenant()
    const zKey = await app.apiKey(z.id, ['scenarios:read', 'scenarios:write'])
    await app.member(z.id, 'op-member', 'viewer')
    const opMember = await issuer.token('op-member')
    const zCase = await call(app.url, 'POST', '/v1/scenarios', { token: zKey, body: { name: 'Z case' } })
    // A key or a member of Z naming W: 403, whatever their own rights.
    expect((await get('/v1/scenarios', zKey, w.id)).status).toBe(403)
    expect((await get('/v1/scenarios', opMember, w.id)).status).toBe(403)
    // Naming their own workspace is just a read.
    expect((await get('/v1/scenarios', zKey, z.id)).status).toBe(200)

    const r = await raise(w.id, opMember)
    await decide(r.body.id, 'approve')
    expect((await get('/v1/scenarios', opMember)).body.items.map((i: { id: string }) => i.id)).toEqual([zCase.body.id])
    await expectReads(opMember, w.id)
    await decide(r.body.id, 'revoke')
    expect((await get('/v1/scenarios', opMember, w.id)).status).toBe(403)
    expect((await get('/v1/scenarios', opMember)).status).toBe(200)
  })
})
