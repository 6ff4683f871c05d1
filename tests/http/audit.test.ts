import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { createHash } from 'node:crypto'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { runCli } from '../helpers/cli'

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

/** The chain's hash, computed independently of the service: SHA-256 of JSON with sorted keys. */
const canonical = (v: unknown): string => Array.isArray(v) ? `[${v.map(canonical).join(',')}]`
  : v && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
  : JSON.stringify(v ?? null)

async function workspaceWithSaves(saves: number) {
  const t = await app.tenant()
  const tag = crypto.randomUUID().slice(0, 6)
  await app.member(t.id, `aud-adm-${tag}`, 'admin')
  await app.member(t.id, `aud-vie-${tag}`, 'viewer')
  const admin = await issuer.token(`aud-adm-${tag}`)
  for (let i = 0; i < saves; i++) {
    const r = await call(app.url, 'PUT', '/v1/tenant-settings', { token: admin, body: { embed_allowed_origins: [`https://s${i}.example`] } })
    expect(r.status).toBe(200)
  }
  return { t, admin, viewer: await issuer.token(`aud-vie-${tag}`) }
}

/** Changes rows as the database superuser with triggers off (what an attacker with full access could do). */
const asSuperuser = (work: (tx: any) => Promise<unknown>) => app.sql.begin(async (tx) => {
  await tx`set local session_replication_role = replica`
  await work(tx)
})

