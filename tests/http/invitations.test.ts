import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { createHash } from 'node:crypto'
import { SMTPServer } from 'smtp-server'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { readOutbox } from '../helpers/outbox'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let issuer: TestIssuer
let operator: string

const ORG_CLAIM = 'urn:idp:iam:user:resourceowner:id'

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({
    env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'op-inv', SVC_UI_BASE_URL: 'https://app.example.test' },
    runner: false,
  })
  operator = await issuer.token('op-inv')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const invite = (tenantId: string, body: unknown, token = operator) => call(app.url, 'POST', `/v1/tenants/${tenantId}/invitations`, { token, body })
const mailsTo = (address: string) => readOutbox(app.config.dataDir).filter((m) => m.to.toLowerCase().includes(address.toLowerCase()))
const tokenIn = (text: string) => /^(inv_[A-Za-z0-9_-]{43})$/m.exec(text)?.[1]
const accept = async (sub: string, token: string, claims = {}) =>
  call(app.url, 'POST', '/v1/invitations/accept', { token: await issuer.token(sub, claims), body: { token } })

describe('creating invitations', () => {
  test('convergent: five posts make one pending invitation and one email; repeats return it unchanged', async () => {
    const t = await app.tenant()
    const email = `first.admin.${crypto.randomUUID().slice(0, 6)}@example.test`
    const replies = []
    for (let i = 0; i < 5; i++) replies.push(await invite(t.id, { email, role: 'admin' }))
    expect(replies.map((r) => r.status)).toEqual([201, 200, 200, 200, 200])
    for (const r of replies) expect(r.body).toEqual(replies[0]!.body)
    expect(replies[0]!.body).toEqual({
      id: expect.any(String), tenant_id: t.id, email, role: 'admin', status: 'pending',
      expires_at: expect.any(String), created_at: expect.any(String),
    })
    const days = (Date.parse(replies[0]!.body.expires_at) - Date.parse(replies[0]!.body.created_at)) / 86_400_000
    expect(days).toBeCloseTo(7, 2)
    const rows = await app.sql`select count(*)::int as n from invitations where tenant_id = ${t.id}`
    expect(rows[0]!.n).toBe(1)
    const mails = mailsTo(email)
    expect(mails).toHaveLength(1)
    expect(mails[0]!.subject).toContain(t.slug)
  })

  test('concurrent posts for one address still make one row and one email', async () => {
    const t = await app.tenant()
    const email = `race.${crypto.randomUUID().slice(0, 6)}@example.test`
    const replies = await Promise.all(Array.from({ length: 5 }, () => invite(t.id, { email, role: 'admin' })))
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1)
    expect(replies.filter((r) => r.status === 200)).toHaveLength(4)
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
    expect(mailsTo(email)).toHaveLength(1)
  })

  test('the address is compared without case; another role for a pending address is 409', async () => {
    const t = await app.tenant()
    await app.member(t.id, 'case-admin', 'admin')
    const admin = await issuer.token('case-admin')
    const email = `Case.${crypto.randomUUID().slice(0, 6)}@Example.test`
    expect((await invite(t.id, { email, role: 'reviewer' }, admin)).status).toBe(201)
    expect((await invite(t.id, { email: email.toLowerCase(), role: 'reviewer' }, admin)).status).toBe(200)
    expect(problemOf(await invite(t.id, { email, role: 'viewer' }, admin))).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    expect(mailsTo(email)).toHaveLength(1)
  })

  test('the email carries the token, stored only as its SHA-256; the UI link has it in a fragment, the API URL never', async () => {
    const t = await app.tenant()
    const email = `hash.${crypto.randomUUID().slice(0, 6)}@example.test`
    const r = await invite(t.id, { email, role: 'admin' })
    const [mail] = mailsTo(email)
    const token = tokenIn(mail!.text)!
    expect(token).toBeString()
    const [row] = await app.sql`select token_hash from invitations where tenant_id = ${t.id} and id = ${r.body.id}`
    expect(Buffer.from(row!.token_hash).toString('hex')).toBe(createHash('sha256').update(token).digest('hex'))
    const dump = JSON.stringify(await app.sql`select * from invitations where tenant_id = ${t.id}`)
    expect(dump).not.toContain(token)
    expect(mail!.text).toContain(`https://app.example.test/invitations/accept#token=${token}`)
    const apiLine = mail!.text.split('\n').find((l) => l.includes('/v1/invitations/accept'))!
    expect(apiLine).toBe(`POST ${app.deps.config.baseUrl}/v1/invitations/accept`)
    expect(JSON.stringify(r.body)).not.toContain(token)
  })

  test("the email states the token's expiry in the workspace's time_zone (the record keeps UTC)", async () => {
    const t = await app.tenant()
    await app.sql`insert into tenant_settings (tenant_id, time_zone) values (${t.id}, 'Asia/Tokyo')`
    const email = `zone.${crypto.randomUUID().slice(0, 6)}@example.test`
    const r = await invite(t.id, { email, role: 'admin' })
    expect(r.body.expires_at).toEndWith('Z')
    const tokyo = new Date(Date.parse(r.body.expires_at) + 9 * 3_600_000).toISOString() // Japan keeps UTC+9 all year
    const [mail] = mailsTo(email)
    expect(mail!.text).toContain(`valid until ${tokyo.slice(0, 10)} ${tokyo.slice(11, 19)} GMT+09:00 (Asia/Tokyo)`)
    expect(mail!.text).not.toContain(r.body.expires_at.slice(11, 19))
  })

  test('a bad address is 422 with a pointer; an unknown role is 422 with a pointer', async () => {
    const t = await app.tenant()
    expect(problemOf(await invite(t.id, { email: 'not-an-address', role: 'admin' })).errors).toEqual([{ pointer: '/email', message: 'must be an email address' }])
    expect(problemOf(await invite(t.id, { email: 'a@example.test', role: 'owner' })).errors?.[0]?.pointer).toBe('/role')
  })

  test('without a role it is an admin invitation, from an operator or a workspace admin; a repeat converges (issue 16, item 10)', async () => {
    const t = await app.tenant()
    const email = `first.admin.${crypto.randomUUID().slice(0, 6)}@example.test`
    const first = await invite(t.id, { email })
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({ email, role: 'admin', status: 'pending' })
    const again = await invite(t.id, { email })
    expect(again.status).toBe(200)
    expect(again.body.id).toBe(first.body.id)
    expect((await invite(t.id, { email, role: 'admin' })).body.id).toBe(first.body.id)
    expect(mailsTo(email)).toHaveLength(1)
    // Accepted, the invitee is an admin.
    const jwt = await issuer.token(`first-admin-${first.body.id}`)
    const accepted = await call(app.url, 'POST', '/v1/invitations/accept', { token: jwt, body: { token: tokenIn(mailsTo(email)[0]!.text)! } })
    expect(accepted.body.user).toMatchObject({ email, role: 'admin', status: 'active' })
    // A workspace admin's invitation without a role is an admin invitation too.
    const colleague = await invite(t.id, { email: `second.admin.${crypto.randomUUID().slice(0, 6)}@example.test` }, jwt)
    expect(colleague.status).toBe(201)
    expect(colleague.body.role).toBe('admin')
  })

  test('operators invite administrators only; an unknown workspace is 404', async () => {
    const t = await app.tenant()
    expect(problemOf(await invite(t.id, { email: 'v@example.test', role: 'viewer' }))).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    expect(problemOf(await invite(crypto.randomUUID(), { email: 'a@example.test', role: 'admin' })).status).toBe(404)
  })

  test("a workspace admin invites any role in their own workspace; another workspace is 404; other roles 403", async () => {
    const t = await app.tenant()
    const other = await app.tenant()
    await app.member(t.id, 'inv-admin', 'admin')
    await app.member(t.id, 'inv-reviewer', 'reviewer')
    const admin = await issuer.token('inv-admin')
    expect((await invite(t.id, { email: `u.${crypto.randomUUID().slice(0, 6)}@example.test`, role: 'underwriter' }, admin)).status).toBe(201)
    expect(problemOf(await invite(other.id, { email: 'x@example.test', role: 'viewer' }, admin)).status).toBe(404)
    expect(problemOf(await invite(t.id, { email: 'x@example.test', role: 'viewer' }, await issuer.token('inv-reviewer'))).type).toBe('urn:svc:error:forbidden')
  })

  test('API keys are refused with 403 on every invitation route, whatever their scopes', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'settings:write', 'notifications:write', 'embed:mint'])
    const replies = [
      await invite(t.id, { email: 'k@example.test', role: 'admin' }, key),
      await call(app.url, 'GET', `/v1/tenants/${t.id}/invitations`, { token: key }),
      await call(app.url, 'POST', `/v1/tenants/${t.id}/invitations/${crypto.randomUUID()}/revoke`, { token: key }),
      await call(app.url, 'POST', '/v1/invitations/accept', { token: key, body: { token: 'inv_x' } }),
    ]
    for (const r of replies) expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    expect((await app.sql`select count(*)::int as n from invitations where tenant_id = ${t.id}`)[0]!.n).toBe(0)
  })
})

