import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { DEFAULT_RETENTION_DAYS, runMaintenance } from '../../server/notifications/maintenance'
import { ZONE_RULE } from '../../server/resources/tenant-settings'

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

const DEFAULTS = { embed_allowed_origins: [], time_zone: 'UTC', notification_retention_days: 30, break_glass_require_tenant_approval: false }

async function workspace() {
  const t = await app.tenant()
  const tag = crypto.randomUUID().slice(0, 6)
  await app.member(t.id, `set-adm-${tag}`, 'admin')
  await app.member(t.id, `set-vie-${tag}`, 'viewer')
  return { t, admin: await issuer.token(`set-adm-${tag}`), viewer: await issuer.token(`set-vie-${tag}`) }
}

const put = (body: unknown, token: string) => call(app.url, 'PUT', '/v1/tenant-settings', { token, body })
const get = (token: string) => call(app.url, 'GET', '/v1/tenant-settings', { token })
const auditCount = async (tenantId: string) => (await app.sql`select count(*)::int as n from audit_events where tenant_id = ${tenantId}`)[0]!.n

describe('reading and replacing', () => {
  test('a workspace that never saved settings reads the defaults', async () => {
    const w = await workspace()
    const r = await get(w.viewer)
    expect(r.status).toBe(200)
    expect(r.body).toEqual(DEFAULTS)
  })

  test('PUT stores the whole document and returns it; GET reads it back', async () => {
    const w = await workspace()
    const doc = {
      embed_allowed_origins: ['https://host.example', 'https://portal.example:8443'],
      time_zone: 'Europe/Berlin',
      notification_retention_days: 30,
      break_glass_require_tenant_approval: true,
    }
    const r = await put(doc, w.admin)
    expect(r.status).toBe(200)
    expect(r.body).toEqual(doc)
    expect((await get(w.viewer)).body).toEqual(doc)
  })

  test('full replace: omitted fields are cleared (origins empty, UTC, default retention, approval off)', async () => {
    const w = await workspace()
    await put({ embed_allowed_origins: ['https://a.example'], time_zone: 'America/New_York', notification_retention_days: 7, break_glass_require_tenant_approval: true }, w.admin)
    const r = await put({ time_zone: 'Asia/Tokyo' }, w.admin)
    expect(r.body).toEqual({ ...DEFAULTS, time_zone: 'Asia/Tokyo' })
    const cleared = await put({}, w.admin)
    expect(cleared.body).toEqual(DEFAULTS)
    expect((await get(w.admin)).body).toEqual(DEFAULTS)
    const nulls = await put({ time_zone: null, notification_retention_days: null }, w.admin)
    expect(nulls.body).toEqual(DEFAULTS)
  })

  test('de-duplication keeps the first occurrence of each origin, in order', async () => {
    const w = await workspace()
    const r = await put({ embed_allowed_origins: ['https://b.example', 'https://a.example', 'https://b.example', 'https://a.example', 'https://c.example'] }, w.admin)
    expect(r.status).toBe(200)
    expect(r.body.embed_allowed_origins).toEqual(['https://b.example', 'https://a.example', 'https://c.example'])
    const [row] = await app.sql`select embed_allowed_origins from tenant_settings where tenant_id = ${w.t.id}`
    expect(row!.embed_allowed_origins).toEqual(['https://b.example', 'https://a.example', 'https://c.example'])
  })

  test('settings belong to one workspace', async () => {
    const a = await workspace()
    const b = await workspace()
    await put({ embed_allowed_origins: ['https://only-a.example'] }, a.admin)
    expect((await get(b.admin)).body).toEqual(DEFAULTS)
  })

  test('the retention setting is what the database function applies to delivery records', async () => {
    const w = await workspace()
    const days = async () => (await app.sql`select svc_notification_retention_days(${w.t.id}) as d`)[0]!.d
    expect(await days()).toBe(30)
    await put({ notification_retention_days: 14 }, w.admin)
    expect(await days()).toBe(14)
    await put({}, w.admin)
    expect(await days()).toBe(30)
  })

  test('the retention is enforced on delivery records by the maintenance purge, per workspace', async () => {
    expect(DEFAULT_RETENTION_DAYS).toBe(DEFAULTS.notification_retention_days)
    const short = await workspace()
    const dflt = await workspace()
    await put({ notification_retention_days: 2 }, short.admin)
    const deliveries = async (tenantId: string, ages: Record<string, number>) => {
      const sub = Bun.randomUUIDv7()
      await app.sql`insert into task_notification_subscriptions (tenant_id, id, task_kind, task_id, channel, email_address)
                    values (${tenantId}, ${sub}, 'evaluation_run', ${crypto.randomUUID()}, 'email', 'ops@example.test')`
      const ids: Record<string, string> = {}
      for (const [name, days] of Object.entries(ages)) {
        ids[name] = Bun.randomUUIDv7()
        const status = name.startsWith('pending') ? 'pending' : 'delivered'
        await app.sql`insert into notification_deliveries (tenant_id, id, subscription_id, task_kind, task_id, event_type, channel, body, status, occurred_at, created_at, updated_at)
                      values (${tenantId}, ${ids[name]!}, ${sub}, 'evaluation_run', ${crypto.randomUUID()}, 'task.completed', 'email', '{}', ${status},
                              now(), now() - make_interval(days => ${days}), now() - make_interval(days => ${days}))`
      }
      return ids
    }
    const a = await deliveries(short.t.id, { fresh: 1, old: 3, pendingOld: 40 })
    const b = await deliveries(dflt.t.id, { old: 3, ancient: 31 })
    await app.sql.begin((tx) => runMaintenance(tx))
    const left = async (tenantId: string) => (await app.sql`select id from notification_deliveries where tenant_id = ${tenantId}`).map((r) => r.id).sort()
    expect(await left(short.t.id)).toEqual([a.fresh!, a.pendingOld!].sort())
    expect(await left(dflt.t.id)).toEqual([b.old!])
  })
})

