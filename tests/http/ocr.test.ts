/**
 * Scans and photos are read by OCR, and no document loses content silently: a corpus generated in
 * the run (born-digital pages rasterised, degraded like real scans, wrapped into image-only PDFs;
 * phone photos with an EXIF orientation; a sideways scan; a multi-page TIFF; blank and noise pages)
 * reaches the right status and page counts, with OCR recall of the known words of at least 0.9, and
 * a fact on a scanned page answers a fact_path question with evidence on that page.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { extractText, getDocumentProxy } from 'unpdf'
import { allBlocks, heicSample, xlsxSample, csvSample, docxSample, htmlSample, markdownSample, pdfSample, settled, textSample, uploadAndComplete, type SampleFile } from '../helpers/samples'
import { blankPage, hugeWhitePng, imageOnlyPdf, multiPageTiff, noisePage, phonePhoto, scanned, sharedImagePdf, textPage, tiffFrame } from '../helpers/scans'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { FILE_TYPES } from '../../server/documents/registry'
import { nativeTesseract } from '../../server/documents/ocr/native'
if (!nativeTesseract()) console.warn('skipped: OCR with the native tesseract command: tesseract-ocr is not installed (apt-get install tesseract-ocr)')
import { outlookMessage } from '../helpers/msg'
import { scheduleBook, writeBook } from '../helpers/spreadsheets'
import { PROPOSAL_RTF, surveyOdt, wordFixture } from '../helpers/word-processing'
import { heicOf, heifEncoder } from '../helpers/heic'
import { zipOf } from '../helpers/hostile-files'

setDefaultTimeout(120_000)

const STATEMENT = [
  'First National Bank statement for March 2024',
  'Account holder: Acme Holdings LLC',
  'Opening balance 48,200.00 on March 1',
  'Closing balance 37,700.50 on March 31',
  'Payroll transfer to employees 31,000.00',
]

/** Share of the expected words found (as a multiset) in the text: OCR recall. */
function recall(expected: string[], text: string): number {
  const norm = (w: string) => w.replace(/^[^\w]+|[^\w]+$/g, '').toLowerCase()
  const found = new Map<string, number>()
  for (const w of text.split(/\s+/).map(norm).filter(Boolean)) found.set(w, (found.get(w) ?? 0) + 1)
  const words = expected.join(' ').split(/\s+/).map(norm).filter(Boolean)
  let hits = 0
  for (const w of words) {
    const n = found.get(w) ?? 0
    if (n > 0) { hits++; found.set(w, n - 1) }
  }
  return hits / words.length
}

let app: TestApp
let key: string
let scenarioId: string

/** Uploads a file into the case and waits for it to be processed; returns it and its blocks. */
async function ingest(file: SampleFile) {
  const { doc } = await uploadAndComplete(app, key, scenarioId, file)
  const done = await settled(app, key, scenarioId, doc.id, 100_000)
  return { doc: done, blocks: await allBlocks(app, key, scenarioId, doc.id) }
}