describe('GET /v1/audit-events', () => {
  test('admins page the chain newest first; each entry links to the previous one by hash', async () => {
    const w = await workspaceWithSaves(5)
    const first = await call(app.url, 'GET', '/v1/audit-events?limit=3', { token: w.admin })
    expect(first.status).toBe(200)
    const second = await call(app.url, 'GET', `/v1/audit-events?limit=3&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: w.admin })
    expect(second.body.next_cursor).toBeNull()
    const items = [...first.body.items, ...second.body.items]
    expect(items.map((e: { seq: number }) => e.seq)).toEqual([5, 4, 3, 2, 1])
    for (let i = 0; i < items.length - 1; i++) expect(items[i].prev_hash).toBe(items[i + 1].hash)
    expect('prev_hash' in items[4]).toBe(false)
    for (const e of items) {
      const { hash, ...rest } = e
      const expected = createHash('sha256').update(canonical({ tenant_id: w.t.id, ...rest, prev_hash: rest.prev_hash ?? null })).digest('hex')
      expect(hash).toBe(expected)
      expect(e.kind).toBe('tenant.settings.updated')
    }
    expect(items[0].data.before.embed_allowed_origins).toEqual(['https://s3.example'])
    expect(items[0].data.after.embed_allowed_origins).toEqual(['https://s4.example'])
  })

  test('the kind filter narrows the list; members who are not admins and API keys are 403', async () => {
    const w = await workspaceWithSaves(1)
    const key = await app.apiKey(w.t.id, ['settings:write', 'scenarios:write'])
    await call(app.url, 'DELETE', `/v1/api-keys/${(await app.sql`select id from api_keys where tenant_id = ${w.t.id}`)[0]!.id}`, { token: w.admin })
    const only = await call(app.url, 'GET', '/v1/audit-events?kind=api_key.revoked', { token: w.admin })
    expect(only.body.items.map((e: { kind: string }) => e.kind)).toEqual(['api_key.revoked'])
    expect(problemOf(await call(app.url, 'GET', '/v1/audit-events', { token: w.viewer })).type).toBe('urn:svc:error:forbidden')
    const other = await app.apiKey(w.t.id, ['settings:write'])
    expect(problemOf(await call(app.url, 'GET', '/v1/audit-events', { token: other })).type).toBe('urn:svc:error:forbidden')
    expect(key).toBeString()
  })

  test("another workspace's chain is not visible", async () => {
    const a = await workspaceWithSaves(2)
    const b = await workspaceWithSaves(1)
    const r = await call(app.url, 'GET', '/v1/audit-events', { token: b.admin })
    expect(r.body.items).toHaveLength(1)
    expect(a.t.id).not.toBe(b.t.id)
  })
})

describe('append-only, enforced by the database', () => {
  test('UPDATE, DELETE and TRUNCATE of audit rows are refused', async () => {
    const w = await workspaceWithSaves(1)
    await expect(app.sql`update audit_events set kind = 'x' where tenant_id = ${w.t.id}`).rejects.toThrow(/append-only/)
    await expect(app.sql`delete from audit_events where tenant_id = ${w.t.id}`).rejects.toThrow(/append-only/)
    await expect(app.sql`truncate audit_events`).rejects.toThrow(/append-only/)
    expect((await app.sql`select count(*)::int as n from audit_events where tenant_id = ${w.t.id}`)[0]!.n).toBe(1)
  })

  test('concurrent saves produce a gap-free chain that verifies', async () => {
    const w = await workspaceWithSaves(0)
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) =>
      call(app.url, 'PUT', '/v1/tenant-settings', { token: w.admin, body: { embed_allowed_origins: [`https://c${i}.example`] } })))
    expect(replies.every((r) => r.status === 200)).toBe(true)
    const seqs = (await app.sql`select seq::int as seq from audit_events where tenant_id = ${w.t.id} order by seq`).map((r) => r.seq)
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    const v = await runCli(app, ['audit', 'verify', '--tenant', w.t.slug])
    expect(v.json).toEqual({ tenant_id: w.t.id, ok: true, checked: 12 })
    const page = await call(app.url, 'GET', '/v1/audit-events?limit=3', { token: w.admin })
    expect(page.body.items.map((e: { seq: number }) => e.seq)).toEqual([12, 11, 10])
    const next = await call(app.url, 'GET', `/v1/audit-events?limit=3&cursor=${encodeURIComponent(page.body.next_cursor)}`, { token: w.admin })
    expect(next.body.items.map((e: { seq: number }) => e.seq)).toEqual([9, 8, 7])
  })
})

describe('svc audit verify', () => {
  test('passes on an intact chain (exit 0)', async () => {
    const w = await workspaceWithSaves(3)
    const r = await runCli(app, ['audit', 'verify', '--tenant', w.t.slug])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.json).toEqual({ tenant_id: w.t.id, ok: true, checked: 3 })
  })

  test('an empty chain verifies with nothing checked', async () => {
    const t = await app.tenant()
    const r = await runCli(app, ['audit', 'verify', '--tenant', t.slug])
    expect(r.json).toEqual({ tenant_id: t.id, ok: true, checked: 0 })
  })

  test('a row tampered with as superuser: exit 1, naming that row (hash mismatch)', async () => {
    const w = await workspaceWithSaves(4)
    await asSuperuser((tx) => tx`
      update audit_events set data = jsonb_set(data, '{after,embed_allowed_origins}', '["https://evil.example"]')
      where tenant_id = ${w.t.id} and seq = 3`)
    const [row] = await app.sql`select id from audit_events where tenant_id = ${w.t.id} and seq = 3`
    const r = await runCli(app, ['audit', 'verify', '--tenant', w.t.slug])
    expect(r.code).toBe(1)
    expect(r.json).toEqual({ tenant_id: w.t.id, ok: false, checked: 2, first_broken: { seq: 3, id: row!.id, reason: 'hash_mismatch' } })
  })

  test('a tampered row whose own hash was recomputed breaks the link of the next row', async () => {
    const w = await workspaceWithSaves(4)
    const [row] = await app.sql`select * from audit_events where tenant_id = ${w.t.id} and seq = 2`
    const data = { ...row!.data, after: { ...row!.data.after, embed_allowed_origins: ['https://evil.example'] } }
    const hash = createHash('sha256').update(canonical({
      tenant_id: w.t.id, seq: 2, id: row!.id, kind: row!.kind, actor: row!.actor, data, occurred_at: row!.occurred_at.toISOString(), prev_hash: row!.prev_hash,
    })).digest('hex')
    await asSuperuser((tx) => tx`update audit_events set data = ${tx.json(data)}, hash = ${hash} where tenant_id = ${w.t.id} and seq = 2`)
    const [next] = await app.sql`select id from audit_events where tenant_id = ${w.t.id} and seq = 3`
    const r = await runCli(app, ['audit', 'verify', '--tenant', w.t.slug])
    expect(r.code).toBe(1)
    expect(r.json.first_broken).toEqual({ seq: 3, id: next!.id, reason: 'prev_hash_mismatch' })
    expect(r.json.checked).toBe(2)
  })

  test('a deleted row is named as a gap in the sequence', async () => {
    const w = await workspaceWithSaves(3)
    await asSuperuser((tx) => tx`delete from audit_events where tenant_id = ${w.t.id} and seq = 2`)
    const r = await runCli(app, ['audit', 'verify', '--tenant', w.t.slug])
    expect(r.code).toBe(1)
    expect(r.json.first_broken).toEqual({ seq: 2, id: null, reason: 'sequence_gap' })
  })

  test('an unknown workspace is a CLI refusal (exit 2)', async () => {
    const r = await runCli(app, ['audit', 'verify', '--tenant', 'nope-nope'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('no workspace')
  })
})
