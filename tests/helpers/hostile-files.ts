/**
 * Hostile files, generated in the test run without ever holding their inflated size in memory: a
 * DOCX whose `word/document.xml` inflates to a chosen size (a zip bomb), a PDF of thousands of
 * pages, a PDF whose one content stream inflates to a chosen size (a stream bomb), and a huge text.
 *
 * The bombs repeat one deflate block: a chunk compressed with a full flush (history reset, byte
 * aligned) is a self-contained deflate block, so N copies of it followed by an empty final block
 * is a valid deflate stream that inflates to N copies of the chunk.
 */
import { deflateRawSync, constants } from 'node:zlib'
import { docxSample, type Bytes } from './samples'
import { unzipSync } from 'fflate'

const utf8 = (s: string) => new TextEncoder().encode(s)

/** A self-contained deflate block of `chunk` (full flush, not final). */
function flushedBlock(chunk: Uint8Array): Uint8Array {
  return new Uint8Array(deflateRawSync(chunk, { level: 9, finishFlush: constants.Z_FULL_FLUSH }))
}

const FINAL_EMPTY_BLOCK = new Uint8Array([0x03, 0x00])

function concat(parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}

/** Raw deflate of `head`, then `body` `times` times, then `tail`; with the CRC-32 and size of what it inflates to. */
export function repeatedDeflate(head: Uint8Array, body: Uint8Array, times: number, tail: Uint8Array) {
  const bodyBlock = flushedBlock(body)
  const parts = [flushedBlock(head), ...Array.from({ length: times }, () => bodyBlock), flushedBlock(tail), FINAL_EMPTY_BLOCK]
  let crc = Bun.hash.crc32(head)
  for (let i = 0; i < times; i++) crc = Bun.hash.crc32(body, crc)
  crc = Bun.hash.crc32(tail, crc)
  return {
    deflated: concat(parts),
    crc32: crc >>> 0,
    size: head.length + body.length * times + tail.length,
    /** Adler-32 of the inflated bytes (zlib's adler32_combine, so the copies are not read N times). */
    adler32(): number {
      let sum = adler32(head)
      const one = adler32(body)
      for (let i = 0; i < times; i++) sum = adler32Combine(sum, one, body.length)
      return adler32Combine(sum, adler32(tail), tail.length)
    },
  }
}

const ADLER_BASE = 65521

function adler32(bytes: Uint8Array): number {
  let a = 1, b = 0
  for (let i = 0; i < bytes.length; i++) { a = (a + bytes[i]!) % ADLER_BASE; b = (b + a) % ADLER_BASE }
  return ((b << 16) | a) >>> 0
}

/** The Adler-32 of two byte runs from the Adler-32 of each and the second one's length (zlib's adler32_combine). */
function adler32Combine(first: number, second: number, secondLength: number): number {
  const rem = secondLength % ADLER_BASE
  let a = first & 0xffff
  let b = (rem * a) % ADLER_BASE
  a += (second & 0xffff) + ADLER_BASE - 1
  b += (first >>> 16) + (second >>> 16) + ADLER_BASE - rem
  a %= ADLER_BASE
  b %= ADLER_BASE
  return ((b << 16) | a) >>> 0
}

export interface ZipEntry { name: string; data: Uint8Array; crc32: number; size: number; method: 0 | 8 }

/** A zip archive of the given entries (stored or already raw-deflated), sizes under 4 GiB. */
export function zipOf(entries: ZipEntry[]): Bytes {
  const locals: Uint8Array[] = []
  const centrals: Uint8Array[] = []
  let offset = 0
  for (const e of entries) {
    const name = utf8(e.name)
    const local = new Uint8Array(30 + name.length)
    const lv = new DataView(local.buffer)
    lv.setUint32(0, 0x04034b50, true); lv.setUint16(4, 20, true); lv.setUint16(8, e.method, true)
    lv.setUint32(14, e.crc32, true); lv.setUint32(18, e.data.length, true); lv.setUint32(22, e.size, true)
    lv.setUint16(26, name.length, true); local.set(name, 30)
    const central = new Uint8Array(46 + name.length)
    const cv = new DataView(central.buffer)
    cv.setUint32(0, 0x02014b50, true); cv.setUint16(4, 20, true); cv.setUint16(6, 20, true); cv.setUint16(10, e.method, true)
    cv.setUint32(16, e.crc32, true); cv.setUint32(20, e.data.length, true); cv.setUint32(24, e.size, true)
    cv.setUint16(28, name.length, true); cv.setUint32(42, offset, true); central.set(name, 46)
    locals.push(local, e.data)
    centrals.push(central)
    offset += local.length + e.data.length
  }
  const centralSize = centrals.reduce((n, c) => n + c.length, 0)
  const end = new Uint8Array(22)
  const ev = new DataView(end.buffer)
  ev.setUint32(0, 0x06054b50, true); ev.setUint16(8, entries.length, true); ev.setUint16(10, entries.length, true)
  ev.setUint32(12, centralSize, true); ev.setUint32(16, offset, true)
  return concat([...locals, ...centrals, end])
}