beforeAll(async () => {
  // The engine every install has (tesseract.js); the native command is tested below where installed.
  app = await startApp({ env: { SVC_OCR_PAGE_TIMEOUT_MS: '6000', SVC_OCR_ENGINE: 'wasm' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Scans' } })).body.id
})
afterAll(() => app?.stop())

describe('OCR of scans and photos', () => {
  test('a born-digital PDF, its degraded scan and a PNG of it: all read, by text layer and by OCR, recall >= 0.9', async () => {
    const digital = await ingest({ filename: 'statement.pdf', contentType: 'application/pdf', bytes: await pdfSample([STATEMENT]) })
    expect(digital.doc).toMatchObject({ status: 'ready', pages: { total: 1, text_layer: 1, ocr: 0, blank: 0, unreadable: 0 } })
    expect(digital.blocks.every((b) => b.source === 'text' && b.confidence === undefined)).toBe(true)

    const scan = await ingest({ filename: 'scan.pdf', contentType: 'application/pdf', bytes: await imageOnlyPdf([scanned(textPage(STATEMENT), { degrees: 2, blurPx: 1, quality: 45 })]) })
    expect(scan.doc).toMatchObject({ status: 'ready', page_count: 1, pages: { total: 1, text_layer: 0, ocr: 1, blank: 0, unreadable: 0 } })
    expect(scan.blocks.length).toBeGreaterThan(0)
    for (const b of scan.blocks) {
      expect(b).toMatchObject({ source: 'ocr', page: 1 })
      expect(b.confidence).toBeGreaterThanOrEqual(0)
    }
    expect(recall(STATEMENT, scan.blocks.map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)

    const png = await ingest({ filename: 'photo.png', contentType: 'image/png', bytes: new Uint8Array(textPage(STATEMENT).toBuffer('image/png')) })
    expect(png.doc).toMatchObject({ status: 'ready', pages: { total: 1, ocr: 1 } })
    expect(recall(STATEMENT, png.blocks.map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
  })

  test('a phone photo stored sideways with an EXIF orientation, and a scan fed upside down, are read upright', async () => {
    const photo = await ingest({ filename: 'phone.jpg', contentType: 'image/jpeg', bytes: phonePhoto(textPage(STATEMENT)) })
    expect(photo.doc).toMatchObject({ status: 'ready', pages: { total: 1, ocr: 1 } })
    expect(recall(STATEMENT, photo.blocks.map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
    const upsideDown = await ingest({ filename: 'upside-down.jpg', contentType: 'image/jpeg', bytes: scanned(textPage(STATEMENT), { quarterTurns: 2, degrees: 1 }) })
    expect(upsideDown.doc).toMatchObject({ status: 'ready', pages: { total: 1, ocr: 1 } })
    expect(recall(STATEMENT, upsideDown.blocks.map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
  })

  test('a scan with a blank page and a page of noise: the blank page does not degrade, the noise page is named unreadable', async () => {
    const { doc, blocks } = await ingest({
      filename: 'mixed-scan.pdf', contentType: 'application/pdf',
      bytes: await imageOnlyPdf([scanned(textPage(STATEMENT), { degrees: 1 }), scanned(blankPage()), scanned(noisePage())]),
    })
    expect(doc).toMatchObject({ status: 'ready_degraded', page_count: 3, pages: { total: 3, text_layer: 0, ocr: 1, blank: 1, unreadable: 1 } })
    expect(doc.error_detail).toStartWith('page 3 unreadable: ')
    expect(new Set(blocks.map((b) => b.page))).toEqual(new Set([1]))
  })

  test('a multi-page TIFF is read a page per frame', async () => {
    const second = ['Second page of the schedule', 'Rent roll total 12,400.00 per month']
    const { doc, blocks } = await ingest({
      filename: 'fax.tiff', contentType: 'image/tiff',
      bytes: multiPageTiff([tiffFrame(textPage(STATEMENT)), tiffFrame(textPage(second)), tiffFrame(blankPage())]),
    })
    expect(doc).toMatchObject({ status: 'ready', page_count: 3, pages: { total: 3, ocr: 2, blank: 1, unreadable: 0 } })
    expect(recall(STATEMENT, blocks.filter((b) => b.page === 1).map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
    expect(recall(second, blocks.filter((b) => b.page === 2).map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
  })

  test('a fact on a scanned page answers a fact_path question, with evidence on that page of the scan', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
    await publishedSet(app, k, [{ key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000' }])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Scanned application' } })).body.id
    const form = [['Business Loan Application', 'Applicant: Acme Holdings LLC'], ['Section B: finances', 'Annual revenue: 1,250,000.00', 'Years in business: 12 years']]
    const bytes = await imageOnlyPdf(form.map((lines) => scanned(textPage(lines, { fontPx: 34 }), { degrees: 1, blurPx: 0.6, quality: 60 })))
    const { doc } = await uploadAndComplete(app, k, sc, { filename: 'application-scan.pdf', contentType: 'application/pdf', bytes })
    expect(await settled(app, k, sc, doc.id, 100_000)).toMatchObject({ status: 'ready', pages: { total: 2, ocr: 2 } })
    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: k, body: {} })
    expect(run.status).toBe(202)
    expect((await evaluationEnded(app, k, sc, run.body.id)).status).toBe('succeeded')
    const answers = (await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: k })).body.items
    expect(answers[0]).toMatchObject({ question_key: 'annual_revenue', value: '1250000.00', status: 'answered', source: 'fact' })
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: k })).body.items
    expect(evidence[0]).toMatchObject({ document_id: doc.id, page: 2 })
    expect(evidence[0].quote).toContain('1,250,000.00')
    const block = (await allBlocks(app, k, sc, doc.id)).find((b) => b.id === evidence[0].block_id)
    expect(block).toMatchObject({ page: 2, source: 'ocr' })

    // The findings report lists every document with how much of it was read, and warns of the unread.
    const heic = await uploadAndComplete(app, k, sc, { filename: 'photo.heic', contentType: 'image/heic', bytes: heicSample() })
    expect((await settled(app, k, sc, heic.doc.id)).status).toBe('failed')
    const report = await call(app.url, 'POST', `/v1/scenarios/${sc}/reports`, { token: k, body: { evaluation_id: run.body.id } })
    expect(report.status).toBe(202)
    let r: any
    for (let i = 0; i < 400; i++) {
      r = (await call(app.url, 'GET', `/v1/scenarios/${sc}/reports/${report.body.id}`, { token: k })).body
      if (r.status === 'succeeded' || r.status === 'failed') break
      await Bun.sleep(25)
    }
    expect(r.status).toBe('succeeded')
    const pdf = await fetch(`${app.url}/v1/scenarios/${sc}/reports/${report.body.id}/download`, { headers: { authorization: `Bearer ${k}` } })
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(await pdf.arrayBuffer())), { mergePages: true })
    const flat = text.replace(/\s+/g, ' ')
    expect(flat).toContain('Documents and read coverage (2)')
    expect(flat).toContain('Warning: 1 of 2 documents were not read in full')
    expect(flat).toContain('application-scan.pdf: 2 pages, 2 by OCR')
    expect(flat).toContain('photo.heic: not read (failed: the HEIC image could not be decoded)')
  })
})

// Without the command the block is one named skip (a skipped describe would list its hooks as "(unnamed)").
if (!nativeTesseract()) test.skip('OCR with the native tesseract command: skipped, tesseract-ocr is not installed (apt-get install tesseract-ocr)', () => {})
else describe('OCR with the native tesseract command (installed here)', () => {
  let native: TestApp
  let k: string
  let sc: string
  beforeAll(async () => {
    native = await startApp({ env: { SVC_OCR_ENGINE: 'native', SVC_OCR_PAGE_TIMEOUT_MS: '6000' } })
    const t = await native.tenant()
    k = await native.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    sc = (await call(native.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Native OCR' } })).body.id
  })
  afterAll(() => native?.stop())

  test('a degraded scan, a phone photo and a blank page read as with the WebAssembly engine', async () => {
    const files: [SampleFile, object][] = [
      [{ filename: 'scan.pdf', contentType: 'application/pdf', bytes: await imageOnlyPdf([scanned(textPage(STATEMENT), { degrees: 2, blurPx: 1, quality: 45 }), scanned(blankPage())]) }, { status: 'ready', pages: { total: 2, ocr: 1, blank: 1, unreadable: 0 } }],
      [{ filename: 'phone.jpg', contentType: 'image/jpeg', bytes: phonePhoto(textPage(STATEMENT)) }, { status: 'ready', pages: { total: 1, ocr: 1 } }],
    ]
    for (const [file, expected] of files) {
      const { doc } = await uploadAndComplete(native, k, sc, file)
      expect(await settled(native, k, sc, doc.id, 100_000)).toMatchObject(expected)
      const blocks = await allBlocks(native, k, sc, doc.id)
      expect(blocks.every((b) => b.source === 'ocr' && b.confidence >= 0 && b.confidence <= 100)).toBe(true)
      expect(recall(STATEMENT, blocks.map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
    }
  })
})

describe('no document loses content silently', () => {
  test('every type with an adapter, given content, never ends ready with zero blocks; content that cannot be read fails, naming its pages', async () => {
    const page = textPage(STATEMENT)
    const samples: Record<string, () => Promise<Uint8Array>> = {
      'text/plain': async () => textSample(),
      'text/markdown': async () => markdownSample(),
      'text/csv': async () => csvSample(),
      'text/tab-separated-values': async () => new TextEncoder().encode('Unit\tMonthly rent\n1A\t1,250.00\n'),
      'text/html': async () => htmlSample(),
      'application/pdf': async () => imageOnlyPdf([scanned(page)]),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document': async () => docxSample(),
      'image/png': async () => new Uint8Array(page.toBuffer('image/png')),
      'image/jpeg': async () => new Uint8Array(page.toBuffer('image/jpeg')),
      'image/webp': async () => new Uint8Array(page.toBuffer('image/webp')),
      'image/tiff': async () => multiPageTiff([tiffFrame(page)]),
      'image/heic': async () => heicOf(page),
      'application/zip': async () => zipOf([{ name: 'statement.txt', data: new TextEncoder().encode(STATEMENT.join('\n')), crc32: Bun.hash.crc32(new TextEncoder().encode(STATEMENT.join('\n'))) >>> 0, size: new TextEncoder().encode(STATEMENT.join('\n')).length, method: 0 }]),
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': async () => xlsxSample(),
      'application/vnd.ms-excel.sheet.macroenabled.12': async () => writeBook(scheduleBook(), 'xlsm'),
      'application/vnd.ms-excel': async () => writeBook(scheduleBook(), 'biff8'),
      'application/vnd.oasis.opendocument.spreadsheet': async () => writeBook(scheduleBook(), 'ods'),
      'application/msword': async () => wordFixture('test04.doc'),
      'application/rtf': async () => new TextEncoder().encode(PROPOSAL_RTF),
      'text/rtf': async () => new TextEncoder().encode(PROPOSAL_RTF),
      'application/vnd.oasis.opendocument.text': async () => surveyOdt(),
      'application/vnd.ms-outlook': async () => outlookMessage({ subject: 'Submission', from: { name: 'Broker', email: 'broker@example.test' }, to: { name: 'UW', email: 'uw@example.test' }, body: 'Please find the file attached.' }),
      'message/rfc822': async () => new TextEncoder().encode('From: broker@example.test\r\nTo: uw@example.test\r\nSubject: Submission\r\n\r\nPlease find the file attached.\r\n'),
    }
    const types = FILE_TYPES.filter((f) => f.adapter)
    expect(types.map((f) => f.contentType).sort()).toEqual(Object.keys(samples).sort())
    if (!heifEncoder()) console.warn('skipping image/heic here: no heif-enc command (Debian libheif-examples) to write a HEIC with text')
    for (const f of types.filter((t) => t.contentType !== 'image/heic' || heifEncoder())) {
      const { doc } = await ingest({ filename: `sample.${f.extensions[0]}`, contentType: f.contentType, bytes: await samples[f.contentType]!() as SampleFile['bytes'] })
      expect({ type: f.contentType, status: doc.status, hasBlocks: doc.block_count > 0 }).toEqual({ type: f.contentType, status: 'ready', hasBlocks: true })
    }
    // Content that no engine can read: an image-only PDF of noise pages is failed, not ready and empty.
    const { doc } = await ingest({ filename: 'noise.pdf', contentType: 'application/pdf', bytes: await imageOnlyPdf([scanned(noisePage(1275, 1650, 3))]) })
    expect(doc).toMatchObject({ status: 'failed', block_count: 0, pages: { total: 1, unreadable: 1 } })
    expect(doc.error_detail).toStartWith('page 1 unreadable: ')
  })
})

/** The OCR page limit of the hostile-images app: enough pages that a reingest lands while the first run still recognises. */
const OCR_MAX_PAGES = 10

describe('hostile images are bounded', () => {
  let hostile: TestApp
  let k: string
  let sc: string

  beforeAll(async () => {
    hostile = await startApp({ env: { SVC_OCR_MAX_PAGES: String(OCR_MAX_PAGES) } })
    const t = await hostile.tenant()
    k = await hostile.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    sc = (await call(hostile.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Hostile images' } })).body.id
  })
  afterAll(() => hostile?.stop())

  /** Ingests a file while probing /healthz (every probe must answer 200); returns the document, the parse's record and how many probes were answered. */
  async function ingestProbing(file: SampleFile) {
    const { doc } = await uploadAndComplete(hostile, k, sc, file)
    let probes = 0
    let done = false
    const probe = (async () => {
      while (!done) {
        expect((await fetch(`${hostile.url}/healthz`)).status).toBe(200)
        probes++
        await Bun.sleep(20)
      }
    })()
    const settledDoc = await settled(hostile, k, sc, doc.id, 110_000)
    done = true
    await probe
    return { doc: settledDoc, parse: hostile.deps.parser.recent().at(-1)!, probes }
  }

  test('a 30,000 x 30,000 px PNG is refused from its header: failed, naming the pixel limit, at once', async () => {
    const { doc, parse } = await ingestProbing({ filename: 'huge.png', contentType: 'image/png', bytes: hugeWhitePng(30_000, 30_000) })
    expect(doc).toMatchObject({ status: 'failed', block_count: 0, pages: { total: 1, unreadable: 1 } })
    expect(doc.error_detail).toContain('SVC_OCR_MAX_PIXELS')
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
  })

  test('a TIFF of 5,000 frames: every frame accounted for, OCR and page limits named, memory and the API unharmed', async () => {
    const tiny = tiffFrame(blankPage(48, 48))
    const { doc, parse, probes } = await ingestProbing({ filename: 'frames.tiff', contentType: 'image/tiff', bytes: multiPageTiff(Array.from({ length: 5000 }, () => tiny)) })
    expect(doc.pages).toEqual({ total: 5000, text_layer: 0, ocr: 0, blank: OCR_MAX_PAGES, unreadable: 5000 - OCR_MAX_PAGES, image_no_text: 0, low_confidence_blocks: 0 })
    expect(doc.status).toBe('failed')
    expect(doc.error_detail).toContain('SVC_OCR_MAX_PAGES')
    expect(doc.error_detail).toContain('SVC_PARSE_MAX_PAGES')
    expect(parse.end).toBe('done')
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
    expect(probes).toBeGreaterThan(0) // the API answered while the parse ran (no latency bound: that is a benchmark's)
  })

  test('a PDF of 2,000 image pages: OCR stops at its page limit, the rest named unreadable, memory and the API unharmed', async () => {
    const { doc, parse, probes } = await ingestProbing({ filename: 'images.pdf', contentType: 'application/pdf', bytes: await sharedImagePdf(scanned(textPage(['Page of a long scanned file'], { width: 425, height: 550, fontPx: 20 })), 2000) })
    expect(doc.pages).toMatchObject({ total: 2000, text_layer: 0, ocr: OCR_MAX_PAGES, unreadable: 2000 - OCR_MAX_PAGES })
    expect(doc.status).toBe('ready_degraded')
    expect(doc.block_count).toBeGreaterThanOrEqual(OCR_MAX_PAGES)
    expect(doc.error_detail).toBe(`pages ${OCR_MAX_PAGES + 1}-2000 unreadable: not recognised: beyond the OCR page limit ${OCR_MAX_PAGES} (SVC_OCR_MAX_PAGES)`)
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
    expect(probes).toBeGreaterThan(0) // the API answered while the parse ran (no latency bound: that is a benchmark's)
    // Progress went to the case's event stream as the pages were done.
    const progress = await hostile.sql<{ data: { page: number; pages: number } }[]>`
      select data from case_events where type = 'document.progress' and data->>'document_id' = ${doc.id} order by seq`
    expect(progress.length).toBeGreaterThanOrEqual(2)
    expect(progress.every((e) => e.data.pages === 2000)).toBe(true)
    expect(progress.map((e) => e.data.page)).toEqual([...progress.map((e) => e.data.page)].sort((a, b) => a - b))
    expect(progress.at(-1)!.data.page).toBe(2000)
  })

  test('a reingest while a long OCR parse runs cancels it; the new run reads the document', async () => {
    const { doc } = await uploadAndComplete(hostile, k, sc, { filename: 'long-scan.pdf', contentType: 'application/pdf', bytes: await sharedImagePdf(scanned(textPage(['Page of a long scanned file'], { width: 425, height: 550, fontPx: 20 })), 2000) })
    const until = Date.now() + 30_000
    while ((await hostile.sql`select 1 from case_events where type = 'document.progress' and data->>'document_id' = ${doc.id}`).length === 0) {
      if (Date.now() > until) throw new Error('no progress event')
      await Bun.sleep(20)
    }
    const again = await call(hostile.url, 'POST', `/v1/scenarios/${sc}/documents/${doc.id}/reingest`, { token: k })
    expect(again.status).toBe(202)
    const done = await settled(hostile, k, sc, doc.id, 110_000)
    expect(done).toMatchObject({ status: 'ready_degraded', pages: { total: 2000, ocr: OCR_MAX_PAGES, unreadable: 2000 - OCR_MAX_PAGES } })
    const ends = hostile.deps.parser.recent().filter((p) => p.documentId === doc.id).map((p) => p.end)
    expect(ends).toEqual(['canceled', 'done'])
  })
})

describe('OCR concurrency is bounded across parser processes', () => {
  let bounded: TestApp
  let k: string
  let sc: string
  beforeAll(async () => {
    bounded = await startApp({ env: { SVC_PARSE_WORKERS: '2', SVC_OCR_CONCURRENCY: '1' } })
    const t = await bounded.tenant()
    k = await bounded.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    sc = (await call(bounded.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'One OCR slot' } })).body.id
  })
  afterAll(() => bounded?.stop())

  test('two scans in two parser processes take turns for the one OCR slot, and both are read', async () => {
    const tiff = multiPageTiff([0, 1, 2].map((i) => tiffFrame(textPage([`Schedule page ${i + 1}`, ...STATEMENT]))))
    const docs = await Promise.all(['a.tiff', 'b.tiff'].map((filename) => uploadAndComplete(bounded, k, sc, { filename, contentType: 'image/tiff', bytes: tiff })))
    let maxInUse = 0
    let maxProcesses = 0
    let sawWaiting = false
    let done = false
    const watch = (async () => {
      while (!done) {
        const s = bounded.deps.parser.stats()
        maxInUse = Math.max(maxInUse, s.ocrInUse)
        maxProcesses = Math.max(maxProcesses, s.busy)
        if (s.ocrWaiting > 0) sawWaiting = true
        await Bun.sleep(5)
      }
    })()
    const settledDocs = await Promise.all(docs.map(({ doc }) => settled(bounded, k, sc, doc.id, 100_000)))
    done = true
    await watch
    for (const d of settledDocs) expect(d).toMatchObject({ status: 'ready', pages: { total: 3, ocr: 3 } })
    expect(maxProcesses).toBe(2)
    expect(maxInUse).toBe(1)
    expect(sawWaiting).toBe(true)
  })
})
