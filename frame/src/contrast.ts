/**
 * The contrast guard (spec, Events: contrast guard): WCAG 2 relative luminance and contrast ratio
 * (computed by culori), the table of ink/ground pairs with their floors, and the cascade that
 * refuses the sender's keys of every failing pair until the palette is stable.
 */
import { modeLrgb, modeRgb, useMode, wcagContrast } from 'culori/fn'
import type { Rgba } from './token-grammar'

useMode(modeRgb)
useMode(modeLrgb)

/** The two colour modes of the frame. */
export type Mode = 'light' | 'dark'

/** The eleven themeable tokens (a closed set). */
export const TOKENS = [
  'surface', 'surface-subtle', 'surface-canvas', 'text', 'text-muted', 'border',
  'accent', 'accent-hover', 'accent-foreground', 'accent-subtle', 'accent-subtle-foreground',
] as const
export type Token = (typeof TOKENS)[number]

/** One row of the contrast table: ink over ground must reach the floor. */
export interface Pair { ink: Token; ground: Token; floor: (mode: Mode) => number }

/**
 * The design system's own border/surface ratio per mode: the border floor of 3:1 is relaxed down
 * to it (the defaults are chosen to sit exactly there, see theme.ts).
 */
export const BORDER_FLOOR: Record<Mode, number> = { light: 1.56, dark: 1.49 }

const AA = () => 4.5

/** The guard table. accent-hover is unpaired. */
export const PAIRS: readonly Pair[] = [
  { ink: 'text', ground: 'surface', floor: AA },
  { ink: 'text', ground: 'surface-subtle', floor: AA },
  { ink: 'text', ground: 'surface-canvas', floor: AA },
  { ink: 'text-muted', ground: 'surface', floor: AA },
  { ink: 'accent-foreground', ground: 'accent', floor: AA },
  { ink: 'accent-subtle-foreground', ground: 'accent-subtle', floor: AA },
  { ink: 'border', ground: 'surface', floor: (mode) => Math.min(3, BORDER_FLOOR[mode]) },
]

/** Tokens that appear in some pair (translucent values are refused for them). */
export const PAIRED: ReadonlySet<Token> = new Set(PAIRS.flatMap((p) => [p.ink, p.ground]))

/** The WCAG contrast ratio of two opaque colours (1..21). */
export function contrastRatio(a: Rgba, b: Rgba): number {
  return wcagContrast({ mode: 'rgb', r: a.r, g: a.g, b: a.b }, { mode: 'rgb', r: b.r, g: b.g, b: b.b })
}

/** The outcome of the guard: the keys kept and the keys refused, in refusal order. */
export interface GuardResult { accepted: Partial<Record<Token, Rgba>>; refused: Token[] }

/**
 * Applies the guard to the sender's valid tokens measured against the values in force (the
 * sender's where sent, `defaults` otherwise). A failing pair costs only the keys the sender
 * supplied in it; each refused key reverts to its default, which may make another pair fail, so
 * the check repeats until no pair fails.
 */
export function guardContrast(sent: Partial<Record<Token, Rgba>>, defaults: Record<Token, Rgba>, mode: Mode): GuardResult {
  const accepted: Partial<Record<Token, Rgba>> = { ...sent }
  const refused: Token[] = []
  for (;;) {
    const value = (t: Token) => accepted[t] ?? defaults[t]
    const round = new Set<Token>()
    for (const pair of PAIRS) {
      if (contrastRatio(value(pair.ink), value(pair.ground)) >= pair.floor(mode)) continue
      for (const key of [pair.ink, pair.ground]) if (key in accepted) round.add(key)
    }
    if (round.size === 0) return { accepted, refused }
    for (const key of TOKENS) {
      if (!round.has(key)) continue
      delete accepted[key]
      refused.push(key)
    }
  }
}
