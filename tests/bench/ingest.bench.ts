/**
 * Documents and case events:
 *  1. Ingestion speed: pages per second for a 100-page PDF generated with pdf-lib, for the PDF
 *     adapter alone (parse + block cutting, in this process) and end to end through a running
 *     service (complete -> document_ingestion job -> ready); each other adapter (spreadsheets,
 *     Word 97-2003, RTF, ODT, encoded text) beside its parsing library alone.
 *     Beside them, each newer adapter next to its library alone: a CCITT G4 fax TIFF (utif2's decode
 *     against the adapter's walk + decode + PNG for OCR, recognition itself excluded), a HEIC photo
 *     (heic-decode against the adapter's header check + decode + PNG), a ZIP bundle (fflate's
 *     unzipSync against the adapter's bounded reading of every member) and an Outlook MSG
 *     (msgreader's properties and attachments against the adapter). Library and adapter runs are
 *     interleaved, and timed in CPU time as well as wall time: on a shared machine another
 *     process's load falls on both alike, and the verdict (adapter >= 0.8 of the library alone) is
 *     read in CPU time. The document type and checks mined at ingestion (document-findings.ts)
 *     against the PDF adapter alone. Then every file (the PDF, each of the above, the TIFF and HEIC
 *     with an OCR engine in this process too) end to end through a running service (complete ->
 *     ready, seen on the case's event stream) against the same adapter run on it in this process,
 *     interleaved (target >= 0.8), with the service's stage times (document ingestion stages).
 *  2. 1,000 concurrent SSE streams held by one service process: the p50/p99/max delay from the
 *     commit of a case event (written by this, another, process) to its arrival on every stream.
 *
 *   bun tests/bench/ingest.bench.ts                          # embedded database
 *   DATABASE_URL=postgres://... bun tests/bench/ingest.bench.ts   # PostgreSQL (LISTEN/NOTIFY)
 *   BENCH_STREAMS=1000 BENCH_EVENTS=20 BENCH_PAGES=100 (defaults)
 *   BENCH_ADAPTERS_ONLY=1: the adapters alone, no service started
 *   BENCH_E2E_ROUNDS=5: warm documents per file end to end; BENCH_E2E_FILTER=regex: only those files
 *   end to end; BENCH_STREAMS=0: no SSE part
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '../helpers/database'
import { runCli, spawnService } from '../helpers/service-process'
import { longPdfSample } from '../helpers/samples'
import { ADAPTERS } from '../../server/documents/adapters'
import { toBlocks } from '../../server/documents/blocks'
import { openDatabase } from '../../server/db/connect'
import { appendCaseEvent } from '../../server/events/log'

// Bun's fetch keeps at most 256 requests open at once unless told otherwise at process start.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const self = Bun.spawn(['bun', import.meta.path], { env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }, stdout: 'inherit', stderr: 'inherit' })
  process.exit(await self.exited)
}

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20)
const PAGES = Number(process.env.BENCH_PAGES ?? 100)
const now = () => performance.timeOrigin + performance.now()
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
const ms = (n: number) => `${n.toFixed(1)} ms`

// ---- 1a. the PDF adapter alone ----
const pdf = await longPdfSample(PAGES)
console.log(`pdf: ${PAGES} pages, ${(pdf.byteLength / 1024).toFixed(0)} KiB`)
await ADAPTERS.pdf(pdf) // warm-up (module load, font tables)
const runs: number[] = []
let blockCount = 0
for (let i = 0; i < 5; i++) {
  const t0 = now()
  const extraction = await ADAPTERS.pdf(pdf)
  blockCount = toBlocks(crypto.randomUUID(), extraction).length
  runs.push(now() - t0)
}
runs.sort((a, b) => a - b)
const median = runs[2]!
console.log(`adapter: median ${ms(median)} per ${PAGES}-page PDF (${blockCount} blocks) = ${(PAGES / (median / 1000)).toFixed(0)} pages/s`)

// ---- 1a. beside it: pdf.js text in drawing order (the adapter before geometry-aware assembly,
// forms and CMaps: text items joined as drawn), and poppler's pdftotext -layout when installed ----
{
  const { getDocumentProxy } = await import('unpdf')
  const { pageBlocks } = await import('../../server/documents/adapters/pdf')
  const plain = async () => {
    const doc = await getDocumentProxy(new Uint8Array(pdf), { verbosity: 0, stopAtErrors: false })
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n)
      const content = await page.getTextContent()
      pageBlocks((content.items as { str?: string; hasEOL?: boolean }[]).map((i) => (i.str ?? '') + (i.hasEOL ? '\n' : '')).join(''))
      page.cleanup()
    }
    await doc.loadingTask.destroy()
  }
  await plain()
  // Interleaved, and in CPU time too, so a busy machine slows both alike.
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
  const wall = { plain: [] as number[], adapter: [] as number[] }
  const used = { plain: [] as number[], adapter: [] as number[] }
  for (let i = 0; i < 7; i++) {
    for (const [name, run] of [['plain', plain], ['adapter', () => ADAPTERS.pdf(pdf)]] as const) {
      const t0 = now()
      const c0 = cpu()
      await run()
      used[name].push(cpu() - c0)
      wall[name].push(now() - t0)
    }
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[3]!
  const rate = (msPerDoc: number) => PAGES / (msPerDoc / 1000)
  console.log(`pdf.js text in drawing order (the adapter before assembly, forms and CMaps): ${rate(mid(wall.plain)).toFixed(0)} pages/s (${rate(mid(used.plain)).toFixed(0)} per CPU second); interleaved with it the adapter: ${rate(mid(wall.adapter)).toFixed(0)} pages/s (${rate(mid(used.adapter)).toFixed(0)} per CPU second) = ${(mid(used.plain) / mid(used.adapter)).toFixed(2)} of it in CPU time`)
  const pdftotext = Bun.which('pdftotext')
  if (!pdftotext) console.log('pdftotext: not installed (poppler-utils), not compared')
  else {
    const popplerRuns: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = now()
      const proc = Bun.spawn([pdftotext, '-layout', '-', '-'], { stdin: pdf, stdout: 'pipe' })
      await new Response(proc.stdout).arrayBuffer()
      await proc.exited
      popplerRuns.push(now() - t0)
    }
    popplerRuns.sort((a, b) => a - b)
    console.log(`pdftotext -layout (a process per file): median ${ms(popplerRuns[2]!)} = ${(PAGES / (popplerRuns[2]! / 1000)).toFixed(0)} pages/s`)
  }
}

// ---- 1a'. a 50-page tabular PDF (a loss run: 40 rows of 5 columns a page, no rules) ----
{
  const { PDFDocument, StandardFonts } = await import('pdf-lib')
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const x = [40, 110, 250, 370, 470]
  for (let p = 0; p < 50; p++) {
    const page = doc.addPage([612, 792])
    page.drawText(`Loss run page ${p + 1}`, { x: 40, y: 760, size: 12, font })
    const rows = [['Year', 'Claim', 'Cause', 'Status', 'Incurred'], ...Array.from({ length: 40 }, (_, r) => [`${2000 + (r % 25)}`, `C-${p}-${r}`, ['Fire', 'Water', 'Theft', 'Wind'][r % 4]!, r % 3 ? 'Closed' : 'Open', `${(r * 731 + p * 97) % 90_000}.00`])]
    rows.forEach((row, i) => row.forEach((v, c) => page.drawText(v, { x: x[c]!, y: 730 - i * 17, size: 9, font })))
  }
  const tabular = new Uint8Array(await doc.save())
  await ADAPTERS.pdf(tabular)
  const truns: number[] = []
  let rows = 0
  for (let i = 0; i < 3; i++) {
    const t0 = now()
    const e = await ADAPTERS.pdf(tabular)
    truns.push(now() - t0)
    rows = e.pages.reduce((n, pg) => n + pg.segments.filter((sg) => sg.kind === 'table_row').length, 0)
  }
  truns.sort((a, b) => a - b)
  console.log(`tabular pdf adapter: median ${ms(truns[1]!)} per 50 pages (${rows} table rows) = ${(50 / (truns[1]! / 1000)).toFixed(0)} pages/s, ${(rows / (truns[1]! / 1000)).toFixed(0)} rows/s`)
}

// ---- 1b. each of the other adapters beside its library alone (interleaved, median of 5 after a warm-up) ----
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
/** One adapter's figures: its file (for the end-to-end runs) and the library's and adapter's medians. */
interface Beside { label: string; units: number; unit: string; library: () => unknown; run: () => Promise<unknown>; file?: { filename: string; contentType: string; bytes: Uint8Array }; lib: { wall: number; cpu: number }; adapter: { wall: number; cpu: number } }
const besides: Beside[] = []
/** Image files read by OCR through the service: end to end they are compared with the adapter and a real OCR engine in this process. */
const ocrFiles: { label: string; file: { filename: string; contentType: string; bytes: Uint8Array }; units: number; unit: string }[] = []
/** Times `library` (the parsing library alone) and `adapter` (the whole adapter: bounds, the library, segments, blocks), interleaved. */
async function besideLibrary(label: string, units: number, unit: string, library: () => unknown, adapter: () => Promise<unknown>, file?: Beside['file'], rounds = 5) {
  await library()
  await adapter()
  const t = { lib: { wall: [] as number[], cpu: [] as number[] }, adapter: { wall: [] as number[], cpu: [] as number[] } }
  for (let i = 0; i < rounds; i++) {
    for (const [name, f] of [['lib', library], ['adapter', adapter]] as const) {
      const w0 = now()
      const c0 = cpuMs()
      await f()
      t[name].cpu.push(cpuMs() - c0)
      t[name].wall.push(now() - w0)
    }
  }
  const lib = { wall: mid(t.lib.wall), cpu: mid(t.lib.cpu) }
  const ad = { wall: mid(t.adapter.wall), cpu: mid(t.adapter.cpu) }
  besides.push({ label, units, unit, library, run: adapter, file, lib, adapter: ad })
  const rate = (ms: number) => (units / (ms / 1000)).toFixed(units < 10 ? 1 : 0)
  console.log(`${label}: library alone ${ms(lib.wall)} = ${rate(lib.wall)} ${unit}/s; adapter ${ms(ad.wall)} = ${rate(ad.wall)} ${unit}/s; in CPU time ${ms(lib.cpu)} and ${ms(ad.cpu)}: the adapter at ${(lib.cpu / ad.cpu).toFixed(2)} of the library alone (wall ${(lib.wall / ad.wall).toFixed(2)}) ${lib.cpu / ad.cpu >= 0.8 ? 'PASS' : 'MISS'}`)
}
const LIMITS = { maxPages: 2000, maxInflatedBytes: 128 * 1_048_576, maxBlocks: 1_000_000 }
const adapterBlocks = async (name: keyof typeof ADAPTERS, bytes: Uint8Array) => toBlocks(crypto.randomUUID(), await ADAPTERS[name](bytes, LIMITS)).length

