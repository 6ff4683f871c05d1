/**
 * Readable messages for values that break a stated pattern (schemas/patterns.ts). The validator
 * enforces the pattern a request schema carries, so such a value is refused before its route runs;
 * without this its errors[] entry would quote the regular expression. The module that owns a rule
 * registers what it says about a value (the same words its own check gives), once, at load.
 */

type Explain = (value: string) => string | null

const explainers = new Map<string, { explain: Explain; fallback: string }>()

/**
 * Registers the message of `pattern`: `explain(value)` names the broken rule (null when it finds
 * none), `fallback` is said then. Every violation of a schema carrying the pattern (its length or
 * format included) is described this way.
 */
export function explainPattern(pattern: string, explain: Explain, fallback: string): void {
  explainers.set(pattern, { explain, fallback })
}

/** The message for `value` breaking `schema` when the schema carries a registered pattern, else undefined. */
export function patternMessage(schema: Record<string, unknown> | undefined, value: unknown): string | undefined {
  const entry = typeof schema?.pattern === 'string' ? explainers.get(schema.pattern) : undefined
  if (!entry || typeof value !== 'string') return undefined
  return entry.explain(value) ?? entry.fallback
}
