/**
 * A cheap look at a page image before OCR, from its pixels alone (one decode, a few passes over a
 * grey copy of at most ANALYSIS_SIDE pixels a side, tens of milliseconds): which way its text runs
 * (the quarter turn that puts it upright, and whether that is sure), how tall its text lines are
 * (so a photo or a large scan is recognised at the resolution OCR needs, not at full size), and how
 * much of it is ink (a wordless page with ink is not blank).
 *
 * Orientation: text lines make the ink profile across them jump (line, gap, line), while the
 * profile along them is smooth; that gives the axis. Latin text then has more ink above its x-band
 * (capitals, digits, ascenders: b d f h k l t) than below it (descenders: g j p q y); that gives up
 * from down. A page with few lines, or with both signals weak, is unsure.
 */
import { createCanvas, loadImage, type Image } from '@napi-rs/canvas'
import { isJpeg, jpegOrientation } from './render'

/** The longest side of the grey copy the analysis works on. */
const ANALYSIS_SIDE = 2000

/** A pixel this much darker than its right or lower neighbour is ink (an edge: dark-on-light and light-on-dark text alike). */
const EDGE_STEP = 48

/**
 * Text lines (ascender to descender, as measured) taller than this are scaled down to
 * TARGET_LINE_PX: Tesseract reads best with an x-height of about 20 px, and a photo or a 600 dpi
 * scan with lines of 100 px costs several times the work for no better reading. Smaller text (a
 * screenshot's) is never scaled up.
 */
export const SCALE_LINES_OVER_PX = 60
export const TARGET_LINE_PX = 44

/** What the analysis found. */
export interface PageAnalysis {
  /** The image as decoded (EXIF orientation applied), to draw the prepared page from. */
  image: Image
  width: number
  height: number
  /** Clockwise quarter turns that put the text upright. */
  turns: 0 | 1 | 2 | 3
  /** False when the signals were weak: the other direction on the same axis is worth one more reading if the first is poor. */
  sure: boolean
  /** The other candidate (same axis, turned half way). */
  alternative: 0 | 1 | 2 | 3
  /** Median text line height in the image's own pixels; undefined when no lines were found. */
  lineHeight: number | undefined
  /** Share of dark pixels (0-1): a blank page has almost none. */
  ink: number
}

/** Decodes and analyses an encoded image; undefined when it cannot be decoded. */
export async function analysePage(bytes: Uint8Array): Promise<PageAnalysis | undefined> {
  let image: Image
  try {
    image = await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  } catch {
    return undefined
  }
  if (!image.width || !image.height) return undefined
  const scale = Math.min(1, ANALYSIS_SIDE / Math.max(image.width, image.height))
  const w = Math.max(1, Math.round(image.width * scale))
  const h = Math.max(1, Math.round(image.height * scale))
  const canvas = createCanvas(w, h)
  const ctx = canvas.getContext('2d')
  ctx.fillStyle = '#ffffff'
  ctx.fillRect(0, 0, w, h)
  ctx.drawImage(image, 0, 0, w, h)
  const { data } = ctx.getImageData(0, 0, w, h)
  const grey = new Uint8Array(w * h)
  let dark = 0
  for (let i = 0; i < grey.length; i++) {
    const g = (data[i * 4]! * 77 + data[i * 4 + 1]! * 150 + data[i * 4 + 2]! * 29) >> 8
    grey[i] = g
    if (g < DARK) dark++
  }
  const ink = edges(grey, w, h)
  const found = orientation(ink, w, h)
  return {
    image, width: image.width, height: image.height,
    turns: found.turns, sure: found.sure, alternative: ((found.turns + 2) % 4) as 0 | 1 | 2 | 3,
    lineHeight: found.lineHeight === undefined ? undefined : found.lineHeight / scale,
    ink: dark / grey.length,
  }
}

/** How much a page is scaled for recognition (1: as it is). */
export function recognitionScale(analysis: Pick<PageAnalysis, 'lineHeight'>): number {
  const h = analysis.lineHeight
  return h !== undefined && h > SCALE_LINES_OVER_PX ? TARGET_LINE_PX / h : 1
}

/**
 * The image to recognise: `turns` clockwise quarter turns and scaled to the text height OCR needs,
 * as an 8-bit grey PNM (no compression to spend time on; Tesseract reads grey anyway). The bytes
 * as they are when nothing needs doing (a JPEG whose EXIF orientation turns it always does).
 */
