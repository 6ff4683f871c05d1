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

setDefaultTimeout(120_000) // file-scoped in Bun 1.4: the preload only reaches the first file

type Schema = Record<string, any>
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

const resolve = (s: Schema | undefined): Schema => {
  let node = s ?? {}
  while (node.$ref) node = doc.components.schemas[String(node.$ref).split('/').pop()!]
  return node
}

/** Values a string field is tried with, for formats and patterns a plain word does not meet. */
const STRING_SAMPLES = ['a', 'abc', 'https://example.com', 'a@example.com', 'UTC', '0'.repeat(64), 'a1', 'text/plain', 'acme-1', '2026-01', '2026-01-31', 'USD', '1.00']
const SAMPLES_BY_NAME: Record<string, unknown> = {
  time_zone: 'UTC', host_origin: 'https://example.com', subject_email: 'a@example.com', address: 'a@example.com',
  url: 'https://example.com/hook', content_type: 'text/plain', filename: 'a.txt', slug: 'acme-fuzz', role: 'admin', key: 'q1',
  scopes: ['scenarios:read'], limit: '10.00', email: 'a@example.com',
}

/** The schema a nullable member takes when it is not null (its first non-null anyOf member), else the schema itself. */
const nonNull = (schema: Schema | undefined): Schema => {
  const s = resolve(schema)
  const member = (s.anyOf ?? []).find((m: Schema) => resolve(m).type !== 'null')
  return member ? resolve(member) : s
}

/** A value that satisfies `schema` (required properties only, so no optional domain rule fires). */
function valid(schema: Schema | undefined, name = ''): unknown {
  const s = resolve(schema)
  if (name in SAMPLES_BY_NAME && matches(s, SAMPLES_BY_NAME[name])) return SAMPLES_BY_NAME[name]
  // A rule the document states partly in words (x-svc-runtime-check) comes with examples that meet it.
  const example = (s.examples ?? []).find((v: unknown) => matches(s, v))
  if (example !== undefined) return example
  if (s.enum) return s.enum[0]
  if (s.const !== undefined) return s.const
  if (s.anyOf) return valid(s.anyOf.find((m: Schema) => resolve(m).type !== 'null') ?? s.anyOf[0], name)
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = Object.fromEntries((s.required ?? []).map((k: string) => [k, valid(s.properties?.[k], k)]))
      // A channel names the member that must come with it (email -> email, webhook -> webhook).
      if (typeof out.channel === 'string' && s.properties?.[out.channel]) out[out.channel] = valid(s.properties[out.channel], out.channel)
      for (const [k, v] of Object.entries(branchOf(s, out))) out[k] ??= v
      // Exactly one of some members (oneOf of one `required` each): the first.
      const first = (s.oneOf ?? []).find((b: Schema) => !b.$ref && Array.isArray(b.required) && Object.keys(b).length === 1)
      if (first && !s.discriminator) out[first.required[0]] ??= valid(s.properties?.[first.required[0]], first.required[0])
      return out
    }
    case 'array': return Array.from({ length: s.minItems ?? 0 }, () => valid(s.items, name))
    case 'integer': case 'number': return s.minimum ?? 1
    case 'boolean': return true
    case 'null': return null
    case 'string': {
      if (s.format === 'uuid') return crypto.randomUUID()
      if (s.format === 'email') return 'a@example.com'
      if (s.format === 'date-time') return new Date().toISOString()
      return STRING_SAMPLES.find((v) => matches(s, v)) ?? 'a'
    }
  }
  return {}
}

/** The required members of the oneOf branch a discriminated object's value selects (none without a discriminator). */
function branchOf(s: Schema, value: Record<string, unknown>): Record<string, unknown> {
  const property = s.discriminator?.propertyName
  const ref = property ? s.discriminator.mapping?.[String(value[property])] : undefined
  if (!ref) return {}
  const branch = resolve({ $ref: ref })
  return Object.fromEntries((branch.required ?? []).filter((k: string) => k !== property).map((k: string) => [k, valid(branch.properties?.[k] ?? s.properties?.[k], k)]))
}

function matches(s: Schema, v: unknown): boolean {
  if (s.type === 'string') {
    if (typeof v !== 'string') return false
    if (s.minLength !== undefined && [...v].length < s.minLength) return false
    if (s.maxLength !== undefined && [...v].length > s.maxLength) return false
    if (s.pattern && !new RegExp(s.pattern, 'u').test(v)) return false
    if (s.enum && !s.enum.includes(v)) return false
    return true
  }
  if (s.type === 'array') return Array.isArray(v)
  return s.type === undefined || typeof v === s.type
}

/** A value of another JSON type than the schema takes. */
function wrongType(schema: Schema): unknown {
  const s = resolve(schema)
  const types = new Set([s.type, ...(s.anyOf ?? []).map((m: Schema) => resolve(m).type)].flat())
  if (s.enum) return 12345
  if (!types.has('string')) return 'not-a-value'
  if (!types.has('integer') && !types.has('number')) return 12345
  if (!types.has('object')) return { nested: true }
  return undefined
}

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