/**
 * A DOCX (a real one from the `docx` library, every other part kept) whose `word/document.xml`
 * inflates to about `inflatedBytes` of paragraphs: a zip bomb of a few MB.
 */
export async function docxZipBomb(inflatedBytes: number): Promise<Bytes> {
  const parts = unzipSync(await docxSample())
  const paragraph = '<w:p><w:r><w:t>The applicant declares income, assets and liabilities as listed in the schedule.</w:t></w:r></w:p>'
  const body = utf8(paragraph.repeat(Math.ceil((1 << 20) / paragraph.length)))
  const head = utf8('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
  const tail = utf8('</w:body></w:document>')
  const doc = repeatedDeflate(head, body, Math.max(1, Math.round(inflatedBytes / body.length)), tail)
  const entries: ZipEntry[] = Object.entries(parts).map(([name, data]) =>
    name === 'word/document.xml'
      ? { name, data: doc.deflated, crc32: doc.crc32, size: doc.size, method: 8 }
      : { name, data, crc32: Bun.hash.crc32(data) >>> 0, size: data.length, method: 0 })
  return zipOf(entries)
}

/** Assembles a PDF from numbered object bodies (object i+1 = objects[i]); object 1 is the catalog. */
function pdfOf(objects: (string | Uint8Array)[]): Bytes {
  const parts: Uint8Array[] = [utf8('%PDF-1.7\n%\u00e2\u00e3\n')]
  let offset = parts[0]!.length
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(offset)
    const bytes = typeof body === 'string' ? utf8(`${i + 1} 0 obj\n${body}\nendobj\n`) : concat([utf8(`${i + 1} 0 obj\n`), body, utf8('\nendobj\n')])
    parts.push(bytes)
    offset += bytes.length
  })
  const xref = [`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`, ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('')
  parts.push(utf8(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`))
  return concat(parts)
}

/** A PDF of `pages` pages that all share one small content stream ("Page text"): ~50 bytes a page. */
export function manyPagesPdf(pages: number): Bytes {
  const content = 'BT /F1 12 Tf 72 720 Td (Applicant statement page) Tj ET'
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Count ${pages} /Kids [${Array.from({ length: pages }, (_, i) => `${i + 5} 0 R`).join(' ')}] >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ]
  for (let i = 0; i < pages; i++) objects.push('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>')
  return pdfOf(objects)
}

/**
 * A PDF of `pages` pages whose page `bombPage` (1-based) has a FlateDecode content stream inflating
 * to about `inflatedBytes` of text-showing operators; the other pages hold one readable line each.
 */
export function pdfStreamBomb(inflatedBytes: number, pages = 3, bombPage = 2): Bytes {
  const op = 'BT /F1 12 Tf 72 720 Td (AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA) Tj ET\n'
  const body = utf8(op.repeat(Math.ceil((1 << 20) / op.length)))
  const bomb = repeatedDeflate(new Uint8Array(0), body, Math.max(1, Math.round(inflatedBytes / body.length)), new Uint8Array(0))
  // FlateDecode is a zlib stream: a two-byte header, the raw deflate data, the Adler-32 of the inflated bytes.
  const adler = new Uint8Array(4)
  new DataView(adler.buffer).setUint32(0, bomb.adler32())
  const zlibStream = concat([new Uint8Array([0x78, 0xda]), bomb.deflated, adler])
  const objects: (string | Uint8Array)[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Count ${pages} /Kids [${Array.from({ length: pages }, (_, i) => `${4 + 2 * i} 0 R`).join(' ')}] >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]
  for (let p = 1; p <= pages; p++) {
    const contentRef = `${5 + 2 * (p - 1)} 0 R`
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentRef} >>`)
    if (p === bombPage) {
      objects.push(concat([utf8(`<< /Length ${zlibStream.length} /Filter /FlateDecode >>\nstream\n`), zlibStream, utf8('\nendstream')]))
    } else {
      const text = `BT /F1 12 Tf 72 720 Td (Readable page ${p}) Tj ET`
      objects.push(`<< /Length ${text.length} >>\nstream\n${text}\nendstream`)
    }
  }
  return pdfOf(objects)
}

/** A zlib stream (header, deflate data, Adler-32) inflating to `times` copies of `body`, built without holding them. */
export function repeatedZlib(body: Uint8Array, times: number): Bytes {
  const r = repeatedDeflate(new Uint8Array(0), body, times, new Uint8Array(0))
  const adler = new Uint8Array(4)
  new DataView(adler.buffer).setUint32(0, r.adler32())
  return concat([new Uint8Array([0x78, 0xda]), r.deflated, adler])
}

/** A plain text of about `bytes` bytes in short paragraphs (one per line pair). */
export function hugeText(bytes: number): Bytes {
  const para = 'The applicant declares income, assets and liabilities as listed.\n\n'
  const unit = utf8(para.repeat(1024))
  const out = new Uint8Array(Math.floor(bytes / unit.length) * unit.length)
  for (let at = 0; at < out.length; at += unit.length) out.set(unit, at)
  return out
}