export function preparePage(analysis: PageAnalysis, turns: 0 | 1 | 2 | 3, bytes: Uint8Array): Uint8Array {
  const scale = recognitionScale(analysis)
  if (turns === 0 && scale === 1 && !(isJpeg(bytes) && jpegOrientation(bytes) !== 1)) return bytes
  const sw = Math.max(1, Math.round(analysis.width * scale))
  const sh = Math.max(1, Math.round(analysis.height * scale))
  const sideways = turns % 2 === 1
  const w = sideways ? sh : sw
  const h = sideways ? sw : sh
  const canvas = createCanvas(w, h)
  const ctx = canvas.getContext('2d')
  ctx.fillStyle = '#ffffff'
  ctx.fillRect(0, 0, w, h)
  ctx.translate(w / 2, h / 2)
  ctx.rotate((turns * Math.PI) / 2)
  ctx.drawImage(analysis.image, -sw / 2, -sh / 2, sw, sh)
  const { data } = ctx.getImageData(0, 0, w, h)
  const head = new TextEncoder().encode(`P5\n${w} ${h}\n255\n`)
  const out = new Uint8Array(head.length + w * h)
  out.set(head)
  for (let i = 0, o = head.length; i < w * h; i++, o++) out[o] = (data[i * 4]! * 77 + data[i * 4 + 1]! * 150 + data[i * 4 + 2]! * 29) >> 8
  return out
}

/** Grey levels under this are ink (dark text, blurred strokes included). */
const DARK = 160

/** The ink map: 1 where a pixel is dark, or differs from its right or lower neighbour by EDGE_STEP or more (light text on dark). */
function edges(grey: Uint8Array, w: number, h: number): Uint8Array {
  const out = new Uint8Array(w * h)
  for (let y = 0; y < h - 1; y++) {
    for (let x = 0; x < w - 1; x++) {
      const i = y * w + x
      const g = grey[i]!
      if (g < DARK || Math.abs(g - grey[i + 1]!) >= EDGE_STEP || Math.abs(g - grey[i + w]!) >= EDGE_STEP) out[i] = 1
    }
  }
  return out
}

/**
 * Gaps between ink this short are bridged when measuring runs, so letters of a word join while
 * lines stay apart: BRIDGE_PX, or a third of the text size for large text.
 */
const BRIDGE_PX = 6

/**
 * The mean length of bridged ink runs along rows (`horizontal`) or along columns: text runs long
 * along its lines (words) and short across them (letter height), a single line included.
 */
function meanRun(ink: Uint8Array, w: number, h: number, horizontal: boolean, bridge: number): number {
  let runs = 0
  let total = 0
  const close = (start: number, last: number) => { if (start >= 0 && last - start >= 2) { runs++; total += last - start + 1 } }
  if (horizontal) {
    for (let y = 0; y < h; y++) {
      let start = -1
      let last = -bridge - 2
      for (let x = 0, i = y * w; x < w; x++, i++) {
        if (ink[i] === 0) continue
        if (x - last > bridge + 1) { close(start, last); start = x }
        last = x
      }
      close(start, last)
    }
  } else {
    // Column runs, walked row by row (memory order) with one run open per column.
    const start = new Int32Array(w).fill(-1)
    const last = new Int32Array(w).fill(-bridge - 2)
    for (let y = 0; y < h; y++) {
      for (let x = 0, i = y * w; x < w; x++, i++) {
        if (ink[i] === 0) continue
        if (y - last[x]! > bridge + 1) { close(start[x]!, last[x]!); start[x] = y }
        last[x] = y
      }
    }
    for (let x = 0; x < w; x++) close(start[x]!, last[x]!)
  }
  return runs === 0 ? 0 : total / runs
}

/** Strips the page is cut into along its lines, so a skewed scan's lines stay apart in each strip's profile. */
const STRIPS = 16

/**
 * Ink profiles of the page per strip: across rows (`rowStrips`: vertical strips, for horizontal
 * text) and across columns (`colStrips`: horizontal strips, for sideways text).
 */
function profiles(ink: Uint8Array, w: number, h: number) {
  const rowStrips = Array.from({ length: STRIPS }, () => new Float64Array(h))
  const colStrips = Array.from({ length: STRIPS }, () => new Float64Array(w))
  const xStrip = new Uint8Array(w).map((_, x) => Math.min(STRIPS - 1, Math.floor((x * STRIPS) / w)))
  for (let y = 0; y < h; y++) {
    const yStrip = colStrips[Math.min(STRIPS - 1, Math.floor((y * STRIPS) / h))]!
    for (let x = 0, i = y * w; x < w; x++, i++) {
      if (ink[i] === 0) continue
      yStrip[x]!++
      rowStrips[xStrip[x]!]![y]!++
    }
  }
  return { rowStrips, colStrips }
}

