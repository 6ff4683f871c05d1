/**
 * A scanned-document corpus generated in the test run (no downloads): born-digital pages drawn
 * with `@napi-rs/canvas`, degraded like real scans (a few degrees of rotation, blur, grey, JPEG
 * compression), wrapped into image-only PDFs (pdf-lib), phone photos carrying an EXIF orientation,
 * multi-page TIFFs, blank and noise pages, and hostile images (huge dimensions, thousands of frames).
 */
import { createCanvas, type Canvas } from '@napi-rs/canvas'
import { PDFDocument } from 'pdf-lib'
import { repeatedZlib } from './hostile-files'
import type { Bytes } from './samples'

/** A page of text lines at 150 dpi (US letter), black on white. */
export function textPage(lines: string[], opts: { width?: number; height?: number; fontPx?: number } = {}): Canvas {
  const width = opts.width ?? 1275
  const height = opts.height ?? 1650
  const canvas = createCanvas(width, height)
  const ctx = canvas.getContext('2d')
  ctx.fillStyle = '#ffffff'
  ctx.fillRect(0, 0, width, height)
  ctx.fillStyle = '#111111'
  const font = opts.fontPx ?? 30
  ctx.font = `${font}px sans-serif`
  lines.forEach((line, i) => ctx.fillText(line, 110, 160 + i * font * 1.8))
  return canvas
}

/** A page of pure noise (random grey pixels). */
export function noisePage(width = 1275, height = 1650, seed = 7): Canvas {
  const canvas = createCanvas(width, height)
  const ctx = canvas.getContext('2d')
  const img = ctx.createImageData(width, height)
  let x = seed
  for (let i = 0; i < img.data.length; i += 4) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    const v = x & 0xff
    img.data[i] = v; img.data[i + 1] = v; img.data[i + 2] = v; img.data[i + 3] = 255
  }
  ctx.putImageData(img, 0, 0)
  return canvas
}

/** A blank white page. */
export const blankPage = (width = 1275, height = 1650): Canvas => textPage([], { width, height })

/** What a scanner does to a page: turned a few degrees, blurred, grey, JPEG at `quality`. */
export function scanned(page: Canvas, opts: { degrees?: number; blurPx?: number; quality?: number; quarterTurns?: number } = {}): Bytes {
  const turns = opts.quarterTurns ?? 0
  const sideways = turns % 2 === 1
  const out = createCanvas(sideways ? page.height : page.width, sideways ? page.width : page.height)
  const ctx = out.getContext('2d')
  ctx.fillStyle = '#f4f4f0'
  ctx.fillRect(0, 0, out.width, out.height)
  ctx.translate(out.width / 2, out.height / 2)
  ctx.rotate(((opts.degrees ?? 0) * Math.PI) / 180 + (turns * Math.PI) / 2)
  ctx.filter = `blur(${opts.blurPx ?? 0}px) grayscale(1)`
  ctx.drawImage(page, -page.width / 2, -page.height / 2)
  return new Uint8Array(out.toBuffer('image/jpeg', opts.quality ?? 70))
}

/** An image-only PDF: one JPEG per page, each filling a US-letter page. */
export async function imageOnlyPdf(jpegs: Uint8Array[]): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  for (const jpeg of jpegs) {
    const img = await pdf.embedJpg(jpeg)
    const page = pdf.addPage([612, 792])
    page.drawImage(img, { x: 0, y: 0, width: 612, height: 792 })
  }
  return new Uint8Array(await pdf.save())
}

/** A PDF of `pages` pages that all draw the same embedded JPEG (one image object: a small file of many image pages). */
export async function sharedImagePdf(jpeg: Uint8Array, pages: number): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const img = await pdf.embedJpg(jpeg)
  for (let i = 0; i < pages; i++) pdf.addPage([612, 792]).drawImage(img, { x: 0, y: 0, width: 612, height: 792 })
  return new Uint8Array(await pdf.save())
}

/**
 * A phone photo: the page stored turned a quarter counter-clockwise, with EXIF orientation 6
 * ("rotate 90 clockwise to display"), as phones store portrait shots.
 */
export function phonePhoto(page: Canvas): Bytes {
  const jpeg = scanned(page, { quarterTurns: 3, quality: 80 })
  const tiff = [0x49, 0x49, 0x2a, 0x00, 0x08, 0, 0, 0, 0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0, 0, 0, 0x06, 0x00, 0, 0, 0, 0, 0, 0]
  const payload = [...new TextEncoder().encode('Exif'), 0, 0, ...tiff]
  const app1 = [0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 0xff, ...payload]
  return new Uint8Array([...jpeg.subarray(0, 2), ...app1, ...jpeg.subarray(2)])
}

/** The grey levels of a canvas, one byte per pixel. */
function grey(page: Canvas): Uint8Array {
  const { data } = page.getContext('2d').getImageData(0, 0, page.width, page.height)
  const out = new Uint8Array(page.width * page.height)
  for (let i = 0; i < out.length; i++) out[i] = Math.round((data[i * 4]! + data[i * 4 + 1]! + data[i * 4 + 2]!) / 3)
  return out
}

