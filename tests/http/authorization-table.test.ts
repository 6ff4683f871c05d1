/**
 * The authorization table, walked from the OpenAPI document: every operation (including those
 * added later) must carry `x-svc-access`, and every kind of principal is called against every
 * operation, with the outcome the entry predicts: admitted principals get past authorization (not
 * 401/403); refused ones get exactly 401 or the right 403. Path parameters are random UUIDs (the
 * embed session's own case for `scenarioId`), bodies an empty JSON object.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { ROLES, SCOPES } from '../../server/auth/principal'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

interface AccessEntry { public: boolean; roles: string[]; scopes: string[]; human_only: boolean; operator: boolean; embed: boolean; invitee?: boolean; break_glass?: boolean }
interface Operation { method: string; path: string; entry: AccessEntry | undefined; hasBody: boolean; documented: string[] }

/** What the table predicts for a principal: admitted, or refused with this status and problem type. */
type Outcome = 'admitted' | { status: 401 | 403; type: string }

/** A kind of caller: its credential and what an access entry predicts for it. */
interface PrincipalKind { name: string; credential?: string; expect(e: AccessEntry, method: string): Outcome }

const ORG_CLAIM = 'urn:idp:iam:user:resourceowner:id'
const refused403 = (code = 'forbidden'): Outcome => ({ status: 403, type: `urn:svc:error:${code}` })
const refused401: Outcome = { status: 401, type: 'urn:svc:error:unauthorized' }
/** The operator surface refuses every workspace credential alike (forbidden, even a suspended workspace's). */
const operatorOnly = (e: AccessEntry) => e.operator && !e.public && e.roles.length === 0 && e.scopes.length === 0 && !e.embed && !e.invitee

let app: TestApp
let issuer: TestIssuer
let router: { routes: { method: string; path: string; hooks?: { detail?: Record<string, unknown> } }[] }
let operations: Operation[]
let principals: PrincipalKind[]
let embedScenarioId: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({
    env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'table-operator,table-bg-operator' },
    runner: false,
    extend: (a) => { router = a as never },
  })

  // One active workspace with a member of every role and a key of every single scope.
  const t = await app.tenant()
  const users = await Promise.all(ROLES.map(async (role) => {
    await app.member(t.id, `table-${role}`, role)
    return { role, token: await issuer.token(`table-${role}`) }
  }))
  const keys = await Promise.all(SCOPES.map(async (scope) => ({ scope, key: await app.apiKey(t.id, [scope]) })))

  // An operator holding an open break-glass window to that workspace (approved when raised).
  const bgOperator = await issuer.token('table-bg-operator')
  const grant = await call(app.url, 'POST', `/v1/tenants/${t.id}/break-glass/requests`, { token: bgOperator, body: { reason: 'authorization table', duration_minutes: 60 } })
  expect(grant.body).toMatchObject({ status: 'approved', access_active: true })

  // A suspended workspace: its admin and its all-scopes key are refused everywhere.
  const s = await app.tenant()
  await app.member(s.id, 'table-suspended-admin', 'admin')
  const suspendedKey = await app.apiKey(s.id, [...SCOPES])
  await app.sql`update tenants set status = 'suspended' where id = ${s.id}`

  // A workspace bound to an organization, so a stranger of that organization is not_admitted.
  await app.tenant(undefined, { organizationId: 'org-table' })

  // An embed session, in a workspace of its own (other calls of the table change settings).
  const e = await app.tenant()
  await app.member(e.id, 'table-embed-viewer', 'viewer', 'embed.viewer@example.test')
  await app.sql`insert into tenant_settings (tenant_id, embed_allowed_origins) values (${e.id}, ${['https://host.example']})`
  const writer = await app.apiKey(e.id, ['scenarios:write'])
  embedScenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: writer, body: { name: 'embedded' } })).body.id
  const mint = await app.apiKey(e.id, ['embed:mint'])
  const handoff = await call(app.url, 'POST', '/v1/embed/handoffs', {
    token: mint, body: { scenario_id: embedScenarioId, host_origin: 'https://host.example', subject_email: 'embed.viewer@example.test' },
  })
  expect(handoff.status).toBe(201)
  const session = await call(app.url, 'POST', '/v1/embed/sessions', { body: { handoff: handoff.body.handoff, host_origin: 'https://host.example' } })
  expect(session.status).toBe(201)

  principals = [
    { name: 'no credential', expect: (e) => (e.public ? 'admitted' : refused401) },
    ...users.map(({ role, token }): PrincipalKind => ({
      name: `user:${role}`, credential: token,
      expect: (e) => (e.public || e.roles.includes(role) || e.invitee ? 'admitted' : refused403()),
    })),
    ...keys.map(({ scope, key }): PrincipalKind => ({
      name: `api_key:${scope}`, credential: key,
      expect: (e) => (e.public || (!e.human_only && e.scopes.includes(scope)) ? 'admitted' : refused403()),
    })),
    {
      name: 'operator (no membership)', credential: await issuer.token('table-operator'),
      expect: (e) => (e.public || e.operator || e.invitee ? 'admitted' : refused403()),
    },
    {
      name: 'operator with an open break-glass window', credential: bgOperator,
      expect: (e, method) => (e.public || e.operator || e.invitee || (e.break_glass && method === 'get') ? 'admitted' : refused403()),
    },
    {
      name: 'person (valid token, no membership, no known organization)', credential: await issuer.token('table-person'),
      expect: (e) => (e.public || e.invitee ? 'admitted' : refused401),
    },
    {
      name: 'person of a bound organization, not yet admitted', credential: await issuer.token('table-stranger', { [ORG_CLAIM]: 'org-table' }),
      expect: (e) => (e.public || e.invitee ? 'admitted' : refused403('not_admitted')),
    },
    {
      name: 'embed session', credential: session.body.session,
      expect: (e, method) => (e.public || (e.embed && method === 'get') ? 'admitted' : refused403()),
    },
    {
      name: 'admin of a suspended workspace', credential: await issuer.token('table-suspended-admin'),
      expect: (e) => (e.public ? 'admitted' : operatorOnly(e) ? refused403() : refused403('tenant_suspended')),
    },
    {
      name: 'all-scopes key of a suspended workspace', credential: suspendedKey,
      expect: (e) => (e.public ? 'admitted' : operatorOnly(e) ? refused403() : refused403('tenant_suspended')),
    },
  ]

  const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
  operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method, path, entry: op['x-svc-access'], hasBody: op.requestBody !== undefined, documented: Object.keys(op.responses ?? {}),
    })))
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