// Spreadsheets (SheetJS): a 10,000-row rent roll as XLSX, XLS (BIFF8) and ODS.
{
  const XLSX = await import('@e965/xlsx')
  const ROWS = Number(process.env.BENCH_XLSX_ROWS ?? 10_000)
  const rows: unknown[][] = [['Unit', 'Tenant', 'Lease start', 'Monthly rent']]
  for (let i = 0; i < ROWS; i++) rows.push([`U${i}`, `Tenant ${i}`, { t: 'n', v: 43831 + (i % 1500), z: 'yyyy-mm-dd' }, 500 + (i % 997) + 0.25])
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), 'Rent roll')
  for (const bookType of ['xlsx', 'biff8', 'ods'] as const) {
    const bytes = new Uint8Array(XLSX.write(wb, { bookType, type: 'array' }) as ArrayBuffer)
    const ext = bookType === 'biff8' ? 'xls' : bookType
    const contentType = { xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', xls: 'application/vnd.ms-excel', ods: 'application/vnd.oasis.opendocument.spreadsheet' }[ext]
    await besideLibrary(`spreadsheet adapter, ${ROWS}-row ${ext} (${(bytes.byteLength / 1024).toFixed(0)} KiB)`, ROWS, 'rows',
      () => XLSX.read(Buffer.from(bytes), { type: 'buffer', dense: true, cellNF: true, cellText: false }),
      () => adapterBlocks('spreadsheet', bytes), { filename: `rent-roll.${ext}`, contentType, bytes })
    if (ext === 'xlsx') {
      // The type and checks mined at ingestion over a large table (its facts: every column's first, last, sum, ...).
      const { findDocumentFindings } = await import('../../server/evaluation/document-findings')
      const blocks = toBlocks(crypto.randomUUID(), await ADAPTERS.spreadsheet(bytes, LIMITS))
      const xs: number[] = []
      for (let i = 0; i < 5; i++) { const c0 = cpuMs(); findDocumentFindings({ id: 'd', filename: 'rent-roll.xlsx', content_type: contentType }, blocks); xs.push(cpuMs() - c0) }
      const adapterCpu = besides[besides.length - 1]!.adapter.cpu
      const share = mid(xs) / adapterCpu
      console.log(`document type + checks over the ${ROWS}-row xlsx's ${blocks.length} blocks: ${ms(mid(xs))} CPU, ${(share * 100).toFixed(0)}% of the adapter alone (${ms(adapterCpu)} CPU) ${share <= 0.1 ? 'PASS' : 'MISS'} (at most 10%)`)
    }
  }
}

