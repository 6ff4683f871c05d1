/**
 * The webhook signing secret: minted lazily by the first rotate, full value only in the rotate
 * response, metadata on GET, the previous secret valid 24 h then destroyed (last 4 kept), stored
 * encrypted, never logged, rotations serialised, and the write/read permission split.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { openSecret, secretForSigning } from '../../server/notifications/signing-secret'
import { runMaintenance } from '../../server/notifications/maintenance'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

let app: TestApp
let issuer: TestIssuer
const captured: string[] = []

beforeAll(async () => {
  // Everything the process logs while this file runs, to prove no secret reaches a log line.
  for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[m].bind(console)
    spyOn(console, m).mockImplementation((...args: unknown[]) => { captured.push(args.map(String).join(' ')); original(...args) })
  }
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer }, runner: false })
}, 120_000)
afterAll(async () => {
  await app.stop()
  issuer.stop()
}, 120_000)

const ROTATE = '/v1/webhook-signing-secret/rotate'
const META = '/v1/webhook-signing-secret'

describe('webhook signing secret', () => {
  test('none until the first rotate mints it; the value only in the rotate response; metadata on GET', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['notifications:write'])
    const before = await call(app.url, 'GET', META, { token: key })
    expect(problemOf(before)).toMatchObject({ type: 'urn:svc:error:not_found', status: 404 })

    const r = await call(app.url, 'POST', ROTATE, { token: key })
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.body).toEqual({ id: expect.any(String), secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/), secret_last4: r.body.secret.slice(-4), rotated_at: expect.any(String) })
    expect(r.body.previous_revoke_at).toBeUndefined()

    const meta = await call(app.url, 'GET', META, { token: key })
    expect(meta.status).toBe(200)
    expect(meta.body).toEqual({ id: r.body.id, secret_last4: r.body.secret_last4, created_at: r.body.rotated_at, rotated_at: r.body.rotated_at })
    expect(meta.text).not.toContain(r.body.secret)
    expect(meta.text).not.toContain(r.body.secret.slice(6, 20))

    // Stored encrypted (AES-256-GCM bound to workspace and id), never in plain text.
    const [row] = await app.sql`select secret_ciphertext, secret_last4 from webhook_signing_secrets where tenant_id = ${t.id}`
    const sealed = Buffer.from(row!.secret_ciphertext as Uint8Array)
    expect(sealed.includes(Buffer.from(r.body.secret))).toBe(false)
    expect(sealed.toString('latin1')).not.toContain(r.body.secret.slice(6, 16))
    expect(openSecret(app.deps.secretKey, t.id, r.body.id, sealed)).toBe(r.body.secret)
    expect(() => openSecret(app.deps.secretKey, crypto.randomUUID(), r.body.id, sealed)).toThrow()
    expect(() => openSecret(new Uint8Array(32), t.id, r.body.id, sealed)).toThrow()
  })

  test('rotate keeps the previous secret valid 24 h, then its value is destroyed and its last 4 stay', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['notifications:write'])
    const first = (await call(app.url, 'POST', ROTATE, { token: key })).body
    const second = await call(app.url, 'POST', ROTATE, { token: key })
    expect(second.status).toBe(200)
    expect(second.body.secret).not.toBe(first.secret)
    const revokeAt = new Date(second.body.previous_revoke_at).getTime()
    expect(Math.abs(revokeAt - (new Date(second.body.rotated_at).getTime() + 24 * 3_600_000))).toBeLessThan(5_000)

    const meta = await call(app.url, 'GET', META, { token: key })
    expect(meta.body).toMatchObject({ id: second.body.id, secret_last4: second.body.secret_last4, previous: { id: first.id, secret_last4: first.secret_last4, revoke_at: second.body.previous_revoke_at } })

    // A delivery pinned to the previous secret keeps signing with it during the overlap ...
    expect(await secretForSigning(app.sql, app.deps.secretKey, t.id, first.id)).toEqual({ id: first.id, secret: first.secret })
    expect(await secretForSigning(app.sql, app.deps.secretKey, t.id, null)).toEqual({ id: second.body.id, secret: second.body.secret })
    // ... and once revoke_at passes the value is unusable, then destroyed by maintenance.
    await app.sql`update webhook_signing_secrets set revoke_at = now() - interval '1 second' where id = ${first.id}`
    expect(await secretForSigning(app.sql, app.deps.secretKey, t.id, first.id)).toEqual({ id: second.body.id, secret: second.body.secret })
    expect((await call(app.url, 'GET', META, { token: key })).body.previous).toBeUndefined()
    const removed = await app.sql.begin((tx) => runMaintenance(tx))
    expect(removed.secrets).toBeGreaterThanOrEqual(1)
    const [gone] = await app.sql`select secret_ciphertext, secret_last4, destroyed_at from webhook_signing_secrets where id = ${first.id}`
    expect(gone!.secret_ciphertext).toBeNull()
    expect(gone!.destroyed_at).toBeInstanceOf(Date)
    expect(gone!.secret_last4).toBe(first.secret_last4)
  })

  test('concurrent rotations leave exactly one active secret', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['notifications:write'])
    const results = await Promise.all(Array.from({ length: 5 }, () => call(app.url, 'POST', ROTATE, { token: key })))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    const rows = await app.sql`select id, rotated_out_at from webhook_signing_secrets where tenant_id = ${t.id}`
    expect(rows).toHaveLength(5)
    expect(rows.filter((r) => r.rotated_out_at === null)).toHaveLength(1)
  })

  test('rotate needs an admin or reviewer user or notifications:write; reading is open to members', async () => {
    const t = await app.tenant()
    for (const role of ['admin', 'reviewer', 'underwriter', 'viewer']) await app.member(t.id, `ss-${role}-${t.id}`, role)
    const token = (role: string) => issuer.token(`ss-${role}-${t.id}`)
    expect((await call(app.url, 'POST', ROTATE, { token: await token('admin') })).status).toBe(200)
    expect((await call(app.url, 'POST', ROTATE, { token: await token('reviewer') })).status).toBe(200)
    for (const role of ['underwriter', 'viewer']) {
      expect(problemOf(await call(app.url, 'POST', ROTATE, { token: await token(role) }))).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
      expect((await call(app.url, 'GET', META, { token: await token(role) })).status).toBe(200)
    }
    const readKey = await app.apiKey(t.id, ['scenarios:read'])
    expect((await call(app.url, 'GET', META, { token: readKey })).status).toBe(200)
    expect((await call(app.url, 'POST', ROTATE, { token: readKey })).status).toBe(403)
    expect((await call(app.url, 'GET', META, { token: await app.apiKey(t.id, ['embed:mint']) })).status).toBe(403)
    expect((await call(app.url, 'POST', ROTATE, {})).status).toBe(401)
  })

  test('no secret ever reached a log line', () => {
    const all = captured.join('\n')
    expect(all).not.toMatch(/whsec_[A-Za-z0-9_-]{43}/)
  })
})
