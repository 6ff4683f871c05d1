// The token value grammar of svc:theme, over a table: every allowed form and every refused one
// the spec names (length, named colours, keywords, functions, refused characters).
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { grammarProblem, parseToken, TOKEN_VALUE_MAX } from '../../frame/src/token-grammar'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const ALLOWED: [string, [number, number, number, number]][] = [
  ['#fff', [255, 255, 255, 1]],
  ['#FFF', [255, 255, 255, 1]],
  ['#0008', [0, 0, 0, 0x88 / 255]],
  ['#1a2b3c', [0x1a, 0x2b, 0x3c, 1]],
  ['#1a2b3c80', [0x1a, 0x2b, 0x3c, 0x80 / 255]],
  ['rgb(10, 20, 30)', [10, 20, 30, 1]],
  ['rgb(10,20,30)', [10, 20, 30, 1]],
  ['rgba(10, 20, 30, 0.5)', [10, 20, 30, 0.5]],
  ['rgba(10, 20, 30, 50%)', [10, 20, 30, 0.5]],
  ['rgb(100%, 0%, 50%)', [255, 0, 127.5, 1]],
  ['rgb(10 20 30)', [10, 20, 30, 1]],
  ['rgb(10 20 30 / 0.25)', [10, 20, 30, 0.25]],
  ['rgba(10 20 30 / 25%)', [10, 20, 30, 0.25]],
  ['rgb(10% 20% 30%)', [25.5, 51, 76.5, 1]],
  ['RGB(1, 2, 3)', [1, 2, 3, 1]],
  ['rgb(300, -5, 12.5)', [255, 0, 12.5, 1]],
  ['hsl(0, 100%, 50%)', [255, 0, 0, 1]],
  ['hsl(120deg, 100%, 25%)', [0, 127.5, 0, 1]],
  ['hsla(240, 100%, 50%, 0.5)', [0, 0, 255, 0.5]],
  ['hsl(0.5turn 100% 50%)', [0, 255, 255, 1]],
  ['hsl(240 100% 50% / 40%)', [0, 0, 255, 0.4]],
  ['hsla(3.14159rad 100% 50%)', [0, 255, 255, 1]],
  ['hsl(200grad, 100%, 50%)', [0, 255, 255, 1]],
]

const REFUSED: [string, string][] = [
  ['red', 'named colour'],
  ['rebeccapurple', 'named colour'],
  ['currentColor', 'currentColor'],
  ['currentcolor', 'currentColor'],
  ['inherit', 'inherit'],
  ['transparent', 'transparent'],
  ['linear-gradient(red, blue)', 'gradient'],
  ['radial-gradient(#fff, #000)', 'gradient'],
  ['var(--x)', 'var()'],
  ['calc(1px + 2px)', 'calc()'],
  ['rgb(calc(1) 2 3)', 'calc() inside'],
  ['color-mix(in srgb, #fff, #000)', 'color-mix()'],
  ['url(https://x.example/a)', 'url()'],
  ['#fff;', 'semicolon'],
  ['#fff}', 'brace'],
  ['{#fff', 'brace'],
  ['<b>#fff', 'angle bracket'],
  ['#fff>', 'angle bracket'],
  ['@import', 'at sign'],
  ['#fff/*x*/', 'comment'],
  ['\\23 fff', 'backslash'],
  ['rgb(1, 2, 3, 0.5, 1)', 'five channels'],
  ['rgb(1 2)', 'two channels'],
  ['rgb(1, 2 3)', 'mixed separators'],
  ['rgb(1 2 3, 0.5)', 'comma alpha in space form'],
  ['hsl(10, 20, 30)', 'hsl without percentages'],
  ['hsl(10deg 20% 30)', 'hsl lightness without percentage'],
  ['#ff', 'two hex digits'],
  ['#fffff', 'five hex digits'],
  ['#ggg', 'not hex'],
  [' #fff', 'leading space'],
  ['#fff ', 'trailing space'],
  ['', 'empty'],
  ['rgba(100.000, 100.000, 100.000, 0.5)', `over ${TOKEN_VALUE_MAX} characters`],
  ['hwb(0 0% 0%)', 'another colour function'],
  ['lab(50% 0 0)', 'another colour function'],
  ['none', 'keyword'],
]

describe('token grammar', () => {
  test.each(ALLOWED)('allowed: %s', (value, [r, g, b, a]) => {
    expect(grammarProblem(value)).toBeNull()
    const c = parseToken(value)!
    expect(c).not.toBeNull()
    expect(c.r * 255).toBeCloseTo(r, 0)
    expect(c.g * 255).toBeCloseTo(g, 0)
    expect(c.b * 255).toBeCloseTo(b, 0)
    expect(c.alpha).toBeCloseTo(a, 2)
  })

  test.each(REFUSED)('refused: %s (%s)', (value) => {
    expect(grammarProblem(value)).not.toBeNull()
    expect(parseToken(value)).toBeNull()
  })

  test('non-strings are refused', () => {
    for (const v of [null, undefined, 12, {}, [], true]) expect(parseToken(v)).toBeNull()
  })

  test(`exactly ${TOKEN_VALUE_MAX} characters is allowed, one more is refused`, () => {
    const at = 'rgba(100.0, 100.0, 100.0, 0.500)'
    expect(at.length).toBe(TOKEN_VALUE_MAX)
    expect(parseToken(at)).not.toBeNull()
    expect(parseToken(at.replace('0.500', '0.5000'))).toBeNull()
  })
})
