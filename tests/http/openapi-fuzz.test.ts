/**
 * Property-style test driven by the document: for every operation with a JSON body, a valid body
 * (generated from its schema), bodies that are not objects, each required field missing and each
 * field of the wrong type. Valid bodies never meet a schema error; every invalid one is 422 with a
 * pointer at the field (or at the body, ""); nothing is a 5xx. Callers are chosen from each
 * operation's access entry so every request reaches validation. Optional members too: each at its
 * largest valid value (lengths in characters), each oneOf branch, members of each enum (the runtime
 * catalogs of time zones and currencies included) and the examples of a rule the document states
 * partly in words (x-svc-runtime-check), and sampled invalid values (an enum member in another
 * letter case among them).
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { ROLES, SCOPES } from '../../server/auth/principal'
import { schemaSamples, type Schema } from '../helpers/openapi-samples'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4: the preload only reaches the first file

interface Operation { method: string; path: string; op: Schema; schema: Schema; required: boolean }

let app: TestApp
let issuer: TestIssuer
let doc: Schema
const tokens: Record<string, string> = {}

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'fuzz-operator', SVC_RATE_RUN: '100000/1', SVC_RATE_UNIT: '100000/1' }, runner: false })
  const t = await app.tenant()
  for (const role of ROLES) {
    await app.member(t.id, `fuzz-${role}`, role)
    tokens[role] = await issuer.token(`fuzz-${role}`)
  }
  tokens.key = await app.apiKey(t.id, [...SCOPES])
  tokens.operator = await issuer.token('fuzz-operator')
  tokens.person = await issuer.token('fuzz-stranger')
  doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
})
afterAll(async () => { await app.stop(); issuer.stop() })

const { resolve, nonNull, valid, branchOf, wrongType, invalidQueryValue, enumSample, fullValue, invalidValues } = schemaSamples(() => doc)

/** The caller an operation admits: a member of its first role, a key with every scope, an operator or a person. */
function credentialFor(op: Schema): string | undefined {
  const access = op['x-svc-access']
  if (access.public) return undefined
  if (access.operator) return tokens.operator
  if (access.invitee) return tokens.person
  if (access.roles.length > 0) return tokens[access.roles.includes('admin') ? 'admin' : access.roles[0]]
  return tokens.key
}

const pathOf = (path: string) => path.replace(/\{[^}]+\}/g, () => crypto.randomUUID())

function bodyOperations(): Operation[] {
  const out: Operation[] = []
  for (const [path, methods] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(methods)) {
      const schema = op.requestBody?.content?.['application/json']?.schema
      if (schema) out.push({ method: method.toUpperCase(), path, op, schema, required: op.requestBody.required !== false })
    }
  }
  return out
}