interface Line { from: number; to: number }

/** Runs of rows with ink, separated by near-empty rows: the text lines across this axis. */
function lines(rows: Float64Array): Line[] {
  let max = 0
  for (const v of rows) max = Math.max(max, v)
  const floor = Math.max(1, max * 0.02)
  const out: Line[] = []
  let start = -1
  for (let r = 0; r <= rows.length; r++) {
    const on = r < rows.length && rows[r]! >= floor
    if (on && start < 0) start = r
    if (!on && start >= 0) { if (r - start >= 4) out.push({ from: start, to: r - 1 }); start = -1 }
  }
  return out
}

/**
 * Ink above a line's core (its densest band) against ink below it, over all lines, as a share
 * (0-1): over 0.5 when the lines read upright in increasing row order, under when upside down.
 */
function ascenderShare(rows: Float64Array, found: Line[]): { share: number; weight: number } {
  let above = 0
  let below = 0
  for (const l of found) {
    let peak = 0
    for (let r = l.from; r <= l.to; r++) peak = Math.max(peak, rows[r]!)
    let coreFrom = l.to
    let coreTo = l.from
    for (let r = l.from; r <= l.to; r++) if (rows[r]! >= peak * 0.6) { coreFrom = Math.min(coreFrom, r); coreTo = Math.max(coreTo, r) }
    for (let r = l.from; r < coreFrom; r++) above += rows[r]!
    for (let r = coreTo + 1; r <= l.to; r++) below += rows[r]!
  }
  const weight = above + below
  return { share: weight === 0 ? 0.5 : above / weight, weight }
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** The quarter turn that makes the text upright, whether that is sure, and the median line height. */
function orientation(ink: Uint8Array, w: number, h: number): { turns: 0 | 1 | 2 | 3; sure: boolean; lineHeight: number | undefined } {
  const p = profiles(ink, w, h)
  const sizes = [p.rowStrips, p.colStrips].map((strips) => median(strips.flatMap((rows) => lines(rows).map((l) => l.to - l.from + 1))) ?? 0)
  const bridge = Math.max(BRIDGE_PX, Math.round(Math.min(...sizes) / 3))
  const jh = meanRun(ink, w, h, true, bridge)
  const jv = meanRun(ink, w, h, false, bridge)
  const sideways = jv > jh
  // Lines of a typical size only, strip by strip: rules, boxes and pictures are not text.
  let above = 0
  let weight = 0
  let count = 0
  const heights: number[] = []
  const strips = (sideways ? p.colStrips : p.rowStrips).map((rows) => ({ rows, found: lines(rows) }))
  for (const s of strips) for (const l of s.found) heights.push(l.to - l.from + 1)
  const typical = median(heights)
  if (typical !== undefined) {
    for (const s of strips) {
      const textLines = s.found.filter((l) => { const n = l.to - l.from + 1; return n >= typical * 0.5 && n <= typical * 2 })
      const a = ascenderShare(s.rows, textLines)
      above += a.share * a.weight
      weight += a.weight
      count += textLines.length
    }
  }
  const share = weight === 0 ? 0.5 : above / weight
  // Rows increase downwards (horizontal text) or rightwards (sideways text): more ink towards lower
  // rows means letter tops face up, or left (a page turned a quarter counter-clockwise: one
  // clockwise turn puts it upright).
  const axisSure = Math.max(jh, jv) > 1.25 * Math.min(jh, jv)
  const directionSure = count >= 6 && weight > 0 && Math.abs(share - 0.5) >= 0.12
  // Most pages are upright: a weak up/down signal on horizontal lines reads them upright first.
  const tops = share >= 0.5 || (!sideways && !directionSure)
  const turns: 0 | 1 | 2 | 3 = sideways ? (tops ? 1 : 3) : (tops ? 0 : 2)
  // A "line" a good part of the page tall is a picture or noise, not text: no height to scale to.
  const lineHeight = typical !== undefined && count >= 3 && typical <= Math.min(w, h) / 8 ? typical : undefined
  return { turns, sure: axisSure && directionSure, lineHeight }
}
