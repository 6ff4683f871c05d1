/**
 * The adapters beside their parsing libraries (ingest.bench.ts, part 1a-1d): the PDF adapter alone and
 * beside pdf.js text in drawing order (and pdftotext when installed), a tabular PDF, each other adapter
 * (spreadsheets, Word 97-2003, RTF, ODT, encoded text, TIFF, HEIC, ZIP, MSG) beside its library alone,
 * interleaved and timed in CPU time as well as wall time (the verdict, adapter >= 0.8 of the library
 * alone, is read in CPU time), and the document type and checks mined at ingestion. Returns the files
 * and adapter runs that the end-to-end part (ingest-e2e.ts) sends through a running service.
 */
import { ADAPTERS } from '../../server/documents/adapters'
import { toBlocks } from '../../server/documents/blocks'
import { longPdfSample } from '../helpers/samples'

/** Epoch milliseconds with sub-millisecond precision. */
export const now = () => performance.timeOrigin + performance.now()
/** Milliseconds as text. */
export const ms = (n: number) => `${n.toFixed(1)} ms`
/** This process's CPU time (user + system) in milliseconds. */
export const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
/** The median (the upper one of an even count). */
export const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** A file as uploaded: its name, declared type and bytes. */
export interface BenchFile { filename: string; contentType: string; bytes: Uint8Array }
/** One adapter's figures: its file (for the end-to-end runs) and the library's and adapter's medians. */
export interface Beside { label: string; units: number; unit: string; library: () => unknown; run: () => Promise<unknown>; file?: BenchFile; lib: { wall: number; cpu: number }; adapter: { wall: number; cpu: number } }
/** An image read by OCR through the service: end to end it is compared with the adapter and a real OCR engine in this process. */
export interface OcrFile { label: string; file: BenchFile; units: number; unit: string }

/** BENCH_E2E_ONLY=1: build the files and adapter runs only (no library comparisons, no PDF variants). */
const E2E_ONLY = process.env.BENCH_E2E_ONLY === '1'

/** The parse limits the adapters run with here (the service's defaults, generous). */
export const LIMITS = { maxPages: 2000, maxInflatedBytes: 128 * 1_048_576, maxBlocks: 1_000_000 }
/** Runs an adapter on bytes and cuts its blocks, as the parser process does; resolves with the block count. */
export const adapterBlocks = async (name: keyof typeof ADAPTERS, bytes: Uint8Array) => toBlocks(crypto.randomUUID(), await ADAPTERS[name](bytes, LIMITS)).length

/**
 * Runs part 1 of the benchmark and prints its lines: a `pages`-page PDF (generated with pdf-lib)
 * and every other adapter beside its library. Returns the PDF, its adapter median, and the files
 * to send end to end.
 */
export async function measureAdapters(PAGES: number): Promise<{ pdf: Uint8Array; median: number; besides: Beside[]; ocrFiles: OcrFile[] }> {
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
  if (!E2E_ONLY) {
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
  if (!E2E_ONLY) {
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
  const besides: Beside[] = []
  const ocrFiles: OcrFile[] = []
  /** Times `library` (the parsing library alone) and `adapter` (the whole adapter: bounds, the library, segments, blocks), interleaved. */
  async function besideLibrary(label: string, units: number, unit: string, library: () => unknown, adapter: () => Promise<unknown>, file?: Beside['file'], rounds = 5) {
    // BENCH_E2E_ONLY: the files and adapter runs for the end-to-end part, without the library comparison.
    if (E2E_ONLY) { besides.push({ label, units, unit, library, run: adapter, file, lib: { wall: 0, cpu: 0 }, adapter: { wall: 0, cpu: 0 } }); return }
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
      if (ext === 'xlsx' && !E2E_ONLY) {
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
  if (!E2E_ONLY) {
    const { findDocumentFindings } = await import('../../server/evaluation/document-findings')
    const blocks = toBlocks(crypto.randomUUID(), await ADAPTERS.pdf(pdf))
    const xs: number[] = []
    for (let i = 0; i < 7; i++) { const c0 = cpuMs(); findDocumentFindings({ id: 'd', filename: 'long.pdf', content_type: 'application/pdf' }, blocks); xs.push(cpuMs() - c0) }
    const share = mid(xs) / median
    console.log(`document type + checks over the ${PAGES}-page PDF's ${blocks.length} blocks: ${ms(mid(xs))} CPU, ${(share * 100).toFixed(2)}% of the adapter alone (${median.toFixed(0)} ms) ${share <= 0.1 ? 'PASS' : 'MISS'} (at most 10%)`)
  }
  return { pdf, median, besides, ocrFiles }
}