/** A value the document says a query parameter must not take (outside its enum, pattern, bounds or type), or undefined. */
function invalidQueryValue(schema: Schema): string | undefined {
  const s = resolve(schema)
  if (s.enum) return 'not-a-member'
  if (s.type === 'integer' || s.type === 'number') return s.maximum !== undefined ? String(s.maximum + 1) : 'x'
  if (s.format === 'uuid') return 'not-a-uuid'
  if (s.pattern) return ['\u0000', '\u0001', '!!', ' ', 'a'.repeat(300)].find((v) => !new RegExp(s.pattern).test(v))
  if (s.maxLength !== undefined) return 'a'.repeat(s.maxLength + 1)
  return undefined
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

/**
 * Members whose document value may be sampled from their enum: up to this many members of an enum,
 * evenly spread (the time zone and currency catalogs have hundreds), each sent as a valid value.
 */
const ENUM_SAMPLES = 12

/** Members of an enum spread evenly over it (first and last included), at most ENUM_SAMPLES. */
function enumSample(values: readonly unknown[]): unknown[] {
  if (values.length <= ENUM_SAMPLES) return [...values]
  return Array.from({ length: ENUM_SAMPLES }, (_, i) => values[Math.round((i * (values.length - 1)) / (ENUM_SAMPLES - 1))])
}

const EMOJI = '\u{1F600}' // one character of the document, two UTF-16 code units

/** A value the document calls valid for an optional member: at its largest where it has a length, so lengths are tried in characters. */
function fullValue(schema: Schema, name: string): unknown {
  const s = nonNull(schema)
  if (s.type === 'string' && s.pattern === '^[^\\u0000]*$' && s.format === undefined && s.maxLength !== undefined && !(name in SAMPLES_BY_NAME)) return EMOJI.repeat(s.maxLength)
  if (s.type === 'array' && s.items) return Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => fullValue(s.items, name))
  return valid(s, name)
}

/** Sampled values the document calls invalid for a member, each with what it breaks. */
function invalidValues(schema: Schema, name: string): [unknown, string][] {
  const s = nonNull(schema)
  const out: [unknown, string][] = []
  if (s.enum) {
    out.push(['not-a-member', 'enum'])
    // A member in another letter case (Intl takes europe/berlin for Europe/Berlin; the enum does not).
    const recased = s.enum.filter((v: unknown) => typeof v === 'string').flatMap((v: string) => [v.toLowerCase(), v.toUpperCase()]).find((v: string) => !s.enum.includes(v))
    if (recased !== undefined) out.push([recased, 'enum (letter case)'])
  }
  if (s.type === 'string') {
    if (s.maxLength !== undefined) out.push([EMOJI.repeat(s.maxLength + 1), 'maxLength in characters'])
    if ((s.minLength ?? 0) > 0) out.push(['', 'minLength'])
    if (s.pattern && s.pattern !== '^[^\\u0000]*$') {
      const bad = ['', ' ', 'HTTP://Example.COM/', 'http://example.com', 'https://u:p@example.com/', 'no', '-', '!'].find((v) => !new RegExp(s.pattern, 'u').test(v) && (s.minLength ?? 0) <= [...v].length)
      if (bad !== undefined) out.push([bad, 'pattern'])
    }
    if (s.format === 'uuid') out.push(['not-a-uuid', 'format uuid'])
    if (s.format === 'date-time') out.push(['yesterday', 'format date-time'])
    if (s.format === 'uri') out.push(['not a uri', 'format uri'])
  }
  if (s.type === 'integer' || s.type === 'number') {
    if (s.minimum !== undefined) out.push([s.minimum - 1, 'minimum'])
    if (s.maximum !== undefined) out.push([s.maximum + 1, 'maximum'])
    if (s.type === 'integer') out.push([1.5, 'integer'])
  }
  if (s.type === 'array') {
    if (s.maxItems !== undefined && s.maxItems <= 60) out.push([Array.from({ length: s.maxItems + 1 }, () => fullValue(s.items ?? {}, name)), 'maxItems'])
    for (const [item, why] of invalidValues(s.items ?? {}, name).slice(0, 3)) out.push([[item], `item ${why}`])
  }
  if (s.type === 'object') {
    if ((s.required ?? []).length > 0) out.push([{}, 'required members'])
    const property = s.discriminator?.propertyName
    if (property) {
      // A discriminator value with the member of another branch (and without its own).
      const values = Object.keys(s.discriminator.mapping)
      const body = valid(s, name) as Record<string, unknown>
      const other = values.find((v) => v !== body[property])!
      const { [String(body[property])]: _own, ...rest } = body
      out.push([{ ...rest, [other]: valid(s.properties[other], other) }, 'oneOf branch'])
    }
  }
  return out
}

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
