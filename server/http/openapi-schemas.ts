/**
 * TypeBox schemas as the OpenAPI document shows them: named schemas (see `named` in
 * schemas/common.ts) become `#/components/schemas/<name>` references, closed sets of string literals
 * become `enum`, string-keyed records become `additionalProperties`, and an object marked with
 * `oneOfBy` gets `oneOf` with a discriminator. One writer per document.
 */
import type { TSchema } from '@sinclair/typebox'
import { EXACTLY_ONE_OF, ONE_OF_BY, STATED_ENUM, STATED_PATTERN } from '../../schemas/common'

const pascalCase = (word: string) => word.split(/[-_.]/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')

/** The pattern of a string that may hold anything but NUL (what every request string is held to). */
const NO_NUL = '^[^\\u0000]*$'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** Writes schemas into one document, collecting the named ones as components. */
export class SchemaWriter {
  private readonly written = new Map<string, Json>()
  private readonly sources = new Map<string, string>()

  /** Names `schema` as a component (used for shapes no route's schema carries, like Problem). */
  name(name: string, schema: TSchema): void {
    this.write({ ...schema, 'x-component': name } as TSchema)
  }

  /** The JSON Schema of `schema` for the document, named parts replaced by references. */
  write(schema: TSchema | Record<string, unknown>): Json {
    return this.shape(JSON.parse(JSON.stringify(schema)) as Json)
  }

  /** Every named schema met so far, by name. */
  components(): Record<string, Json> {
    return Object.fromEntries([...this.written].sort(([a], [b]) => a.localeCompare(b)))
  }

  private shape(node: Json): Json {
    if (Array.isArray(node)) return node.map((n) => this.shape(n))
    if (node === null || typeof node !== 'object') return node
    // Elysia's normalize marks the schemas it has compiled `additionalProperties: false` (in place, on
    // the shared TypeBox objects), so the document changed with the requests served before it was
    // written. Unknown members are dropped, never refused (README): the document says neither.
    const { 'x-component': component, additionalProperties: closed, ...open } = node
    const rest = closed === false || closed === undefined ? open : { ...open, additionalProperties: closed }
    if (typeof component === 'string') return this.reference(component, rest)
    const literals = Array.isArray(rest.anyOf) ? rest.anyOf.map((m) => (m && typeof m === 'object' && !Array.isArray(m) ? m.const : undefined)) : []
    if (literals.length > 0 && literals.every((v) => typeof v === 'string')) {
      const { anyOf: _members, ...options } = rest
      return { ...(this.shapeEach(options) as object), type: 'string', enum: literals as string[] }
    }
    if (typeof rest.const === 'string') {
      const { const: value, ...options } = rest
      return { ...(this.shapeEach(options) as object), type: 'string', enum: [value] }
    }
    const patterns = rest.patternProperties
    if (patterns && typeof patterns === 'object' && !Array.isArray(patterns) && Object.keys(patterns).length === 1 && patterns['^(.*)$'] !== undefined) {
      const { patternProperties: _p, ...options } = rest
      return { ...(this.shapeEach(options) as object), additionalProperties: this.shape(patterns['^(.*)$']!) }
    }
    const { [ONE_OF_BY]: discriminator, [STATED_PATTERN]: stated, [STATED_ENUM]: statedEnum, [EXACTLY_ONE_OF]: exactlyOne, ...plain } = rest
    const shaped = this.shapeEach(plain) as { [key: string]: Json }
    // Exactly one of these members (a rule the route checks itself): oneOf of one required each.
    if (Array.isArray(exactlyOne)) shaped.oneOf = exactlyOne.map((member) => ({ required: [member] }))
    // A rule the route checks itself (a domain rule, see NonBlankText): the document states it.
    if (typeof stated === 'string') shaped.pattern = stated
    // A catalog the route checks membership of itself (see STATED_ENUM): the document lists it.
    if (Array.isArray(statedEnum)) shaped.enum = statedEnum
    // The body parser refuses a NUL in any string (server/http/json-text.ts): a free-text string says so.
    if (shaped.type === 'string' && shaped.pattern === undefined && shaped.format === undefined && shaped.enum === undefined) shaped.pattern = NO_NUL
    if (typeof discriminator === 'string') return this.oneOfBy(shaped, discriminator)
    return shaped
  }

  /**
   * An object whose members depend on `property` (see `oneOfBy` in schemas/common.ts) as `oneOf`
   * with a discriminator: one named branch per value, which requires the member of that name and
   * excludes the members named by the other values.
   */
  private oneOfBy(shaped: { [key: string]: Json }, property: string): Json {
    const properties = shaped.properties as { [key: string]: Json }
    const values = (properties[property] as { enum: string[] }).enum
    const mapping: Record<string, string> = {}
    for (const value of values) {
      const others = values.filter((v) => v !== value && properties[v] !== undefined)
      const branch = {
        type: 'object',
        description: `The members that come with ${property} ${value}: ${value} is required${others.length ? `, ${others.join(', ')} absent` : ''}.`,
        required: [property, value],
        properties: { [property]: { type: 'string', enum: [value] }, [value]: properties[value]! },
        ...(others.length ? { not: { anyOf: others.map((o) => ({ required: [o] })) } } : {}),
      }
      const name = pascalCase(property) + pascalCase(value)
      mapping[value] = (this.reference(name, branch) as { $ref: string }).$ref
    }
    return { ...shaped, oneOf: Object.values(mapping).map(($ref) => ({ $ref })), discriminator: { propertyName: property, mapping } }
  }

  private shapeEach(node: { [key: string]: Json }): Json {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, this.shape(v)]))
  }

  private reference(name: string, schema: { [key: string]: Json }): Json {
    const source = JSON.stringify(schema)
    const known = this.sources.get(name)
    if (known === undefined) {
      this.sources.set(name, source)
      this.written.set(name, this.shape(schema))
    } else if (known !== source) {
      throw new Error(`two different schemas are named ${name} in the OpenAPI document`)
    }
    return { $ref: `#/components/schemas/${name}` }
  }
}