/** A multi-page TIFF (baseline, uncompressed 8-bit grey, one strip per frame): one frame per page. */
export function multiPageTiff(frames: { width: number; height: number; pixels: Uint8Array }[]): Bytes {
  const parts: Uint8Array[] = []
  let offset = 8
  const header = new Uint8Array(8)
  new DataView(header.buffer).setUint16(0, 0x4949, true)
  new DataView(header.buffer).setUint16(2, 42, true)
  new DataView(header.buffer).setUint32(4, 8, true)
  parts.push(header)
  frames.forEach((f, i) => {
    const entries: [number, number, number][] = [[256, 4, f.width], [257, 4, f.height], [258, 3, 8], [259, 3, 1], [262, 3, 1], [273, 4, 0], [277, 3, 1], [278, 4, f.height], [279, 4, f.pixels.length]]
    const ifdSize = 2 + entries.length * 12 + 4
    const dataAt = offset + ifdSize
    const ifd = new Uint8Array(ifdSize)
    const v = new DataView(ifd.buffer)
    v.setUint16(0, entries.length, true)
    entries.forEach(([tag, type, value], k) => {
      const at = 2 + k * 12
      v.setUint16(at, tag, true); v.setUint16(at + 2, type, true); v.setUint32(at + 4, 1, true)
      const val = tag === 273 ? dataAt : value
      if (type === 3) v.setUint16(at + 8, val, true)
      else v.setUint32(at + 8, val, true)
    })
    const next = i < frames.length - 1 ? dataAt + f.pixels.length : 0
    v.setUint32(2 + entries.length * 12, next, true)
    parts.push(ifd, f.pixels)
    offset = dataAt + f.pixels.length
  })
  const out = new Uint8Array(offset)
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

/** A TIFF frame of a page. */
export const tiffFrame = (page: Canvas) => ({ width: page.width, height: page.height, pixels: grey(page) })

/** A valid grey PNG of width x height pixels, all white, built without holding its pixels (a huge-dimension image of a few MB). */
export function hugeWhitePng(width: number, height: number): Bytes {
  const crcTable = new Int32Array(256).map((_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c })
  const crc = (bytes: Uint8Array) => { let c = -1; for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8); return (c ^ -1) >>> 0 }
  const chunk = (type: string, data: Uint8Array) => {
    const body = new Uint8Array(4 + data.length)
    body.set(new TextEncoder().encode(type)); body.set(data, 4)
    const out = new Uint8Array(12 + data.length)
    new DataView(out.buffer).setUint32(0, data.length)
    out.set(body, 4)
    new DataView(out.buffer).setUint32(8 + data.length, crc(body))
    return out
  }
  const bandRows = 64
  const bands = Math.ceil(height / bandRows)
  const ihdr = new Uint8Array(13)
  const v = new DataView(ihdr.buffer)
  v.setUint32(0, width); v.setUint32(4, bands * bandRows); ihdr[8] = 8; ihdr[9] = 0 // 8-bit grey
  // Rows of (filter byte 0, then white), one band of rows repeated: the image is never in memory.
  const band = new Uint8Array((width + 1) * bandRows).map((_, i) => (i % (width + 1) === 0 ? 0 : 0xff))
  const idat = repeatedZlib(band, bands)
  const sig = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  const parts = [sig, chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', new Uint8Array(0))]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

/**
 * A 1920x1080 screenshot of a web application: a dark title bar with light text, a grey side menu,
 * and a white panel of `lines` in 16 px sans-serif (screen text, much smaller than a scan's).
 */
export function screenshotPage(title: string, lines: string[]): Canvas {
  const c = createCanvas(1920, 1080)
  const ctx = c.getContext('2d')
  ctx.fillStyle = '#f3f4f6'
  ctx.fillRect(0, 0, 1920, 1080)
  ctx.fillStyle = '#1f2937'
  ctx.fillRect(0, 0, 1920, 48)
  ctx.fillStyle = '#ffffff'
  ctx.font = '20px sans-serif'
  ctx.fillText(title, 24, 32)
  ctx.fillStyle = '#e5e7eb'
  ctx.fillRect(0, 48, 260, 1032)
  ctx.fillStyle = '#374151'
  ctx.font = '16px sans-serif'
  ;['Dashboard', 'Accounts', 'Payments', 'Documents', 'Settings'].forEach((w, i) => ctx.fillText(w, 24, 100 + i * 40))
  ctx.fillStyle = '#ffffff'
  ctx.fillRect(300, 80, 1580, 960)
  ctx.fillStyle = '#111827'
  lines.forEach((l, i) => ctx.fillText(l, 330, 130 + i * 30))
  return c
}

/** A canvas turned by `quarterTurns` x 90 degrees clockwise (a screenshot or page saved sideways or upside down). */
export function turned(page: Canvas, quarterTurns: 1 | 2 | 3): Canvas {
  const sideways = quarterTurns % 2 === 1
  const c = createCanvas(sideways ? page.height : page.width, sideways ? page.width : page.height)
  const ctx = c.getContext('2d')
  ctx.translate(c.width / 2, c.height / 2)
  ctx.rotate((quarterTurns * Math.PI) / 2)
  ctx.drawImage(page, -page.width / 2, -page.height / 2)
  return c
}
