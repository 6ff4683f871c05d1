// The contrast guard over a table: WCAG ratios, every pair of the spec's table and its floor, the
// border relaxation per mode, refusals costing only the sender's keys, and the cascade.
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { BORDER_FLOOR, contrastRatio, guardContrast, PAIRED, PAIRS, TOKENS, type Token } from '../../frame/src/contrast'
import { parseToken } from '../../frame/src/token-grammar'
import { defaultsOf } from '../../frame/src/theme'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const c = (v: string) => parseToken(v)!
const sent = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, c(v)])) as Partial<Record<Token, ReturnType<typeof c>>>

describe('WCAG contrast ratio', () => {
  test.each([
    ['#000000', '#ffffff', 21],
    ['#ffffff', '#ffffff', 1],
    ['#767676', '#ffffff', 4.54],
    ['#777777', '#ffffff', 4.48],
    ['#949494', '#ffffff', 3.03],
    ['#ff0000', '#ffffff', 4.0],
    ['#0000ff', '#ffffff', 8.59],
  ])('%s on %s is %d:1', (a, b, ratio) => {
    expect(contrastRatio(c(a), c(b))).toBeCloseTo(ratio, 1)
    expect(contrastRatio(c(b), c(a))).toBeCloseTo(ratio, 1)
  })
})

describe('the guard table', () => {
  test('the pairs and floors are exactly the spec table; accent-hover is unpaired', () => {
    expect(PAIRS.map((p) => `${p.ink}/${p.ground}/${p.floor('light')}/${p.floor('dark')}`)).toEqual([
      'text/surface/4.5/4.5', 'text/surface-subtle/4.5/4.5', 'text/surface-canvas/4.5/4.5', 'text-muted/surface/4.5/4.5',
      'accent-foreground/accent/4.5/4.5', 'accent-subtle-foreground/accent-subtle/4.5/4.5', 'border/surface/1.56/1.49',
    ])
    expect(TOKENS.filter((t) => !PAIRED.has(t))).toEqual(['accent-hover'])
  })

  test.each(['light', 'dark'] as const)('the %s defaults pass every pair; the border sits on its relaxed floor', (mode) => {
    const d = defaultsOf(mode)
    for (const p of PAIRS) expect(contrastRatio(d[p.ink], d[p.ground])).toBeGreaterThanOrEqual(p.floor(mode))
    expect(Number(contrastRatio(d.border, d.surface).toFixed(2))).toBe(BORDER_FLOOR[mode])
    expect(guardContrast({}, d, mode)).toEqual({ accepted: {}, refused: [] })
  })
})

describe('guardContrast', () => {
  const light = defaultsOf('light')
  const dark = defaultsOf('dark')
  const cases: [string, 'light' | 'dark', Record<string, string>, string[], string[]][] = [
    // name, mode, sent, refused (in order), accepted keys
    ['readable palette passes whole', 'light', { surface: '#ffffff', text: '#111111', accent: '#0a3d91', 'accent-foreground': '#ffffff' }, [], ['surface', 'text', 'accent', 'accent-foreground']],
    ['text-muted just under 4.5 on the default surface', 'light', { 'text-muted': '#777777' }, ['text-muted'], []],
    ['text-muted just over 4.5 on the default surface', 'light', { 'text-muted': '#767676' }, [], ['text-muted']],
    ['text is measured on all three surfaces', 'light', { text: '#767676' }, ['text'], []],
    ['a ground fails against the default ink', 'light', { 'surface-canvas': '#666666' }, ['surface-canvas'], []],
    ['a slightly darker surface fails against the default border (relaxed floor)', 'light', { surface: '#fdfdfd' }, ['surface'], []],
    ['both keys of a failing pair are refused', 'light', { 'accent-foreground': '#ffffff', accent: '#eeeeee' }, ['accent', 'accent-foreground'], []],
    ['only the sender key of a failing pair is refused', 'light', { accent: '#ffffff' }, ['accent'], []],
    ['text-muted floor 4.5', 'light', { 'text-muted': '#8a8a8a' }, ['text-muted'], []],
    ['accent-subtle pair', 'light', { 'accent-subtle-foreground': '#aab4ff' }, ['accent-subtle-foreground'], []],
    ['border below 3:1 but above the light relaxation passes', 'light', { border: '#c8c8c8' }, [], ['border']],
    ['border below the light relaxation fails', 'light', { border: '#d5d5d5' }, ['border'], []],
    ['border floor in dark is 1.49', 'dark', { border: '#363840' }, [], ['border']],
    ['border below the dark relaxation fails', 'dark', { border: '#2a2e36' }, ['border'], []],
    ['accent-hover is never measured', 'light', { 'accent-hover': '#ffffff' }, [], ['accent-hover']],
    ['host tokens measured against dark defaults', 'dark', { text: '#1a1f29' }, ['text'], []],
    // cascade: black surface fails against the default text, reverts to white, and then the white
    // text-muted that was fine on black fails against the restored white surface.
    ['cascade', 'light', { surface: '#000000', 'text-muted': '#ffffff', border: '#333333' }, ['surface', 'text-muted'], ['border']],
  ]
  test.each(cases)('%s', (_name, mode, tokens, refused, acceptedKeys) => {
    const r = guardContrast(sent(tokens), mode === 'light' ? light : dark, mode)
    expect(r.refused).toEqual(refused as Token[])
    expect(Object.keys(r.accepted).sort()).toEqual([...acceptedKeys].sort())
  })
})
