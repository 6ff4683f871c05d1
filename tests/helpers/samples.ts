/**
 * Real sample files, generated in the test run: PDFs with pdf-lib, a DOCX with docx, a PNG with
 * pngjs, CSV/HTML/Markdown/text as bytes, and broken ones (a corrupt PDF, a PDF whose page tree
 * points at a missing page, a CSV cut inside a quoted field, text with invalid UTF-8).
 */
import CFB from 'cfb'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx'
import { PNG } from 'pngjs'
import { call, type Reply, type TestApp } from './app'

/** Bytes backed by a plain ArrayBuffer (what fetch bodies and comparisons take). */
export type Bytes = Uint8Array<ArrayBuffer>

const utf8 = (s: string): Bytes => new TextEncoder().encode(s)

/** A PDF whose page i holds the lines pages[i], drawn with a standard font. */
export async function pdfSample(pages: string[][], opts: { objectStreams?: boolean } = {}): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  for (const lines of pages) {
    const page = pdf.addPage([595, 842])
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 16, size: 11, font }))
  }
  return new Uint8Array(await pdf.save({ useObjectStreams: opts.objectStreams ?? true }))
}

/** A PDF of `n` pages, each with a heading line and a few lines of numbered prose (for the benchmark). */
export async function longPdfSample(n: number): Promise<Bytes> {
  const pages = Array.from({ length: n }, (_, p) => [
    `Section ${p + 1}: applicant statement`,
    ...Array.from({ length: 20 }, (_, l) => `Line ${l + 1} of page ${p + 1}: the applicant declares income, assets and liabilities as listed.`),
  ])
  return pdfSample(pages)
}

/**
 * A 3-page PDF whose page tree names a third page object that does not exist: pdf.js opens it and
 * reads pages 1 and 2, page 3 cannot be read (a partly broken file).
 */
export async function partlyBrokenPdfSample(): Promise<Bytes> {
  const bytes = await pdfSample([['Readable page one'], ['Readable page two'], ['Lost page three']], { objectStreams: false })
  const text = Buffer.from(bytes).toString('latin1')
  const kids = /\/Kids \[ (\d+) 0 R (\d+) 0 R (\d+) 0 R \]/.exec(text)
  if (!kids) throw new Error('unexpected pdf-lib output: no page tree')
  // Same length, so the cross-reference offsets stay right: "N 0 R ]" becomes "9N 0 R]".
  const broken = text.replace(kids[0], kids[0].replace(`${kids[3]} 0 R ]`, `9${kids[3]} 0 R]`))
  if (broken.length !== text.length) throw new Error('length changed')
  return new Uint8Array(Buffer.from(broken, 'latin1'))
}

/** Bytes that start like a PDF and are nothing more (a corrupt PDF). */
export function corruptPdfSample(): Bytes {
  const junk = new Uint8Array(2048)
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) % 251
  return new Uint8Array([...utf8('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<< /Type /Catalog'), ...junk])
}

/** A DOCX with a heading, two paragraphs and a two-row table. */
export async function docxSample(): Promise<Bytes> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] })
  const doc = new Document({
    sections: [{
      children: [
        new Paragraph({ text: 'Applicant Summary', heading: HeadingLevel.HEADING_1 }),
        new Paragraph({ children: [new TextRun('The applicant is '), new TextRun({ text: 'Jane Doe', bold: true }), new TextRun('.')] }),
        new Paragraph('Annual income is 85,000 EUR.'),
        new Table({ rows: [new TableRow({ children: [cell('Asset'), cell('Value')] }), new TableRow({ children: [cell('House'), cell('350,000')] })] }),
      ],
    }],
  })
  return new Uint8Array(await Packer.toBuffer(doc))
}

/** A CSV with a header and three records. */
export const csvSample = () => utf8('name,amount,currency\nAlice,100,EUR\n"Bob, Jr.",250,USD\nCarol,75,GBP\n')

/** A CSV whose last record opens a quote that never closes (cut off): the first records still read. */
export const truncatedCsvSample = () => utf8('name,amount\nAlice,100\nBob,250\nCarol,"75\n')

/** An HTML page with a heading, paragraphs, a list, a table and a script that must not be read. */
export const htmlSample = () => utf8(`<!doctype html><html><head><title>Ignored title</title><style>p{color:red}</style></head>
<body><h1>Property Report</h1><p>The property is a <b>detached</b> house.</p><script>var secret = 1</script>
<ul><li>Built 1990</li><li>Roof renewed 2015</li></ul>
<table><tr><th>Room</th><th>Area</th></tr><tr><td>Kitchen</td><td>20 m2</td></tr></table></body></html>`)

/** A Markdown file with a heading, a paragraph with inline markup, a list and a table. */
export const markdownSample = () => utf8(`# Medical Disclosure

The applicant reports **no** chronic conditions and takes [no medication](https://example.test).

## History

- Appendectomy 2004
- Broken arm 2011

| Test | Result |
|------|--------|
| Blood pressure | 120/80 |
`)

/** Plain text: two paragraphs on page 1, one on page 2 (form feed). */
export const textSample = () => utf8('Employment letter.\nThe applicant works here.\n\nSalary is 5,000 per month.\n\fPage two: signed by HR.\n')

/** Text with an invalid UTF-8 sequence in the middle (a partly broken file). */
export const brokenUtf8TextSample = (): Bytes => new Uint8Array([...utf8('Readable start.\n\nBroken '), 0xff, 0xfe, 0xc3, ...utf8(' middle.\n\nReadable end.\n')])