// Word 97-2003 (word-extractor alone vs the adapter) on the largest fixture shipped with word-extractor 0.1.4.
{
  const { default: WordExtractor } = await import('word-extractor')
  const { wordFixture } = await import('../helpers/word-processing')
  const doc = await wordFixture('test06.doc')
  await besideLibrary(`doc adapter, word-extractor fixture (${(doc.byteLength / 1024).toFixed(0)} KiB)`, 1, 'documents',
    () => new WordExtractor().extract(Buffer.from(doc)).then((d) => d.getBody()),
    () => adapterBlocks('doc', doc), { filename: 'test06.doc', contentType: 'application/msword', bytes: doc })
}

// RTF (rtf-stream-parser's tokenizer alone vs the adapter): 2,000 paragraphs and a 2,000-row table.
{
  const { Tokenize } = await import('rtf-stream-parser/dist/src/tokenize')
  const parts = ['{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0 Arial;}}']
  for (let i = 0; i < 2000; i++) parts.push(`\\pard Paragraph ${i} of the proposal, Caf\\'e9 \\u8364? ${i * 7}.\\par`)
  for (let i = 0; i < 2000; i++) parts.push(`\\trowd\\cellx3000\\cellx6000\\pard\\intbl Item ${i}\\cell ${i * 13}\\cell\\row`)
  const rtf = new TextEncoder().encode(parts.join('\n') + '}')
  await besideLibrary(`rtf adapter, 4,000 blocks (${(rtf.byteLength / 1024).toFixed(0)} KiB)`, 4000, 'blocks',
    () => { let n = 0; const t = new Tokenize(); t.push = () => { n++; return true }; t._transform(Buffer.from(rtf), undefined, () => {}); t._flush(() => {}); return n },
    () => adapterBlocks('rtf', rtf), { filename: 'proposal.rtf', contentType: 'application/rtf', bytes: rtf })
}

