/**
 * The theme token value grammar (spec, Events: theme tokens): a plain colour literal of at most 32
 * characters in one of the allowed forms. The grammar is checked first, by hand, because it is
 * this product's own rule (it refuses forms a CSS parser would accept); only a value that passes
 * is parsed, by culori, into sRGB channels.
 */
import { converter, modeHsl, modeRgb, parse, useMode } from 'culori/fn'

useMode(modeRgb)
useMode(modeHsl)
const toRgb = converter('rgb')

/** Longest token value accepted. */
export const TOKEN_VALUE_MAX = 32

/** A parsed colour: sRGB channels and alpha, each in 0..1. */
export interface Rgba { r: number; g: number; b: number; alpha: number }

/** Characters and sequences refused anywhere in a value. */
const REFUSED_SEQUENCES = [';', '{', '}', '<', '>', '@', '/*', '\\']

const NUM = String.raw`[+-]?(?:\d+(?:\.\d*)?|\.\d+)`
const PCT = `${NUM}%`
const NUM_OR_PCT = `${NUM}%?`
const ANGLE = `${NUM}(?:deg|grad|rad|turn)?`
const S = String.raw`\s*`
const SP = String.raw`\s+`

/** The allowed forms, each anchored and case-insensitive. */
const FORMS: readonly RegExp[] = [
  /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i,
  // rgb()/rgba(): three number-or-percentage channels, optional alpha; comma form, then space-plus-slash form.
  new RegExp(String.raw`^rgba?\(${S}${NUM_OR_PCT}${S},${S}${NUM_OR_PCT}${S},${S}${NUM_OR_PCT}${S}(?:,${S}${NUM_OR_PCT}${S})?\)$`, 'i'),
  new RegExp(String.raw`^rgba?\(${S}${NUM_OR_PCT}${SP}${NUM_OR_PCT}${SP}${NUM_OR_PCT}${S}(?:\/${S}${NUM_OR_PCT}${S})?\)$`, 'i'),
  // hsl()/hsla(): an angle and two percentages, optional alpha; the same two forms.
  new RegExp(String.raw`^hsla?\(${S}${ANGLE}${S},${S}${PCT}${S},${S}${PCT}${S}(?:,${S}${NUM_OR_PCT}${S})?\)$`, 'i'),
  new RegExp(String.raw`^hsla?\(${S}${ANGLE}${SP}${PCT}${SP}${PCT}${S}(?:\/${S}${NUM_OR_PCT}${S})?\)$`, 'i'),
]

/** Why a value breaks the grammar, or null when it is an allowed colour literal. */
export function grammarProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'not a string'
  if (value.length === 0) return 'empty'
  if (value.length > TOKEN_VALUE_MAX) return `longer than ${TOKEN_VALUE_MAX} characters`
  if (REFUSED_SEQUENCES.some((s) => value.includes(s))) return 'contains a refused character'
  if (!FORMS.some((f) => f.test(value))) return 'not an allowed colour form'
  return null
}

const clamp = (n: number | undefined, dflt = 0) => Math.min(1, Math.max(0, Number.isFinite(n) ? (n as number) : dflt))

/**
 * Parses a token value: null when it breaks the grammar or the colour library cannot read it.
 * Channels are clamped to the sRGB gamut, as a browser renders them.
 */
export function parseToken(value: unknown): Rgba | null {
  if (grammarProblem(value) !== null) return null
  const parsed = parse((value as string).toLowerCase()) as { mode: string; h?: number; s?: number; l?: number; alpha?: number } | undefined
  if (!parsed) return null
  // Out-of-range saturation and lightness are clamped before conversion, as CSS does.
  const inGamut = parsed.mode === 'hsl' ? { ...parsed, h: parsed.h ?? 0, s: clamp(parsed.s), l: clamp(parsed.l) } : parsed
  const rgb = toRgb(inGamut as never) as { r?: number; g?: number; b?: number; alpha?: number } | undefined
  if (!rgb || ![rgb.r, rgb.g, rgb.b].every((n) => Number.isFinite(n))) return null
  return { r: clamp(rgb.r), g: clamp(rgb.g), b: clamp(rgb.b), alpha: clamp(rgb.alpha, 1) }
}

/** True when a parsed colour is not fully opaque. */
export const isTranslucent = (c: Rgba) => c.alpha < 1
