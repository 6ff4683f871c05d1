/**
 * The look OCR takes at a page before reading it (server/documents/ocr/analyse.ts): which way up
 * its text is, from its pixels alone, for screenshots and scans in all four quarter turns; how
 * tall its lines are, so a large photo is scaled to the text height OCR needs and a screenshot is
 * not; and the pages it cannot judge (blank, noise) are marked unsure with no line height.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { analysePage, preparePage, recognitionScale, TARGET_LINE_PX } from '../../server/documents/ocr/analyse'
import { blankPage, noisePage, scanned, screenshotPage, textPage, turned } from '../helpers/scans'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const png = (c: { toBuffer(t: 'image/png'): Buffer }) => new Uint8Array(c.toBuffer('image/png'))
const lines = Array.from({ length: 20 }, (_, i) => `2024-03-${String(i + 1).padStart(2, '0')}  Payment received from Acme Holdings LLC invoice ${1000 + i}  amount ${(1234.5 + i * 17).toFixed(2)}`)

describe('orientation from the pixels', () => {
  const shot = screenshotPage('Loan servicing portal', lines)
  const page = textPage(lines.slice(0, 12), { width: 1700, height: 2200, fontPx: 24 })
  for (const [name, make] of [['a 1920x1080 screenshot', (t: 0 | 1 | 2 | 3) => png(t === 0 ? shot : turned(shot, t))], ['a scanned statement', (t: 0 | 1 | 2 | 3) => scanned(page, { quarterTurns: t, degrees: 0.5 })]] as const) {
    test(`${name} in each quarter turn: the turn that puts it upright, and sure`, async () => {
      for (const stored of [0, 1, 2, 3] as const) {
        const a = (await analysePage(make(stored)))!
        // Stored turned `stored` quarters clockwise: (4 - stored) more quarters put it upright.
        expect({ stored, turns: a.turns, sure: a.sure }).toEqual({ stored, turns: ((4 - stored) % 4) as 0 | 1 | 2 | 3, sure: true })
      }
    })
  }
})

describe('scaling to the text height', () => {
  test('a screenshot is recognised as it is (its bytes untouched); a large photo of a page is scaled down to the target line height', async () => {
    const shot = png(screenshotPage('Portal', lines))
    const a = (await analysePage(shot))!
    expect(recognitionScale(a)).toBe(1)
    expect(preparePage(a, 0, shot)).toBe(shot)
    // A page photographed at 4x: 96 px text on a 5100x6600 image.
    const photo = scanned(textPage(lines.slice(0, 10), { width: 5100, height: 6600, fontPx: 96 }), { quality: 70 })
    const b = (await analysePage(photo))!
    expect(b.lineHeight!).toBeGreaterThan(60)
    const scale = recognitionScale(b)
    expect(b.lineHeight! * scale).toBeCloseTo(TARGET_LINE_PX, 5)
    const prepared = preparePage(b, 0, photo)
    const header = new TextDecoder().decode(prepared.subarray(0, 20)).split('\n')
    expect(header[0]).toBe('P5')
    expect(header[1]).toBe(`${Math.round(5100 * scale)} ${Math.round(6600 * scale)}`)
  })

  test('a blank page and a page of noise: no line height, unsure; the blank has no ink, the noise much', async () => {
    const blank = (await analysePage(scanned(blankPage())))!
    expect(blank).toMatchObject({ lineHeight: undefined, sure: false })
    expect(blank.ink).toBeLessThan(0.0005)
    const noise = (await analysePage(scanned(noisePage())))!
    expect(noise).toMatchObject({ lineHeight: undefined, sure: false })
    expect(noise.ink).toBeGreaterThan(0.5)
  })

  test('bytes that are not an image: undefined', async () => {
    expect(await analysePage(new TextEncoder().encode('not an image'))).toBeUndefined()
  })
})