/** A real 8x8 PNG image. */
export function pngSample(): Bytes {
  const png = new PNG({ width: 8, height: 8 })
  for (let i = 0; i < png.data.length; i += 4) png.data.set([i % 256, 80, 160, 255], i)
  return new Uint8Array(PNG.sync.write(png))
}

/** The leading bytes of a HEIC photo (an ISO-BMFF `ftyp` box of brand heic and a stub holding no image): sniffs as image/heic, cannot be decoded. */
export function heicSample(): Bytes {
  const ftyp = [0, 0, 0, 0x18, ...utf8('ftypheic'), 0, 0, 0, 0, ...utf8('mif1heic')]
  return new Uint8Array([...ftyp, 0, 0, 0, 0x10, ...utf8('meta'), 0, 0, 0, 0, 0, 0, 0, 0])
}

/** A compound file (OLE) as a PowerPoint 97-2003 presentation stores it: a recognised type no adapter reads. */
export function pptSample(): Bytes {
  const cfb = CFB.utils.cfb_new()
  CFB.utils.cfb_add(cfb, '/PowerPoint Document', Buffer.from('presentation stream'))
  CFB.utils.cfb_add(cfb, '/Current User', Buffer.alloc(32))
  return new Uint8Array(CFB.write(cfb, { type: 'buffer' }) as Buffer)
}

/** A real 64x64 all-white PNG image (a blank page). */
export function whitePngSample(): Bytes {
  const png = new PNG({ width: 64, height: 64 })
  png.data.fill(255)
  return new Uint8Array(PNG.sync.write(png))
}

/** A small XLSX workbook (SheetJS): one sheet of a header and two rows. */
export async function xlsxSample(): Promise<Bytes> {
  const XLSX = await import('@e965/xlsx')
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Name', 'Amount'], ['Alice', 100], ['Bob', 250.5]]), 'Ledger')
  return new Uint8Array(XLSX.write(wb, { bookType: 'xlsx', type: 'array' }) as ArrayBuffer)
}

/** Lower-case hex SHA-256 of bytes. */
export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
}

// ---- the upload flow over HTTP, shared by the document, upload and event tests ----


/** A file to upload. */
export interface SampleFile { filename: string; contentType: string; bytes: Bytes; checksum?: boolean }

/** POST .../documents for a file (size and, optionally, checksum from its bytes). */
export function startUpload(app: TestApp, token: string, scenarioId: string, file: SampleFile, extra: Record<string, unknown> = {}): Promise<Reply> {
  return call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, {
    token,
    body: {
      filename: file.filename,
      content_type: file.contentType,
      size_bytes: file.bytes.byteLength,
      ...(file.checksum ? { checksum_sha256: sha256Hex(file.bytes) } : {}),
      ...extra,
    },
  })
}

/**
 * The upload URL of a start reply, aimed at the test app: the deps were wired before the port was
 * known, so the configured base is swapped for the app's address (path and signature unchanged).
 */
export function uploadTarget(app: TestApp, upload: { url: string }): string {
  const u = new URL(upload.url)
  if (u.pathname.startsWith('/v1/uploads/')) return `${app.url}${u.pathname}${u.search}`
  return upload.url
}

/** PUTs bytes to an upload (headers from the start reply unless overridden); no Authorization. */
export async function putBytes(app: TestApp, upload: { url: string; headers: Record<string, string> }, bytes: BodyInit | Bytes, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(uploadTarget(app, upload), { method: 'PUT', headers: { ...upload.headers, ...headers }, body: bytes })
  const text = await res.text()
  let body: unknown
  try { body = text ? JSON.parse(text) : undefined } catch { body = undefined }
  return { status: res.status, headers: res.headers, body, text }
}

/** Polls a document until it leaves `processing` (or `awaiting_upload`), and returns it. */
export async function settled(app: TestApp, token: string, scenarioId: string, documentId: string, timeoutMs = 30_000): Promise<any> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${documentId}`, { token })
    if (r.status !== 200) throw new Error(`GET document: ${r.status} ${r.text}`)
    if (r.body.status !== 'processing' && r.body.status !== 'awaiting_upload') return r.body
    if (Date.now() > until) throw new Error(`document ${documentId} still ${r.body.status}`)
    await Bun.sleep(25)
  }
}

/** Start, PUT, complete; returns the start reply's document and the complete reply. */
export async function uploadAndComplete(app: TestApp, token: string, scenarioId: string, file: SampleFile, completeBody: unknown = {}): Promise<{ doc: any; complete: Reply }> {
  const start = await startUpload(app, token, scenarioId, file)
  if (start.status !== 201) throw new Error(`start upload: ${start.status} ${start.text}`)
  const put = await putBytes(app, start.body.upload, file.bytes)
  if (put.status !== 204) throw new Error(`PUT: ${put.status} ${put.text}`)
  const complete = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`, { token, body: completeBody })
  return { doc: start.body, complete }
}

/** Every block of a document, walking the pages. */
export async function allBlocks(app: TestApp, token: string, scenarioId: string, documentId: string, limit = 200): Promise<any[]> {
  const out: any[] = []
  let cursor: string | null = null
  do {
    const r: Reply = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${documentId}/blocks?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token })
    if (r.status !== 200) throw new Error(`blocks: ${r.status} ${r.text}`)
    out.push(...r.body.items)
    cursor = r.body.next_cursor
  } while (cursor)
  return out
}

/** Every file under a directory (relative paths), for "no bytes left behind" checks. */
export async function filesUnder(dir: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises')
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true })
    return entries.filter((e) => e.isFile()).map((e) => `${e.parentPath}/${e.name}`.slice(dir.length + 1)).sort()
  } catch { return [] }
}