// ODT (fflate + htmlparser2 alone vs the adapter, which also cuts blocks like HTML): 2,000 paragraphs and a 2,000-row table.
{
  const { zipSync, strToU8, unzipSync } = await import('fflate')
  const { Parser } = await import('htmlparser2')
  const body: string[] = []
  for (let i = 0; i < 2000; i++) body.push(`<text:p>Paragraph ${i} of the survey, ${i * 7} square metres.</text:p>`)
  body.push('<table:table>')
  for (let i = 0; i < 2000; i++) body.push(`<table:table-row><table:table-cell><text:p>Item ${i}</text:p></table:table-cell><table:table-cell><text:p>${i * 13}</text:p></table:table-cell></table:table-row>`)
  body.push('</table:table>')
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="o" xmlns:text="t" xmlns:table="b"><office:body><office:text>${body.join('')}</office:text></office:body></office:document-content>`
  const odt = zipSync({ mimetype: [strToU8('application/vnd.oasis.opendocument.text'), { level: 0 }], 'content.xml': strToU8(content) })
  await besideLibrary(`odt adapter, 4,000 blocks (${(odt.byteLength / 1024).toFixed(0)} KiB)`, 4000, 'blocks',
    () => { let n = 0; const p = new Parser({ onopentag: () => { n++ } }, { xmlMode: true }); p.write(new TextDecoder().decode(unzipSync(odt)['content.xml'])); p.end(); return n },
    () => adapterBlocks('odt', odt), { filename: 'survey.odt', contentType: 'application/vnd.oasis.opendocument.text', bytes: odt })
}

// Encoded text (iconv-lite + chardet alone vs the text adapter): 1 MiB of Shift-JIS without a declared charset.
{
  const iconv = (await import('iconv-lite')).default
  const chardet = (await import('chardet')).default
  const line = '火災保険 申込書 保険契約者 東京港 株式会社 の 本社ビル です。 Sum insured: 2500000\n\n'
  const text = new Uint8Array(iconv.encode(line.repeat(Math.ceil(1_048_576 / (line.length * 2))), 'shift_jis'))
  await besideLibrary(`text adapter, detected Shift-JIS (${(text.byteLength / 1024).toFixed(0)} KiB)`, text.byteLength / 1024, 'KiB',
    () => iconv.decode(Buffer.from(text), chardet.analyse(text.subarray(0, 256 * 1024))[0]!.name),
    () => adapterBlocks('text', text), { filename: 'notes.txt', contentType: 'text/plain', bytes: text })
}

// ---- 1c. newer adapters beside their libraries alone ----
{
  const { default: UTIF } = await import('utif2')
  const { faxTiff } = await import('../helpers/tiff')
  const { textPage } = await import('../helpers/scans')
  const { heicOf, heifEncoder } = await import('../helpers/heic')
  const { zipOf } = await import('../helpers/hostile-files')
  const { deflateSync, unzipSync } = await import('fflate')
  // Recognition excluded: an engine that only decodes what the adapter hands it (as OCR would).
  const decodeOnly = { maxPixels: 40_000_000, pdfPage: async () => ({ segments: [], outcome: 'blank' as const }), image: async (b: Uint8Array | (() => Uint8Array | Promise<Uint8Array>)) => { if (typeof b === 'function') await b(); return { segments: [], outcome: 'blank' as const } } }
  const opts = { maxPages: 2000, maxInflatedBytes: 128 * 1_048_576, ocr: decodeOnly }

  const FRAMES = 5
  const tiff = faxTiff(Array.from({ length: FRAMES }, (_, i) => textPage([`Fax page ${i + 1}`, ...Array.from({ length: 20 }, (_, l) => `Line ${l} of the schedule, amount ${l * 1234}.00`)])), { compression: 4 })
  await besideLibrary(`tiff adapter (CCITT G4, ${FRAMES} frames of 1275x1650; utif2 decode + RGBA against walk + decode + PNG for OCR)`, FRAMES, 'frames', () => {
    const buf = tiff.buffer.slice(tiff.byteOffset, tiff.byteOffset + tiff.byteLength) as ArrayBuffer
    for (const ifd of UTIF.decode(buf)) { UTIF.decodeImage(buf, ifd); UTIF.toRGBA8(ifd) }
  }, () => ADAPTERS.image(tiff, opts), undefined, 3)
  ocrFiles.push({ label: `fax TIFF, CCITT G4, ${FRAMES} frames of 1275x1650`, file: { filename: 'fax.tif', contentType: 'image/tiff', bytes: tiff }, units: FRAMES, unit: 'pages' })

  if (!heifEncoder()) console.log('heic: skipped (no heif-enc to write a HEIC)')
  else {
    const { default: decode } = await import('heic-decode')
    const heic = heicOf(textPage(['A photographed page', 'Insured value: 640,000.00']))
    await besideLibrary('heic adapter (1275x1650; heic-decode against header check + decode + PNG for OCR)', 1, 'images', () => decode({ buffer: heic }), () => ADAPTERS.image(heic, opts))
    ocrFiles.push({ label: 'HEIC photo of a page, 1275x1650', file: { filename: 'photo.heic', contentType: 'image/heic', bytes: heic }, units: 1, unit: 'pages' })
  }

  const MEMBERS = 40
  const member = new TextEncoder().encode('Schedule line with an amount of 1,234.00\n'.repeat(2000))
  const bundle = zipOf(Array.from({ length: MEMBERS }, (_, i) => ({ name: `folder/file-${i}.txt`, data: deflateSync(member), crc32: Bun.hash.crc32(member) >>> 0, size: member.length, method: 8 as const })))
  const mb = (MEMBERS * member.length) / 1_048_576
  await besideLibrary(`zip adapter (${MEMBERS} members, ${mb.toFixed(1)} MiB inflated; fflate unzipSync against the bounded reading of every member)`, mb, 'MiB',
    () => unzipSync(bundle), () => ADAPTERS.zip(bundle, { ...opts, maxAttachments: 1000, maxAttachmentBytes: 512 * 1_048_576 }),
    { filename: 'bundle.zip', contentType: 'application/zip', bytes: bundle })

  // An Outlook message: a 2,000-paragraph plain body and a CSV attachment (msgreader alone: its properties and the attachment's bytes).
  const { default: MsgReader } = await import('@kenjiuno/msgreader')
  const { outlookMessage } = await import('../helpers/msg')
  const body = Array.from({ length: 2000 }, (_, i) => `Paragraph ${i} of the broker's covering note: the premium of ${i * 13}.00 is due quarterly.`).join('\r\n\r\n')
  const csv = new TextEncoder().encode(['Unit,Tenant,Rent', ...Array.from({ length: 2000 }, (_, i) => `U${i},Tenant ${i},${500 + i}.00`)].join('\n'))
  const msg = outlookMessage({ subject: 'Submission for Harbour Holdings', from: { name: 'A Broker', email: 'broker@example.test' }, to: { name: 'Underwriting', email: 'uw@example.test' }, body, attachments: [{ filename: 'rent-roll.csv', contentType: 'text/csv', content: csv }] })
  await besideLibrary(`msg adapter (${(msg.byteLength / 1024).toFixed(0)} KiB, 2,000 paragraphs and an attachment; msgreader alone against the adapter)`, 1, 'messages', () => {
    const reader = new MsgReader(msg.buffer.slice(msg.byteOffset, msg.byteOffset + msg.byteLength) as ArrayBuffer)
    const data = reader.getFileData()
    for (const a of data.attachments ?? []) reader.getAttachment(a)
  }, () => adapterBlocks('msg', msg), { filename: 'submission.msg', contentType: 'application/vnd.ms-outlook', bytes: msg })
}

