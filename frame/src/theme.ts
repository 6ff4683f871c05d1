/**
 * Theming (spec, Events: svc:theme): the default palettes, and what one theme message does to the
 * theme in force. Tokens replace the whole override set; `tokens: {}` resets it; a message with a
 * mode only switches the mode and leaves the palette alone; host tokens are mode-independent and
 * win in both modes. Bad keys and values give invalid_token per key, translucent values are
 * refused for paired tokens, and the contrast guard refuses what stays unreadable.
 */
import { guardContrast, PAIRED, TOKENS, type Mode, type Token } from './contrast'
import { parseToken, type Rgba } from './token-grammar'

export { TOKENS, type Mode, type Token }

/** The design system's palettes (every pair passes its floor; border sits on the relaxed floor). */
export const DEFAULT_PALETTES: Record<Mode, Record<Token, string>> = {
  light: {
    surface: '#ffffff',
    'surface-subtle': '#f6f7f9',
    'surface-canvas': '#eef0f3',
    text: '#1a1f29',
    'text-muted': '#5a6272',
    border: '#cbcfd8',
    accent: '#2553c9',
    'accent-hover': '#1d44a8',
    'accent-foreground': '#ffffff',
    'accent-subtle': '#e8eefc',
    'accent-subtle-foreground': '#1d3f99',
  },
  dark: {
    surface: '#161a22',
    'surface-subtle': '#1d222c',
    'surface-canvas': '#0f1218',
    text: '#e8eaef',
    'text-muted': '#a3aab8',
    border: '#363840',
    accent: '#7aa2ff',
    'accent-hover': '#96b6ff',
    'accent-foreground': '#0b1530',
    'accent-subtle': '#1e2a48',
    'accent-subtle-foreground': '#c5d5ff',
  },
}

/** The default palette of a mode, parsed. */
export function defaultsOf(mode: Mode): Record<Token, Rgba> {
  return Object.fromEntries(TOKENS.map((t) => [t, parseToken(DEFAULT_PALETTES[mode][t])!])) as Record<Token, Rgba>
}

/** The theme in force: the mode and the host's accepted overrides. */
export interface ThemeState { mode: Mode; overrides: Partial<Record<Token, Rgba>> }

/** The initial theme: light, no overrides. */
export const INITIAL_THEME: ThemeState = { mode: 'light', overrides: {} }

/** One refusal to report as svc:error. */
export interface ThemeError { code: 'invalid_message' | 'invalid_token' | 'insufficient_contrast'; key?: string }

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Applies one svc:theme payload `{mode?, tokens?}` to the theme in force. A mode other than
 * light/dark or tokens that are not an object make the whole message invalid (nothing changes).
 * The guard is measured against the defaults of the mode in force after the message.
 */
export function applyTheme(state: ThemeState, payload: { mode?: unknown; tokens?: unknown }): { state: ThemeState; errors: ThemeError[] } {
  const hasMode = payload.mode !== undefined
  const hasTokens = payload.tokens !== undefined
  if ((hasMode && payload.mode !== 'light' && payload.mode !== 'dark') || (hasTokens && !isPlainObject(payload.tokens))) {
    return { state, errors: [{ code: 'invalid_message' }] }
  }
  const mode = hasMode ? (payload.mode as Mode) : state.mode
  if (!hasTokens) return { state: { mode, overrides: state.overrides }, errors: [] }
  const errors: ThemeError[] = []
  const sent: Partial<Record<Token, Rgba>> = {}
  for (const [key, raw] of Object.entries(payload.tokens as Record<string, unknown>)) {
    const token = (TOKENS as readonly string[]).includes(key) ? (key as Token) : null
    const parsed = token ? parseToken(raw) : null
    if (!token || !parsed || (PAIRED.has(token) && parsed.alpha < 1)) {
      errors.push({ code: 'invalid_token', key })
      continue
    }
    sent[token] = parsed
  }
  const guarded = guardContrast(sent, defaultsOf(mode), mode)
  for (const key of guarded.refused) errors.push({ code: 'insufficient_contrast', key })
  return { state: { mode, overrides: guarded.accepted }, errors }
}

/** A CSS value for a colour. */
export const cssColor = (c: Rgba) =>
  `rgb(${Math.round(c.r * 255)} ${Math.round(c.g * 255)} ${Math.round(c.b * 255)}${c.alpha < 1 ? ` / ${Number(c.alpha.toFixed(3))}` : ''})`

/** The custom properties of a theme: `--svc-<token>` for every token (override or default). */
export function themeVariables(state: ThemeState): Record<string, string> {
  const defaults = defaultsOf(state.mode)
  return Object.fromEntries(TOKENS.map((t) => [`--svc-${t}`, cssColor(state.overrides[t] ?? defaults[t])]))
}