describe('accepting', () => {
  test('from email to a working member token: the invitee is bound as an active member with the role', async () => {
    const t = await app.tenant()
    const email = `flow.${crypto.randomUUID().slice(0, 6)}@example.test`
    await invite(t.id, { email, role: 'admin' })
    const token = tokenIn(mailsTo(email)[0]!.text)!
    const jwt = await issuer.token('invitee-flow')
    expect((await call(app.url, 'GET', '/v1/tenants/me', { token: jwt })).status).toBe(401)

    const r = await call(app.url, 'POST', '/v1/invitations/accept', { token: jwt, body: { token } })
    expect(r.status).toBe(200)
    expect(r.body.tenant).toMatchObject({ id: t.id, slug: t.slug })
    expect(r.body.user).toMatchObject({ email, role: 'admin', status: 'active' })

    const me = await call(app.url, 'GET', '/v1/tenants/me', { token: jwt })
    expect(me.status).toBe(200)
    expect(me.body.identity).toMatchObject({ kind: 'user', user_id: r.body.user.id, role: 'admin' })
    // The new admin can use the workspace: invite a colleague and read the roster.
    expect((await invite(t.id, { email: `colleague.${crypto.randomUUID().slice(0, 6)}@example.test`, role: 'viewer' }, jwt)).status).toBe(201)
    expect((await call(app.url, 'GET', '/v1/users', { token: jwt })).body.items.map((u: { email: string }) => u.email)).toContain(email)

    const [inv] = await app.sql`select status, accepted_user_id from invitations where tenant_id = ${t.id} and lower(email) = ${email}`
    expect(inv).toEqual({ status: 'accepted', accepted_user_id: r.body.user.id })
    const list = await call(app.url, 'GET', `/v1/tenants/${t.id}/invitations?status=accepted`, { token: operator })
    expect(list.body.items.map((i: { email: string }) => i.email)).toEqual([email])
    const kinds = (await app.sql`select kind from audit_events where tenant_id = ${t.id} order by seq`).map((a) => a.kind)
    expect(kinds.slice(0, 2)).toEqual(['invitation.created', 'invitation.accepted'])
  })

  test('single use: a second acceptance of the same token is 404', async () => {
    const t = await app.tenant()
    const email = `once.${crypto.randomUUID().slice(0, 6)}@example.test`
    await invite(t.id, { email, role: 'admin' })
    const token = tokenIn(mailsTo(email)[0]!.text)!
    expect((await accept('once-a', token)).status).toBe(200)
    expect(problemOf(await accept('once-b', token))).toMatchObject({ type: 'urn:svc:error:not_found', status: 404 })
    expect(problemOf(await accept('once-c', 'inv_' + 'x'.repeat(43))).status).toBe(404)
  })

  test('an expired invitation cannot be accepted; posting again makes a new one with a new email', async () => {
    const t = await app.tenant()
    const email = `late.${crypto.randomUUID().slice(0, 6)}@example.test`
    const first = await invite(t.id, { email, role: 'admin' })
    const token = tokenIn(mailsTo(email)[0]!.text)!
    await app.sql`update invitations set expires_at = now() - interval '1 second' where tenant_id = ${t.id} and id = ${first.body.id}`
    expect(problemOf(await accept('late-1', token)).status).toBe(404)
    const second = await invite(t.id, { email, role: 'admin' })
    expect(second.status).toBe(201)
    expect(second.body.id).not.toBe(first.body.id)
    expect(mailsTo(email)).toHaveLength(2)
    const [old] = await app.sql`select status from invitations where tenant_id = ${t.id} and id = ${first.body.id}`
    expect(old!.status).toBe('expired')
    expect((await accept('late-1', tokenIn(mailsTo(email)[1]!.text)!)).status).toBe(200)
  })

  test('a revoked invitation cannot be accepted; revoking an accepted one is 409', async () => {
    const t = await app.tenant()
    const email = `rev.${crypto.randomUUID().slice(0, 6)}@example.test`
    const r = await invite(t.id, { email, role: 'admin' })
    const token = tokenIn(mailsTo(email)[0]!.text)!
    const revoked = await call(app.url, 'POST', `/v1/tenants/${t.id}/invitations/${r.body.id}/revoke`, { token: operator })
    expect(revoked.status).toBe(200)
    expect(revoked.body.status).toBe('revoked')
    expect(problemOf(await accept('rev-1', token)).status).toBe(404)

    const email2 = `acc.${crypto.randomUUID().slice(0, 6)}@example.test`
    const r2 = await invite(t.id, { email: email2, role: 'admin' })
    await accept('acc-1', tokenIn(mailsTo(email2)[0]!.text)!)
    const again = await call(app.url, 'POST', `/v1/tenants/${t.id}/invitations/${r2.body.id}/revoke`, { token: operator })
    expect(problemOf(again)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
  })

  test("an active member's address cannot be invited (409); a deactivated member is invited back under a new subject", async () => {
    const t = await app.tenant()
    await app.member(t.id, 'active-1', 'admin', 'active.one@example.test')
    const gone = await app.member(t.id, 'gone-1', 'viewer', 'gone.one@example.test')
    expect(problemOf(await invite(t.id, { email: 'Active.One@example.test', role: 'admin' }))).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    expect(mailsTo('active.one@example.test')).toHaveLength(0)
    await app.sql`update users set status = 'deactivated' where tenant_id = ${t.id} and id = ${gone.id}`
    expect((await invite(t.id, { email: 'gone.one@example.test', role: 'admin' })).status).toBe(201)
    const r = await accept('gone-2', tokenIn(mailsTo('gone.one@example.test')[0]!.text)!)
    expect(r.status).toBe(200)
    expect(r.body.user).toMatchObject({ id: gone.id, role: 'admin', status: 'active' })
  })

  test('a subject already bound to a membership cannot accept (409)', async () => {
    const t = await app.tenant()
    await app.member(t.id, 'already-member', 'viewer')
    const email = `dup.${crypto.randomUUID().slice(0, 6)}@example.test`
    await invite(t.id, { email, role: 'admin' })
    expect(problemOf(await accept('already-member', tokenIn(mailsTo(email)[0]!.text)!)).status).toBe(409)
  })

  test('a bound workspace: the invitee is not_admitted before, needs the organization claim to accept (else 401)', async () => {
    const created = await call(app.url, 'POST', '/v1/tenants', { token: operator, body: { slug: `bound-${crypto.randomUUID().slice(0, 6)}`, organization_id: 'org-inv' } })
    const t = created.body
    const email = `org.${crypto.randomUUID().slice(0, 6)}@example.test`
    await invite(t.id, { email, role: 'admin' })
    const token = tokenIn(mailsTo(email)[0]!.text)!
    const org = { [ORG_CLAIM]: 'org-inv' }
    expect(problemOf(await call(app.url, 'GET', '/v1/tenants/me', { token: await issuer.token('org-person', org) })).type).toBe('urn:svc:error:not_admitted')
    expect(problemOf(await accept('org-person', token, { [ORG_CLAIM]: 'org-elsewhere' })).status).toBe(401)
    expect(problemOf(await accept('org-person', token)).status).toBe(401)
    expect((await accept('org-person', token, org)).status).toBe(200)
    expect((await call(app.url, 'GET', '/v1/tenants/me', { token: await issuer.token('org-person', org) })).status).toBe(200)
  })

  test('no credential is 401; a forged token is 401', async () => {
    expect((await call(app.url, 'POST', '/v1/invitations/accept', { body: { token: 'inv_x' } })).status).toBe(401)
    const forged = await issuer.token('forger', {}, { forged: true })
    expect((await call(app.url, 'POST', '/v1/invitations/accept', { token: forged, body: { token: 'inv_x' } })).status).toBe(401)
  })
})

describe('email delivery through SMTP', () => {
  let smtp: SMTPServer
  let smtpApp: TestApp
  let refuse = true
  const received: string[] = []

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onRcptTo(address, _session, cb) {
        if (refuse) return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }))
        cb()
      },
      onData(stream, _session, cb) {
        let data = ''
        stream.on('data', (c: Buffer) => { data += c.toString('utf8') })
        stream.on('end', () => { received.push(data); cb() })
      },
    })
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()))
    const port = (smtp.server.address() as { port: number }).port
    smtpApp = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'op-inv', SVC_SMTP_URL: `smtp://127.0.0.1:${port}` }, runner: false })
  })
  afterAll(async () => {
    await smtpApp.stop()
    await new Promise<void>((resolve) => smtp.close(() => resolve()))
  })

  test('a failed send is 503 and keeps the invitation; the next post sends it with a token that works', async () => {
    const t = await smtpApp.tenant()
    const email = `smtp.${crypto.randomUUID().slice(0, 6)}@example.test`
    const failed = await call(smtpApp.url, 'POST', `/v1/tenants/${t.id}/invitations`, { token: operator, body: { email, role: 'admin' } })
    expect(problemOf(failed)).toMatchObject({ type: 'urn:svc:error:unavailable', status: 503 })
    expect(failed.headers.get('retry-after')).toBe('30')
    const [row] = await smtpApp.sql`select status, mailed_at from invitations where tenant_id = ${t.id}`
    expect(row).toEqual({ status: 'pending', mailed_at: null })

    refuse = false
    const sent = await call(smtpApp.url, 'POST', `/v1/tenants/${t.id}/invitations`, { token: operator, body: { email, role: 'admin' } })
    expect(sent.status).toBe(200)
    expect(received).toHaveLength(1)
    const again = await call(smtpApp.url, 'POST', `/v1/tenants/${t.id}/invitations`, { token: operator, body: { email, role: 'admin' } })
    expect(again.status).toBe(200)
    expect(received).toHaveLength(1)
    const token = tokenIn(received[0]!.replace(/=\r?\n/g, ''))!
    const r = await call(smtpApp.url, 'POST', '/v1/invitations/accept', { token: await issuer.token('smtp-invitee'), body: { token } })
    expect(r.status).toBe(200)
    expect(r.body.user.email).toBe(email)
  })
})