// ---- 1d. the document type and checks mined at ingestion, against the PDF adapter alone ----
{
  const { findDocumentFindings } = await import('../../server/evaluation/document-findings')
  const blocks = toBlocks(crypto.randomUUID(), await ADAPTERS.pdf(pdf))
  const xs: number[] = []
  for (let i = 0; i < 7; i++) { const c0 = cpuMs(); findDocumentFindings({ id: 'd', filename: 'long.pdf', content_type: 'application/pdf' }, blocks); xs.push(cpuMs() - c0) }
  const share = mid(xs) / median
  console.log(`document type + checks over the ${PAGES}-page PDF's ${blocks.length} blocks: ${ms(mid(xs))} CPU, ${(share * 100).toFixed(2)}% of the adapter alone (${median.toFixed(0)} ms) ${share <= 0.1 ? 'PASS' : 'MISS'} (at most 10%)`)
}

if (process.env.BENCH_ADAPTERS_ONLY) process.exit(0)

// ---- a running service ----
const database = await createTestDatabase()
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
const env = { DATABASE_URL: database.url, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }
await runCli(['migrate'], env)
const tenant = (await runCli(['tenant', 'create', '--slug', 'bench'], env)).json
const key = (await runCli(['api-key', 'create', '--tenant', 'bench', '--name', 'bench', '--scopes', 'scenarios:read,scenarios:write'], env)).json.key as string
const svc = await spawnService(['bun', 'server/main.ts'], { ...env, SVC_LOG_LEVEL: 'debug' })
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${svc.url}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: await res.json().catch(() => undefined) as any }
}
let exitCode = 0
try {
  const scenario = (await api('POST', '/v1/scenarios', { name: 'Bench case' })).body.id as string

  // ---- 1e. end to end against the adapter alone ----
  // Each file through the service (complete -> job claim -> parser process -> blocks, status, type
  // and checks -> ready) beside the same adapter function run on the same bytes in this process,
  // interleaved; median of BENCH_E2E_ROUNDS warm documents (after one warm-up), target >= 0.8.
  // The service logs each document's stages at debug level (document ingestion stages), so the
  // fixed cost per document is broken down: before the job's prepare (complete, enqueue, NOTIFY,
  // claim, row read), inside it, and after the handler (commit, job finish, this poll).
  // TIFF and HEIC: through the service each page is also recognised by OCR, so the adapter alone
  // runs with the same OCR engine in this process (BENCH_OCR_E2E=0 leaves them out).
  // `ready` is seen on the case's event stream (its document.status event, sent at commit), not by
  // polling: a GET every few milliseconds took CPU from the parse on a 2-core machine.
  const settledAt = new Map<string, (at: number) => void>()
  const events = new AbortController()
  void (async () => {
    const res = await fetch(`${svc.url}/v1/scenarios/${scenario}/events`, { headers: { authorization: `Bearer ${key}` }, signal: events.signal })
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buf = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buf += value
      for (let m; (m = /event: document\.status\ndata: (.*)\n\n/.exec(buf)); ) {
        buf = buf.slice(m.index + m[0].length)
        const data = JSON.parse(m[1]!) as { document_id: string; status: string }
        if (data.status !== 'processing') settledAt.get(data.document_id)?.(now())
      }
    }
  })().catch(() => {})
  await Bun.sleep(200)
  const endToEnd = async (file: { filename: string; contentType: string; bytes: Uint8Array }) => {
    const start = await api('POST', `/v1/scenarios/${scenario}/documents`, { filename: file.filename, content_type: file.contentType, size_bytes: file.bytes.byteLength })
    if (start.status !== 201) throw new Error(`create ${file.filename}: ${start.status} ${JSON.stringify(start.body)}`)
    const put = new URL(start.body.upload.url)
    await fetch(`${svc.url}${put.pathname}${put.search}`, { method: 'PUT', headers: start.body.upload.headers, body: file.bytes as Uint8Array<ArrayBuffer> })
    const settled = new Promise<number>((resolve) => settledAt.set(start.body.id, resolve))
    const t0 = now()
    const done = await api('POST', `/v1/scenarios/${scenario}/documents/${start.body.id}/complete`, {})
    if (done.status !== 202) throw new Error(`complete: ${done.status}`)
    const seen = await Promise.race([settled, Bun.sleep(120_000).then(() => { throw new Error(`${file.filename}: no status event in 120 s`) })])
    settledAt.delete(start.body.id)
    const doc = (await api('GET', `/v1/scenarios/${scenario}/documents/${start.body.id}`)).body
    // The document's stage line (written before its commit; wait a tick for the log flush). Then
    // wait for the documents found inside it (a ZIP's members, an email's attachments), so the next
    // round does not queue behind them.
    await Bun.sleep(20)
    while ((await api('GET', `/v1/scenarios/${scenario}/documents?status=processing&limit=1`)).body?.items?.length) await Bun.sleep(20)
    const line = svc.output().split('\n').find((l) => l.includes('document ingestion stages') && l.includes(start.body.id))
    const stages: Record<string, number> = {}
    if (line) {
      const f = JSON.parse(line) as Record<string, unknown>
      for (const [k, v] of Object.entries(f)) if (k.endsWith('_ms') && typeof v === 'number') stages[k.slice(0, -3)] = v
      stages.before_prepare = (f.started_at as number) - t0
      stages.after_handler = seen - (f.ended_at as number)
    }
    return { ms: seen - t0, doc, stages }
  }
  const ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 5)
  const STAGES = ['before_prepare', 'policy_read', 'parser_wait', 'spool_write', 'parser_read', 'parser_extract', 'parser_after', 'reply_transfer', 'parser_release', 'attachments_read', 'typing', 'handler_start', 'handler_lock', 'blocks_write', 'status_write', 'task_finish', 'findings', 'after_parsed', 'after_handler']
  const pdfFile = { filename: 'long.pdf', contentType: 'application/pdf', bytes: pdf }
  const first = await endToEnd(pdfFile)
  console.log(`end to end, first document: complete -> ${first.doc.status} in ${ms(first.ms)} = ${(PAGES / (first.ms / 1000)).toFixed(0)} pages/s`)
  const targets: { label: string; file: { filename: string; contentType: string; bytes: Uint8Array }; run: () => Promise<unknown>; units: number; unit: string; rounds?: number }[] = [
    { label: `${PAGES}-page PDF`, file: pdfFile, run: () => adapterBlocks('pdf', pdf), units: PAGES, unit: 'pages' },
    ...besides.filter((b) => b.file).map((b) => ({ label: b.label.replace(/ adapter/, ''), file: b.file!, run: b.run, units: b.units, unit: b.unit }))]
  // Images: the adapter with the service's OCR engine (the configuration's defaults) in this process.
  if (process.env.BENCH_OCR_E2E !== '0') {
    const { OcrRecognizer } = await import('../../server/documents/ocr/engine')
    const { loadConfig } = await import('../../server/config')
    const p = loadConfig({ ...process.env, SVC_SECRET_KEY: env.SVC_SECRET_KEY }).parse
    const ocrLimits = { maxPixels: p.ocrMaxPixels, pageTimeoutMs: p.ocrPageTimeoutMs, maxPages: p.ocrMaxPages, engine: p.ocrEngine, parallel: p.ocrConcurrency }
    const recognizer = new OcrRecognizer(ocrLimits)
    for (const o of ocrFiles) {
      targets.push({ ...o, rounds: Math.min(ROUNDS, 2), run: async () => {
        const docOcr = recognizer.forDocument()
        const engine = { maxPixels: ocrLimits.maxPixels, parallel: ocrLimits.parallel, image: (b: Parameters<typeof docOcr.image>[0]) => docOcr.image(b), pdfPage: (d: Parameters<typeof docOcr.pdfPage>[0], n: number) => docOcr.pdfPage(d, n) }
        return toBlocks(crypto.randomUUID(), await ADAPTERS.image(o.file.bytes, { ...LIMITS, ocr: engine })).length
      } })
    }
  }
  const selected = targets.filter((t) => !process.env.BENCH_E2E_FILTER || new RegExp(process.env.BENCH_E2E_FILTER, 'i').test(t.label))
  const rows: string[] = []
  for (const t of selected) {
    const e2eRuns: number[] = []
    const adapterRuns: number[] = []
    const stageRuns: Record<string, number[]> = {}
    let status = ''
    let blocks = 0
    for (let i = 0; i <= (t.rounds ?? ROUNDS); i++) {
      const w0 = now()
      await t.run()
      const adapterMs = now() - w0
      const r = await endToEnd(t.file)
      status = r.doc.status
      blocks = r.doc.block_count ?? 0
      if (i === 0) continue // warm-up
      adapterRuns.push(adapterMs)
      e2eRuns.push(r.ms)
      for (const [k, v] of Object.entries(r.stages)) (stageRuns[k] ??= []).push(v)
    }
    const [ad, e2e] = [mid(adapterRuns), mid(e2eRuns)]
    if (status !== 'ready' && status !== 'ready_degraded') console.log(`  ${t.label}: ended ${status}`)
    const ratio = ad / e2e
    const st = Object.fromEntries(STAGES.filter((k) => stageRuns[k]).map((k) => [k, mid(stageRuns[k]!)]))
    const fixed = e2e - (st.parser_extract ?? 0)
    console.log(`end to end, ${t.label} (${blocks} blocks, ${status}): median ${ms(e2e)} = ${(t.units / (e2e / 1000)).toFixed(t.units < 10 ? 1 : 0)} ${t.unit}/s; adapter alone in between ${ms(ad)}: end to end at ${ratio.toFixed(2)} of the adapter alone ${ratio >= 0.8 ? 'PASS' : 'MISS'}; around the parse ${ms(fixed)}`)
    console.log(`  stages (medians, ms): ${Object.entries(st).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`)
    rows.push(`| ${t.label} | ${blocks} | ${ms(ad)} | ${ms(e2e)} | ${ratio.toFixed(2)} | ${ms(fixed)} | ${(st.blocks_write ?? 0).toFixed(1)} | ${(st.reply_transfer ?? 0).toFixed(1)} | ${(st.findings ?? 0).toFixed(1)} |`)
  }
  console.log(['| file | blocks | adapter alone (wall) | end to end (wall) | end to end / adapter | around the parse | blocks write | reply transfer | type + checks |', '|---|---|---|---|---|---|---|---|---|', ...rows].join('\n'))

  events.abort()

  // ---- 2. 1,000 concurrent streams ----
  // The events come from a second process; the embedded database belongs to the service process alone.
  if (STREAMS === 0) console.log('streams: skipped (BENCH_STREAMS=0)')
  else if (!database.url) console.log('streams: skipped on the embedded database (events are written by a second process); set DATABASE_URL')
  else {
    const received: number[][] = Array.from({ length: EVENTS + 1 }, () => [])
    const commitAt: number[] = []
    let ready = 0
    const aborts: AbortController[] = []
    const readers = Array.from({ length: STREAMS }, async () => {
      const abort = new AbortController()
      aborts.push(abort)
      const res = await fetch(`${svc.url}/v1/scenarios/${scenario}/events`, { headers: { authorization: `Bearer ${key}`, 'last-event-id': '1000000' }, signal: abort.signal })
      if (res.status !== 200) throw new Error(`stream: ${res.status}`)
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
      let buf = ''
      let counted = false
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buf += value
          if (!counted && buf.includes('retry:')) { counted = true; ready++ }
          for (let m; (m = /id: (\d+)\nevent: bench\.tick\ndata: (.*)\n\n/.exec(buf)); ) {
            const i = JSON.parse(m[2]!).i as number
            received[i]!.push(now())
            buf = buf.slice(m.index + m[0].length)
          }
        }
      } catch { /* aborted at the end */ }
    })
    const openStart = now()
    while (ready < STREAMS) {
      await Bun.sleep(20)
      if (now() - openStart > 60_000) throw new Error(`only ${ready} of ${STREAMS} streams opened`)
    }
    console.log(`streams: ${STREAMS} open in ${ms(now() - openStart)}`)

    // Events are written by this process (another process than the service), each in its own commit;
    // the counter offsets Last-Event-ID: the streams above asked for ids after 1,000,000, so bring the
    // case's sequence there first.
    const db = await openDatabase({ databaseUrl: database.url, dataDir })
    await db.sql`update case_event_counters set last_seq = 1000000 where scenario_id = ${scenario}`
    for (let i = 1; i <= EVENTS; i++) {
      await db.sql.begin((tx) => appendCaseEvent(tx, { tenantId: tenant.id, scenarioId: scenario, type: 'bench.tick', data: { i } }))
      commitAt[i] = now()
      await Bun.sleep(100)
    }
    const waitUntil = now() + 30_000
    while (received.slice(1).some((r) => r.length < STREAMS) && now() < waitUntil) await Bun.sleep(20)
    const delays: number[] = []
    let missing = 0
    for (let i = 1; i <= EVENTS; i++) {
      missing += STREAMS - received[i]!.length
      for (const t of received[i]!) delays.push(Math.max(0, t - commitAt[i]!))
    }
    delays.sort((a, b) => a - b)
    console.log(`delivery over ${STREAMS} streams x ${EVENTS} events (${db.embedded ? 'embedded database, in-process bus' : 'PostgreSQL, LISTEN/NOTIFY'}): p50 ${ms(pct(delays, 50))}, p99 ${ms(pct(delays, 99))}, max ${ms(delays[delays.length - 1]!)}, missing ${missing}`)
    if (missing > 0) exitCode = 1
    for (const a of aborts) a.abort()
    await Promise.allSettled(readers)
    await db.sql.end({ timeout: 5 })
  }
} catch (e) {
  console.error(e)
  console.error(svc.output().slice(-2000))
  exitCode = 1
} finally {
  await svc.stop()
  await database.drop()
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(exitCode)
