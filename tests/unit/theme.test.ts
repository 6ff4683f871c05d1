// What one svc:theme message does to the theme in force (the frame applies exactly this).
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { applyTheme, DEFAULT_PALETTES, INITIAL_THEME, themeVariables, TOKENS } from '../../frame/src/theme'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const vars = (s: Parameters<typeof themeVariables>[0]) => themeVariables(s)

describe('applyTheme', () => {
  test('the closed set: eleven tokens, each with a light and a dark default', () => {
    expect(TOKENS.length).toBe(11)
    for (const mode of ['light', 'dark'] as const) expect(Object.keys(DEFAULT_PALETTES[mode]).sort()).toEqual([...TOKENS].sort())
  })

  test('valid tokens are accepted and become custom properties', () => {
    const { state, errors } = applyTheme(INITIAL_THEME, { tokens: { accent: '#0a3d91', 'accent-hover': 'rgb(8 40 100 / 50%)' } })
    expect(errors).toEqual([])
    expect(vars(state)['--svc-accent']).toBe('rgb(10 61 145)')
    expect(vars(state)['--svc-accent-hover']).toBe('rgb(8 40 100 / 0.5)')
    expect(vars(state)['--svc-surface']).toBe('rgb(255 255 255)')
  })

  test('invalid_token per bad key or value; the good keys still apply', () => {
    const { state, errors } = applyTheme(INITIAL_THEME, {
      tokens: { accent: '#0a3d91', font: 'serif', 'status-error': '#f00', text: 'red', border: 'var(--x)', surface: 12 },
    })
    expect(errors).toEqual([
      { code: 'invalid_token', key: 'font' },
      { code: 'invalid_token', key: 'status-error' },
      { code: 'invalid_token', key: 'text' },
      { code: 'invalid_token', key: 'border' },
      { code: 'invalid_token', key: 'surface' },
    ])
    expect(Object.keys(state.overrides)).toEqual(['accent'])
  })

  test('translucent values are refused for every paired token, allowed for accent-hover', () => {
    for (const key of TOKENS.filter((t) => t !== 'accent-hover')) {
      expect(applyTheme(INITIAL_THEME, { tokens: { [key]: '#00000080' } }).errors).toEqual([{ code: 'invalid_token', key }])
    }
    expect(applyTheme(INITIAL_THEME, { tokens: { 'accent-hover': '#00000080' } }).errors).toEqual([])
    // An explicit opaque alpha is not translucent.
    expect(applyTheme(INITIAL_THEME, { tokens: { text: 'rgba(0, 0, 0, 1)' } }).errors).toEqual([])
  })

  test('insufficient_contrast per refused key, cascading, in refusal order', () => {
    const { state, errors } = applyTheme(INITIAL_THEME, { tokens: { surface: '#000000', 'text-muted': '#ffffff', border: '#333333' } })
    expect(errors).toEqual([{ code: 'insufficient_contrast', key: 'surface' }, { code: 'insufficient_contrast', key: 'text-muted' }])
    expect(Object.keys(state.overrides)).toEqual(['border'])
    expect(vars(state)['--svc-surface']).toBe('rgb(255 255 255)')
  })

  test('tokens replace the whole override set; tokens: {} is a full reset', () => {
    const a = applyTheme(INITIAL_THEME, { tokens: { accent: '#0a3d91', 'accent-hover': '#0a3d91' } }).state
    const b = applyTheme(a, { tokens: { 'accent-hover': '#123456' } }).state
    expect(Object.keys(b.overrides)).toEqual(['accent-hover'])
    const c = applyTheme(b, { tokens: {} })
    expect(c.errors).toEqual([])
    expect(c.state.overrides).toEqual({})
    expect(vars(c.state)).toEqual(vars(INITIAL_THEME))
  })

  test('a mode-only message leaves the palette alone; host tokens win in both modes', () => {
    const a = applyTheme(INITIAL_THEME, { tokens: { accent: '#0a3d91' } }).state
    const dark = applyTheme(a, { mode: 'dark' })
    expect(dark.errors).toEqual([])
    expect(dark.state.overrides).toBe(a.overrides)
    expect(vars(dark.state)['--svc-accent']).toBe('rgb(10 61 145)')
    expect(vars(dark.state)['--svc-surface']).toBe('rgb(22 26 34)')
    const back = applyTheme(dark.state, { mode: 'light' }).state
    expect(vars(back)['--svc-accent']).toBe('rgb(10 61 145)')
  })

  test('mode and tokens together: the guard measures against the new mode', () => {
    const r = applyTheme(INITIAL_THEME, { mode: 'dark', tokens: { text: '#1a1f29' } })
    expect(r.errors).toEqual([{ code: 'insufficient_contrast', key: 'text' }])
    expect(r.state.mode).toBe('dark')
  })

  test('a bad mode or non-object tokens refuse the whole message as invalid_message', () => {
    for (const payload of [{ mode: 'sepia' }, { tokens: [] }, { tokens: '#fff' }, { mode: 'dark', tokens: null }]) {
      const r = applyTheme(INITIAL_THEME, payload)
      expect(r.errors).toEqual([{ code: 'invalid_message' }])
      expect(r.state).toBe(INITIAL_THEME)
    }
  })
})