describe('the default vertical binding', () => {
  test('absent on the shipped default; a catalog key is kept, read back and cleared by a PUT without it', async () => {
    const w = await workspace()
    expect('vertical' in (await get(w.viewer)).body).toBe(false)
    const r = await put({ vertical: 'mortgage' }, w.admin)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ ...DEFAULTS, vertical: 'mortgage' })
    expect((await get(w.viewer)).body).toEqual({ ...DEFAULTS, vertical: 'mortgage' })
    // Full replace: a document without it (or with null) puts the workspace back on the shipped default.
    expect((await put({ time_zone: 'Asia/Tokyo' }, w.admin)).body).toEqual({ ...DEFAULTS, time_zone: 'Asia/Tokyo' })
    await put({ vertical: 'life_insurance' }, w.admin)
    expect((await put({ vertical: null }, w.admin)).body).toEqual(DEFAULTS)
    const [audit] = await app.sql`select data from audit_events where tenant_id = ${w.t.id} and kind = 'tenant.settings.updated' order by seq desc limit 1`
    expect(audit!.data).toMatchObject({ before: { vertical: 'life_insurance' }, after: DEFAULTS })
  })

  test('a key not in the catalog is 422 with the pointer /vertical, like POST /v1/scenarios; nothing is stored', async () => {
    const w = await workspace()
    await put({ vertical: 'mortgage' }, w.admin)
    const audits = await auditCount(w.t.id)
    for (const bad of ['spaceships', 'default', '', 'MORTGAGE']) {
      const p = problemOf(await put({ vertical: bad }, w.admin))
      expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
      expect(p.errors).toEqual([{ pointer: '/vertical', message: expect.stringContaining('must be a key of GET /v1/verticals') }])
    }
    expect(problemOf(await put({ vertical: 7 }, w.admin)).errors?.[0]?.pointer).toBe('/vertical')
    const scenarioKey = await app.apiKey(w.t.id, ['scenarios:write'])
    const onCase = problemOf(await call(app.url, 'POST', '/v1/scenarios', { token: scenarioKey, body: { name: 'x', vertical: 'spaceships' } }))
    expect(onCase.errors).toEqual(problemOf(await put({ vertical: 'spaceships' }, w.admin)).errors)
    expect((await get(w.admin)).body.vertical).toBe('mortgage')
    expect(await auditCount(w.t.id)).toBe(audits)
  })

  test('cases and question sets created without a vertical take the binding at creation; a named one or null (the shipped default) wins', async () => {
    const w = await workspace()
    const k = await app.apiKey(w.t.id, ['scenarios:write', 'question_sets:write'])
    const newCase = async (body: object) => (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'case', ...body } })).body
    const newSet = async (body: object) => (await call(app.url, 'POST', '/v1/question-sets', { token: k, body: { name: 'set', ...body } })).body
    const before = await newCase({})
    expect('vertical' in before).toBe(false)
    await put({ vertical: 'commercial_lending' }, w.admin)
    const followed = await newCase({})
    expect(followed.vertical).toBe('commercial_lending')
    expect((await call(app.url, 'GET', `/v1/scenarios/${followed.id}`, { token: k })).body.vertical).toBe('commercial_lending')
    expect((await newSet({})).vertical).toBe('commercial_lending')
    expect((await newCase({ vertical: 'mortgage' })).vertical).toBe('mortgage')
    expect((await newSet({ vertical: 'mortgage' })).vertical).toBe('mortgage')
    const shipped = await newCase({ vertical: null })
    expect('vertical' in shipped).toBe(false)
    expect('vertical' in (await newSet({ vertical: null }))).toBe(false)
    // Copied at creation: changing the binding later moves no existing case.
    await put({}, w.admin)
    expect((await call(app.url, 'GET', `/v1/scenarios/${followed.id}`, { token: k })).body.vertical).toBe('commercial_lending')
    expect('vertical' in (await call(app.url, 'GET', `/v1/scenarios/${before.id}`, { token: k })).body).toBe(false)
    expect('vertical' in (await newCase({}))).toBe(false)
  })
})