async function send(o: Operation, body: unknown, opts: { absent?: boolean } = {}) {
  const token = credentialFor(o.op)
  const res = await fetch(`${app.url}${pathOf(o.path)}`, {
    method: o.method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(opts.absent ? {} : { 'content-type': 'application/json' }) },
    body: opts.absent ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

test('every JSON body: valid accepted, not an object / missing / wrong type refused with a pointer, never a 5xx', async () => {
  const ops = bodyOperations()
  expect(ops.length).toBeGreaterThan(30)
  const failures: string[] = []
  let requests = 0
  const check = (o: Operation, what: string, ok: boolean, r: { status: number; body: any }) => {
    requests++
    if (r.status >= 500 || !ok) failures.push(`${o.method} ${o.path} ${what}: ${r.status} ${JSON.stringify(r.body?.errors ?? r.body?.detail ?? '')}`)
  }
  const pointsAt = (r: { status: number; body: any }, pointer: string) =>
    r.status === 422 && Array.isArray(r.body?.errors) && r.body.errors.some((e: { pointer: string }) => e.pointer === pointer)
  const ownShape = (o: Operation) => o.path === '/v1/embed/sessions' // every failure of the exchange is the same 401

  for (const o of ops) {
    const body = valid(o.schema) as Record<string, unknown>
    const ok = await send(o, body)
    check(o, 'valid body', ok.status !== 400 && !(ok.status === 422 && ok.body?.errors), ok)
    if (!o.required) {
      const absent = await send(o, undefined, { absent: true })
      check(o, 'absent optional body', absent.status !== 400 && absent.status !== 422, absent)
    }
    for (const notObject of [[1, 'x'], 'hello', 42, null]) {
      const r = await send(o, notObject)
      check(o, `body ${JSON.stringify(notObject)}`, ownShape(o) ? r.status === 401 : pointsAt(r, ''), r)
    }
    const s = resolve(o.schema)
    for (const field of s.required ?? []) {
      const { [field]: _gone, ...rest } = body
      const r = await send(o, rest)
      check(o, `missing ${field}`, ownShape(o) ? r.status === 401 : pointsAt(r, `/${field}`), r)
    }
    for (const [field, prop] of Object.entries<Schema>(s.properties ?? {})) {
      const bad = wrongType(prop)
      if (bad === undefined) continue
      const r = await send(o, { ...body, [field]: bad })
      check(o, `wrong type ${field}=${JSON.stringify(bad)}`, ownShape(o) ? r.status === 401 : pointsAt(r, `/${field}`), r)
    }
  }
  expect(failures).toEqual([])
  expect(requests).toBeGreaterThan(250)
})

/** Every operation of the document, with its declared query and path parameters. */
function allOperations(): { method: string; path: string; op: Schema; query: { name: string; schema: Schema; required: boolean }[] }[] {
  const out: ReturnType<typeof allOperations> = []
  for (const [path, methods] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(methods)) {
      const query = (op.parameters ?? []).filter((p: Schema) => !p.$ref && p.in === 'query').map((p: Schema) => ({ name: p.name, schema: p.schema, required: p.required === true }))
      out.push({ method: method.toUpperCase(), path, op, query })
    }
  }
  return out
}

test('every operation and query parameter: values the document calls valid are never refused as invalid, sampled invalid ones are refused, never a 5xx', async () => {
  const ops = allOperations().filter((o) => !o.path.endsWith('/events') && !o.path.startsWith('/v1/uploads/'))
  expect(ops.length).toBeGreaterThan(90)
  const failures: string[] = []
  let requests = 0
  const get = async (o: (typeof ops)[number], query: Record<string, string>) => {
    const token = credentialFor(o.op)
    const qs = new URLSearchParams(query).toString()
    const res = await fetch(`${app.url}${pathOf(o.path)}${qs ? `?${qs}` : ''}`, {
      method: o.method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(['POST', 'PUT', 'PATCH'].includes(o.method) ? { 'content-type': 'application/json' } : {}) },
      body: ['POST', 'PUT', 'PATCH'].includes(o.method) ? '{}' : undefined,
    })
    requests++
    const text = await res.text()
    let body: any = null
    try { body = text ? JSON.parse(text) : null } catch { /* not JSON */ }
    return { status: res.status, body }
  }
  // Refused: a 4xx (a route that first finds its random path id missing answers 404 before it reads the query).
  const refusedAt = (r: { status: number; body: any }, _name: string) => r.status >= 400 && r.status < 500
  for (const o of ops) {
    const where = `${o.method} ${o.path}`
    const base = Object.fromEntries(o.query.filter((q) => q.required).map((q) => [q.name, String(valid(q.schema, q.name))]))
    const r = await get(o, base)
    if (r.status >= 500) failures.push(`${where} required query ${JSON.stringify(base)}: ${r.status}`)
    for (const q of o.query) {
      const good = String(valid(q.schema, q.name))
      const ok = await get(o, { ...base, [q.name]: good })
      if (ok.status >= 500 || (ok.status === 422 && (ok.body?.errors ?? []).some((e: { pointer: string }) => e.pointer === `/${q.name}`))) {
        failures.push(`${where} ${q.name}=${good} (valid by the document): ${ok.status} ${JSON.stringify(ok.body?.errors ?? ok.body?.detail ?? '')}`)
      }
      const bad = invalidQueryValue(q.schema)
      if (bad === undefined) continue
      const no = await get(o, { ...base, [q.name]: bad })
      if (no.status >= 500 || !refusedAt(no, q.name)) failures.push(`${where} ${q.name}=${JSON.stringify(bad)} (invalid by the document): ${no.status}`)
    }
    // A path id that is not one: a 4xx, never a 5xx.
    if (o.path.includes('{')) {
      const token = credentialFor(o.op)
      const res = await fetch(`${app.url}${o.path.replace(/\{[^}]+\}/g, 'not-an-id')}`, { method: o.method, headers: token ? { authorization: `Bearer ${token}` } : {} })
      requests++
      await res.body?.cancel()
      if (res.status >= 500) failures.push(`${where} with a malformed path id: ${res.status}`)
    }
  }
  expect(failures).toEqual([])
  expect(requests).toBeGreaterThan(150)
})

