/**
 * Values for a property-based test over the service's OpenAPI document (tests/http/openapi-fuzz.test.ts):
 * for any schema of the document, a value it calls valid (required members only, or every optional
 * member at its largest, lengths counted in characters), values it calls invalid with what each
 * breaks, a value of another JSON type, and an invalid query parameter value. `$ref`s resolve
 * against the document the test fetched from the running service.
 */

/** A node of the OpenAPI document. */
export type Schema = Record<string, any>

/** Samplers bound to one OpenAPI document (read when called, so it may be fetched in beforeAll). */
export function schemaSamples(document: () => Schema) {
  const resolve = (s: Schema | undefined): Schema => {
    let node = s ?? {}
    while (node.$ref) node = document().components.schemas[String(node.$ref).split('/').pop()!]
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
  return { resolve, nonNull, valid, branchOf, matches, wrongType, invalidQueryValue, enumSample, fullValue, invalidValues, SAMPLES_BY_NAME }
}