describe('origin rules', () => {
  const long = `https://${'a'.repeat(60)}.${'a'.repeat(60)}.${'a'.repeat(60)}.${'a'.repeat(57)}.example` // 256 characters
  const cases: [string, string][] = [
    ['http://plain.example', 'must use the https scheme'],
    ['https://*.example.com', 'must not contain a wildcard'],
    ['*', 'must not contain a wildcard'],
    ['https://Upper.example', 'must be lower-case'],
    ['https://path.example/', 'must not contain a path (not even a trailing /)'],
    ['https://path.example/app', 'must not contain a path (not even a trailing /)'],
    ['https://query.example?x=1', 'must not contain a query'],
    ['https://fragment.example#top', 'must not contain a fragment'],
    ['https://user:secret@userinfo.example', 'must not contain userinfo'],
    ['https://user@userinfo.example', 'must not contain userinfo'],
    [long, 'must be at most 255 characters'],
    ['https://port.example:443', 'must not name the default port 443'],
    ['https://port.example:99999', 'must be an https origin of the form https://host or https://host:port'],
    ['port.example', 'must be an https origin of the form https://host or https://host:port'],
    ['', 'must be an https origin of the form https://host or https://host:port'],
    ['https://bücher.example', 'must be the exact serialized origin (ASCII host, valid port)'],
  ]

  test('each bad origin gives one errors[] entry naming its index and its rule; nothing is stored', async () => {
    const w = await workspace()
    const before = { embed_allowed_origins: ['https://kept.example'], time_zone: 'Europe/Paris', notification_retention_days: 60, break_glass_require_tenant_approval: true }
    await put(before, w.admin)
    const audits = await auditCount(w.t.id)
    const origins = ['https://fine.example', ...cases.map(([o]) => o), 'https://fine.example:8443']
    const r = await put({ embed_allowed_origins: origins, time_zone: 'UTC' }, w.admin)
    const p = problemOf(r)
    expect(p).toMatchObject({ type: 'urn:svc:error:validation', status: 422, title: 'Validation failed' })
    expect(p.errors).toEqual(cases.map(([, message], i) => ({ pointer: `/embed_allowed_origins/${i + 1}`, message })))
    expect(long.length).toBe(256)
    expect((await get(w.admin)).body).toEqual(before)
    expect(await auditCount(w.t.id)).toBe(audits)
  })

  test('exactly 255 characters, an explicit non-default port and IP literals (IPv4, bracketed IPv6) are accepted', async () => {
    const w = await workspace()
    const max = `https://${'b'.repeat(60)}.${'b'.repeat(60)}.${'b'.repeat(60)}.${'b'.repeat(56)}.example`
    expect(max.length).toBe(255)
    const r = await put({ embed_allowed_origins: [max, 'https://a.example:8443', 'https://192.0.2.10', 'https://[2001:db8::1]:8443'] }, w.admin)
    expect(r.status).toBe(200)
    expect(r.body.embed_allowed_origins).toEqual([max, 'https://a.example:8443', 'https://192.0.2.10', 'https://[2001:db8::1]:8443'])
  })

  test('51 origins are refused with a pointer to the list; 50 are accepted; duplicates do not count', async () => {
    const w = await workspace()
    const many = Array.from({ length: 51 }, (_, i) => `https://h${i}.example`)
    const p = problemOf(await put({ embed_allowed_origins: many }, w.admin))
    expect(p.errors).toEqual([{ pointer: '/embed_allowed_origins', message: 'must have at most 50 entries after de-duplication, got 51' }])
    expect((await get(w.admin)).body.embed_allowed_origins).toEqual([])
    expect((await put({ embed_allowed_origins: many.slice(0, 50) }, w.admin)).body.embed_allowed_origins).toHaveLength(50)
    const withDuplicate = [...many.slice(0, 50), many[0]!]
    expect((await put({ embed_allowed_origins: withDuplicate }, w.admin)).body.embed_allowed_origins).toEqual(many.slice(0, 50))
  })

  test('a non-string origin, an unknown time zone and a retention out of range are schema errors with pointers', async () => {
    const w = await workspace()
    expect(problemOf(await put({ embed_allowed_origins: ['https://a.example', 7] }, w.admin)).errors?.[0]?.pointer).toBe('/embed_allowed_origins/1')
    // The document's TimeZone enum is exactly what is accepted: another letter case or an offset that
    // Intl.DateTimeFormat would also take is refused like an unknown name.
    for (const zone of ['Mars/Olympus_Mons', 'europe/berlin', '+01:00', 'us/eastern']) {
      expect(problemOf(await put({ time_zone: zone }, w.admin)).errors).toEqual([{ pointer: '/time_zone', message: ZONE_RULE }])
    }
    expect(problemOf(await put({ notification_retention_days: 0 }, w.admin)).errors?.[0]?.pointer).toBe('/notification_retention_days')
    expect(problemOf(await put({ break_glass_require_tenant_approval: 'yes' }, w.admin)).errors?.[0]?.pointer).toBe('/break_glass_require_tenant_approval')
    expect((await get(w.admin)).body).toEqual(DEFAULTS)
  })

  test('an alias of a time zone (listed in the enum after the canonical names) is stored as its canonical name', async () => {
    const w = await workspace()
    const zones: string[] = (await call(app.url, 'GET', '/v1/openapi.json')).body.components.schemas.TimeZone.enum
    for (const [alias, canonical] of [['US/Eastern', 'America/New_York'], ['Etc/UTC', 'UTC'], ['Asia/Calcutta', 'Asia/Kolkata'], ['Europe/Kiev', 'Europe/Kyiv']]) {
      expect(zones).toContain(alias!)
      expect(zones.indexOf(alias!)).toBeGreaterThan(zones.indexOf(canonical!))
      const saved = await put({ time_zone: alias }, w.admin)
      expect(saved.status).toBe(200)
      expect(saved.body.time_zone).toBe(canonical)
      expect((await get(w.admin)).body.time_zone).toBe(canonical)
    }
    // A value stored before aliases were listed is still sent back as it was and accepted.
    await app.sql`update tenant_settings set time_zone = 'US/Pacific' where tenant_id = ${w.t.id}`
    const before = (await get(w.admin)).body
    expect(before.time_zone).toBe('US/Pacific')
    expect((await put(before, w.admin)).body.time_zone).toBe('America/Los_Angeles')
  })
})