test('every string member of every JSON body: a NUL (which the document excludes) is refused with a pointer at it, never a 5xx', async () => {
  const failures: string[] = []
  for (const o of bodyOperations()) {
    if (o.path === '/v1/embed/sessions') continue // every failure of the exchange is the same 401
    const body = valid(o.schema) as Record<string, unknown>
    for (const [field, prop] of Object.entries<Schema>(resolve(o.schema).properties ?? {})) {
      if (resolve(prop).type !== 'string') continue
      const r = await send(o, { ...body, [field]: 'a\u0000b' })
      const pointed = r.status === 422 && (r.body?.errors ?? []).some((e: { pointer: string }) => e.pointer === `/${field}`)
      if (!pointed) failures.push(`${o.method} ${o.path} ${field}: ${r.status}`)
    }
  }
  expect(failures).toEqual([])
})

test('every optional body member, oneOf branches included: values the document calls valid are never refused, sampled invalid ones are 422 at the member, never a 5xx', async () => {
  const failures: string[] = []
  let valids = 0
  let pointed = 0
  let ruleChecks = 0
  const schemaErrors = (r: { status: number; body: any }) => (r.status === 422 && Array.isArray(r.body?.errors) ? r.body.errors as { pointer: string; message: string }[] : [])
  for (const o of bodyOperations()) {
    if (o.path === '/v1/embed/sessions') continue // every failure of the exchange is the same 401
    const s = resolve(o.schema)
    const base = valid(o.schema) as Record<string, unknown>
    // A body refused by a rule of the route (422 without errors[], e.g. "exactly one of invoice and
    // invoice_upload") meets that rule before a member's own: then any 4xx refuses.
    const baseReply = await send(o, base)
    const ruled = baseReply.status === 422 && !Array.isArray(baseReply.body?.errors)
    const optional = Object.entries<Schema>(s.properties ?? {}).filter(([k]) => !(s.required ?? []).includes(k))
    // Every branch of a discriminated body, then every optional member on its own.
    const variants: [string, Record<string, unknown>][] = []
    if (s.discriminator) {
      for (const value of Object.keys(s.discriminator.mapping)) {
        const body: Record<string, unknown> = { ...base, [s.discriminator.propertyName]: value }
        for (const k of Object.keys(s.discriminator.mapping)) delete body[k]
        variants.push([`branch ${value}`, { ...body, ...branchOf(s, body) }])
      }
    }
    for (const [field, prop] of optional) {
      if (s.discriminator && field in s.discriminator.mapping) continue // a branch member, tried above
      const value = fullValue(prop, field)
      if (value !== undefined) variants.push([`optional ${field}`, { ...base, [field]: value }])
      // Members of an enum (a catalog the route checks itself included) and the examples of a rule stated partly in words.
      const member = nonNull(prop)
      for (const v of [...enumSample(member.enum ?? []), ...(member.examples ?? [])]) {
        if (v !== value) variants.push([`optional ${field}=${JSON.stringify(v)}`, { ...base, [field]: v }])
      }
    }
    for (const [what, body] of variants) {
      const r = await send(o, body)
      valids++
      if (r.status >= 500 || r.status === 400 || (r.status === 422 && Array.isArray(r.body?.errors))) failures.push(`${o.method} ${o.path} ${what} (valid by the document): ${r.status} ${JSON.stringify(r.body?.errors ?? r.body?.detail ?? '')}`)
    }
    // Rules a route checks itself that the document states: exactly one of some members, non-blank text.
    const exactly: string[] = (s.oneOf ?? []).filter((b: Schema) => !b.$ref && Array.isArray(b.required) && Object.keys(b).length === 1).map((b: Schema) => b.required[0] as string)
    const blanks = Object.entries<Schema>(s.properties ?? {}).filter(([, p]) => /\[\^\\s/.test(resolve(p).pattern ?? '') && resolve(p).type === 'string').map(([k]) => k)
    const ruleBodies: [string, Record<string, unknown>][] = [
      ...(exactly.length > 1 ? [['neither of the oneOf members', Object.fromEntries(Object.entries(base).filter(([k]) => !exactly.includes(k)))], ['all of the oneOf members', { ...base, ...Object.fromEntries(exactly.map((k) => [k, valid(s.properties[k], k)])) }]] as [string, Record<string, unknown>][] : []),
      ...blanks.map((k) => [`blank ${k}`, { ...base, [k]: '   ' }] as [string, Record<string, unknown>]),
    ]
    for (const [what, body] of ruleBodies) {
      const r = await send(o, body)
      ruleChecks++
      if (r.status !== 422 && !(o.path.includes('{') && r.status >= 400 && r.status < 500)) failures.push(`${o.method} ${o.path} ${what} (invalid by the document): ${r.status}`)
    }
    for (const [field, prop] of optional) {
      for (const [bad, why] of invalidValues(prop, field)) {
        const r = await send(o, { ...base, [field]: bad })
        const errors = schemaErrors(r)
        if (errors.some((e) => e.pointer === `/${field}` || e.pointer.startsWith(`/${field}/`))) pointed++
        // A rule checked by the route may meet a missing resource first (random path ids): any 4xx refuses.
        else if (r.status >= 500 || r.status < 400 || (errors.length > 0 || !(ruled || o.path.includes('{')))) failures.push(`${o.method} ${o.path} ${field} breaking ${why} (invalid by the document): ${r.status} ${JSON.stringify(r.body?.errors ?? r.body?.detail ?? '')}`)
      }
    }
  }
  expect(failures).toEqual([])
  expect(valids).toBeGreaterThan(60)
  expect(pointed).toBeGreaterThan(50)
  expect(ruleChecks).toBeGreaterThan(10)
})

test('every member the document gives a grammar (x-svc-grammar): its examples are accepted by the route, and a value breaking the grammar is refused at its pointer', async () => {
  const question = resolve({ $ref: '#/components/schemas/Question' })
  const grammars = Object.entries<Schema>(question.properties).filter(([, p]) => typeof p['x-svc-grammar'] === 'string')
  expect(grammars.map(([k]) => k).sort()).toEqual(['accept', 'fact_path'])
  const qs = await call(app.url, 'POST', '/v1/question-sets', { token: tokens.key, body: { name: 'Grammar examples' } })
  expect(qs.status).toBe(201)
  const version = (questions: unknown[]) => call(app.url, 'POST', `/v1/question-sets/${qs.body.id}/versions`, { token: tokens.key, body: { questions } })
  const question_ = (i: number, member: string, value: string) => ({
    key: `q${i}`, text: 'Q?', criticality: 'major', answer_type: /in \[|contains/.test(value) ? 'text' : 'number', fact_path: 'annual_revenue', [member]: value,
  })
  let examples = 0
  for (const [member, schema] of grammars) {
    const good = await version(schema.examples.map((v: string, i: number) => question_(i, member, v)))
    examples += schema.examples.length
    expect(good.status, `${member} examples ${JSON.stringify(good.body?.errors ?? good.body?.detail)}`).toBe(201)
    const bad = await version([question_(0, member, member === 'accept' ? 'value >> 3' : 'annual revenue')])
    expect(bad.status).toBe(422)
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([`/questions/0/${member}`])
  }
  expect(examples).toBeGreaterThan(6)
})