/** Calls an operation as a principal; reads at most the status and body start (an event stream never ends). */
async function invoke(op: Operation, credential: string | undefined): Promise<{ status: number; type?: string }> {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'scenarioId' ? embedScenarioId : crypto.randomUUID()))
  const headers: Record<string, string> = {}
  if (credential) headers.authorization = `Bearer ${credential}`
  if (op.hasBody) headers['content-type'] = 'application/json'
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), 10_000)
  try {
    const res = await fetch(app.url + path, { method: op.method.toUpperCase(), headers, body: op.hasBody ? '{}' : undefined, signal: controller.signal })
    if (res.headers.get('content-type')?.startsWith('application/problem+json')) return { status: res.status, type: ((await res.json()) as { type: string }).type }
    await res.body?.cancel()
    return { status: res.status }
  } finally {
    clearTimeout(timer)
  }
}

describe('the authorization table', () => {
  test('every operation of the OpenAPI document carries a well-formed x-svc-access entry', () => {
    expect(operations.length).toBeGreaterThan(30)
    const missing = operations.filter((o) => o.entry === undefined).map((o) => `${o.method.toUpperCase()} ${o.path}`)
    expect(missing).toEqual([])
    for (const { method, path, entry } of operations) {
      const where = `${method.toUpperCase()} ${path}`
      expect(Object.keys(entry!).sort(), where).toEqual(expect.arrayContaining(['break_glass', 'embed', 'human_only', 'operator', 'public', 'roles', 'scopes']))
      // Break-glass reaches reads only.
      if (entry!.break_glass) expect(method, where).toBe('get')
      for (const role of entry!.roles) expect(ROLES as readonly string[], where).toContain(role)
      for (const scope of entry!.scopes) expect(SCOPES as readonly string[], where).toContain(scope)
      if (entry!.human_only) expect(entry!.scopes, where).toEqual([])
    }
  })

  test('every route the server answers is in the table (hidden routes are public assets)', () => {
    const listed = new Set(operations.map((o) => `${o.method.toUpperCase()} ${o.path.replace(/\{(\w+)\}/g, ':$1')}`))
    const own = new Set(['GET /v1/openapi.json', 'GET /v1/docs'])
    const problems: string[] = []
    for (const r of router.routes) {
      const name = `${r.method} ${r.path}`
      if (own.has(name) || r.method === 'HEAD' || r.method === 'OPTIONS') continue
      const detail = r.hooks?.detail ?? {}
      const entry = detail['x-svc-access'] as AccessEntry | undefined
      if (!entry) problems.push(`${name}: no access rule`)
      else if (detail.hide) { if (!entry.public) problems.push(`${name}: hidden from the document but not public`) }
      else if (!listed.has(name)) problems.push(`${name}: missing from the OpenAPI document`)
    }
    expect(problems).toEqual([])
  })

  test('for every operation, each principal is admitted or refused exactly as its entry says', async () => {
    const mismatches: string[] = []
    let admitted = 0
    let refused = 0
    for (const op of operations) {
      const where = `${op.method.toUpperCase()} ${op.path}`
      const outcomes = principals.map((p) => p.expect(op.entry!, op.method))
      // Every non-public operation admits somebody and refuses somebody.
      if (!op.entry!.public) {
        if (!outcomes.includes('admitted')) mismatches.push(`${where}: no principal is admitted`)
        if (!outcomes.some((o) => o !== 'admitted')) mismatches.push(`${where}: no principal is refused`)
      }
      const results = await Promise.all(principals.map((p) => invoke(op, p.credential)))
      principals.forEach((p, i) => {
        const want = outcomes[i]!
        const got = results[i]!
        if (want === 'admitted') {
          admitted++
          // A public operation may answer 401/403 for a credential of its own (a signed URL, an embed
          // handoff); it says so in its documented responses. Everything else must pass authorization.
          const own = op.entry!.public ? op.documented : []
          if ((got.status === 401 || got.status === 403) && !own.includes(String(got.status))) {
            mismatches.push(`${where} as ${p.name}: expected to pass authorization, got ${got.status} ${got.type ?? ''}`)
          }
        } else {
          refused++
          if (got.status !== want.status || got.type !== want.type) {
            mismatches.push(`${where} as ${p.name}: expected ${want.status} ${want.type}, got ${got.status} ${got.type ?? ''}`)
          }
        }
      })
    }
    expect(mismatches).toEqual([])
    expect(admitted).toBeGreaterThan(operations.length)
    expect(refused).toBeGreaterThan(operations.length * 5)
  })

  test('without a credential every non-public operation with a body is 401 whatever the body: not JSON, another type, an array, a NUL, the wrong types', async () => {
    const bodies: { type: string; body: string }[] = [
      { type: 'application/json', body: '{"name": ' },
      { type: 'text/plain', body: 'hello' },
      { type: 'application/json', body: '[1]' },
      { type: 'application/json', body: '{"name": "a\\u0000b"}' },
      { type: 'application/json', body: '{"name": 42, "scenario_id": [], "questions": "x"}' },
    ]
    const wrong: string[] = []
    for (const op of operations.filter((o) => o.hasBody && !o.entry!.public)) {
      const path = op.path.replace(/\{(\w+)\}/g, () => crypto.randomUUID())
      for (const b of bodies) {
        const res = await fetch(app.url + path, { method: op.method.toUpperCase(), headers: { 'content-type': b.type }, body: b.body })
        const type = res.headers.get('content-type')?.startsWith('application/problem+json') ? ((await res.json()) as { type: string }).type : (await res.body?.cancel(), '')
        if (res.status !== 401 || type !== 'urn:svc:error:unauthorized') wrong.push(`${op.method.toUpperCase()} ${op.path} ${b.type} ${b.body}: ${res.status} ${type}`)
      }
    }
    expect(wrong).toEqual([])
  })
})