describe('audit of every save', () => {
  test('each save appends tenant.settings.updated with the origin list before and after', async () => {
    const w = await workspace()
    await put({ embed_allowed_origins: ['https://one.example'] }, w.admin)
    await put({ embed_allowed_origins: ['https://two.example', 'https://three.example'] }, w.admin)
    await put({ embed_allowed_origins: ['https://two.example', 'https://three.example'] }, w.admin)
    const rows = await app.sql`select seq::int as seq, kind, actor, data from audit_events where tenant_id = ${w.t.id} order by seq`
    expect(rows.map((r) => r.kind)).toEqual(['tenant.settings.updated', 'tenant.settings.updated', 'tenant.settings.updated'])
    expect(rows.map((r) => [r.data.before.embed_allowed_origins, r.data.after.embed_allowed_origins])).toEqual([
      [[], ['https://one.example']],
      [['https://one.example'], ['https://two.example', 'https://three.example']],
      [['https://two.example', 'https://three.example'], ['https://two.example', 'https://three.example']],
    ])
    expect(rows[0]!.data.before).toEqual(DEFAULTS)
    expect(rows[0]!.actor.kind).toBe('user')
  })

  test('a save by a settings:write key is recorded with the key as actor', async () => {
    const w = await workspace()
    const key = await app.apiKey(w.t.id, ['settings:write'])
    expect((await put({ time_zone: 'Europe/Oslo' }, key)).status).toBe(200)
    const [row] = await app.sql`select actor from audit_events where tenant_id = ${w.t.id}`
    const [k] = await app.sql`select id from api_keys where tenant_id = ${w.t.id}`
    expect(row!.actor).toEqual({ kind: 'api_key', id: k!.id })
  })
})

describe('who may read and write', () => {
  test('any member reads; only admins and settings:write keys write; other keys are 403', async () => {
    const w = await workspace()
    expect((await get(w.viewer)).status).toBe(200)
    expect(problemOf(await put({}, w.viewer))).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403 })
    const writer = await app.apiKey(w.t.id, ['settings:write'])
    expect((await get(writer)).status).toBe(200)
    expect((await put({ time_zone: 'UTC' }, writer)).status).toBe(200)
    const other = await app.apiKey(w.t.id, ['scenarios:read', 'scenarios:write', 'notifications:write'])
    expect(problemOf(await get(other)).status).toBe(403)
    expect(problemOf(await put({}, other)).status).toBe(403)
    expect((await call(app.url, 'PUT', '/v1/tenant-settings', { body: {} })).status).toBe(401)
  })
})
