/**
 * OCR that is fast on every page and never holds the rest of a case back (issue 26), with the
 * built-in engine (tesseract.js) always and the native `tesseract` command where installed:
 * - two 1920x1080 screenshot pages are read (known-word recall >= 0.9) while a text document
 *   uploaded right after them is `ready` while they are still being recognised (OCR and text
 *   parsing never share parser processes);
 * - screenshots turned 90 and 180 degrees are read upright in one recognition each (the parse's
 *   record counts the recognitions);
 * - a page whose time limit is reached keeps its reading;
 * - two workspaces: a long scan in one does not hold back a one-page scan in the other beyond
 *   about one page per slot (counted in the long scan's pages read meanwhile), and the long scan ends `ready` with every page read, while a CPU-bound
 *   process loads the machine.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete, type SampleFile } from '../helpers/samples'
import { imageOnlyPdf, multiPageTiff, scanned, screenshotPage, sharedImagePdf, textPage, tiffFrame, turned } from '../helpers/scans'
import { nativeTesseract } from '../../server/documents/ocr/native'

setDefaultTimeout(300_000)

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

/** The lines of a screenshot of an account's payments (known words for recall). */
const screenLines = (account: string) => Array.from({ length: 24 }, (_, i) =>
  `2024-03-${String(i + 1).padStart(2, '0')}   Payment received from ${account} invoice ${4100 + i}   amount ${(1234.5 + i * 17).toFixed(2)}   balance ${(50_000 - i * 120).toFixed(2)}`)

const png = (canvas: { toBuffer(type: 'image/png'): Buffer }) => new Uint8Array(canvas.toBuffer('image/png')) as SampleFile['bytes']

const EMAIL = new TextEncoder().encode('From: broker@example.test\r\nTo: uw@example.test\r\nSubject: Submission\r\n\r\nPlease find the screenshots of the account attached.\r\n') as SampleFile['bytes']

/** Waits until `check` holds, polling every 5 ms. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(5)
  }
}

/** Uploads and returns the ms from the end of its upload (complete) to its status leaving `processing`. */
async function timedToSettled(app: TestApp, key: string, scenarioId: string, file: SampleFile) {
  const started = performance.now()
  const { doc } = await uploadAndComplete(app, key, scenarioId, file)
  const uploaded = performance.now()
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${doc.id}`, { token: key })
    if (r.body.status !== 'processing') return { doc: r.body, ms: performance.now() - uploaded, uploadMs: uploaded - started }
    await Bun.sleep(10)
  }
}

const engines = ['wasm', ...(nativeTesseract() ? ['native'] : [])] as const
if (!nativeTesseract()) console.log('ocr-scheduling: the native tesseract command is not installed (apt-get install tesseract-ocr); native engine cases skipped')

describe.each(engines)('screenshots with the %s engine', (engine) => {
  let app: TestApp
  let key: string
  let sc: string
  beforeAll(async () => {
    app = await startApp({ env: { SVC_OCR_ENGINE: engine } })
    const t = await app.tenant()
    key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `Screenshots (${engine})` } })).body.id
  })
  afterAll(() => app?.stop())

  test('two 1920x1080 screenshot pages are read while a text document uploaded right after them is ready before them', async () => {
    // The same email alone first: how long a text document takes on this machine right now.
    const alone = await timedToSettled(app, key, sc, { filename: 'alone.eml', contentType: 'message/rfc822', bytes: EMAIL })
    expect(alone.doc.status).toBe('ready')
    const pages = [screenLines('Acme Holdings LLC'), screenLines('Birch Logistics Inc')]
    const tiff = multiPageTiff(pages.map((lines, i) => tiffFrame(screenshotPage(`Loan servicing portal - statement ${i + 1}`, lines))))
    const shots = await uploadAndComplete(app, key, sc, { filename: 'screens.tiff', contentType: 'image/tiff', bytes: tiff })
    // The screenshots are being recognised (both OCR slots busy) when the email arrives.
    await until(() => app.deps.parser.stats().ocrInUse > 0, 60_000, 'OCR to start')
    const email = await timedToSettled(app, key, sc, { filename: 'submission.eml', contentType: 'message/rfc822', bytes: EMAIL })
    expect(email.doc.status).toBe('ready')
    // The email did not wait for OCR: it is ready while the screenshots are still being recognised
    // (an outcome, not a time bound: the times are reported, they vary with the machine's load).
    expect(app.deps.parser.stats().ocrInUse).toBeGreaterThan(0)
    expect((await call(app.url, 'GET', `/v1/scenarios/${sc}/documents/${shots.doc.id}`, { token: key })).body.status).toBe('processing')
    console.log(`text document beside OCR (${engine}): ready ${Math.round(email.ms)} ms after upload; alone ${Math.round(alone.ms)} ms`)

    const done = await settled(app, key, sc, shots.doc.id, 240_000)
    expect(done).toMatchObject({ status: 'ready', pages: { total: 2, ocr: 2, unreadable: 0 } })
    const blocks = await allBlocks(app, key, sc, shots.doc.id)
    for (const [i, lines] of pages.entries()) {
      expect(recall(lines, blocks.filter((b) => b.page === i + 1).map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
    }
    const record = app.deps.parser.recent().find((r) => r.documentId === shots.doc.id)!
    expect(record).toMatchObject({ end: 'done', lane: 'ocr', ocr: { pages: 2, recognitions: 2 } })
  })

  test('screenshots turned 90 and 180 degrees are read upright, each in one recognition', async () => {
    const lines = screenLines('Cedar Farms Ltd')
    const shot = screenshotPage('Loan servicing portal - payments', lines)
    for (const quarterTurns of [1, 2] as const) {
      const { doc } = await uploadAndComplete(app, key, sc, { filename: `turned-${quarterTurns * 90}.png`, contentType: 'image/png', bytes: png(turned(shot, quarterTurns)) })
      expect(await settled(app, key, sc, doc.id, 240_000)).toMatchObject({ status: 'ready', pages: { total: 1, ocr: 1 } })
      const text = (await allBlocks(app, key, sc, doc.id)).map((b) => b.text).join('\n')
      expect({ quarterTurns, recall: recall(lines, text) >= 0.9 }).toEqual({ quarterTurns, recall: true })
      const record = app.deps.parser.recent().find((r) => r.documentId === doc.id)!
      expect(record.ocr).toMatchObject({ pages: 1, recognitions: 1 })
    }
  })
})

describe('a page whose time limit is reached keeps its reading', () => {
  let app: TestApp
  beforeAll(async () => {
    // 100 ms: the smallest limit the setting takes, far less than one recognition.
    app = await startApp({ env: { SVC_OCR_PAGE_TIMEOUT_MS: '100', SVC_OCR_ENGINE: 'wasm' } })
  })
  afterAll(() => app?.stop())

  test('a two-page scan with a 100 ms page limit: both pages read, the limit counted, no second reading started', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Tiny page limit' } })).body.id
    const pages = [['Schedule of real estate owned', 'Property at 12 Harbor Road valued 640,000.00'], ['Rent roll for March 2024', 'Total monthly rent 12,400.00 from six units']]
    const bytes = await imageOnlyPdf(pages.map((lines) => scanned(textPage(lines), { degrees: 1, quality: 60 })))
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'slow-scan.pdf', contentType: 'application/pdf', bytes })
    const done = await settled(app, key, sc, doc.id, 240_000)
    expect(done).toMatchObject({ status: 'ready', pages: { total: 2, ocr: 2, unreadable: 0 } })
    const blocks = await allBlocks(app, key, sc, doc.id)
    for (const [i, lines] of pages.entries()) {
      expect(recall(lines, blocks.filter((b) => b.page === i + 1).map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.9)
    }
    const record = app.deps.parser.recent().find((r) => r.documentId === doc.id)!
    expect(record.ocr).toEqual({ pages: 2, recognitions: 2, pageLimitReached: 2 })
  })
})

/** Pages of the long scan: scaled down from the 100 so the suite fits CI's budget on 2 cores (see the report). */
const LONG_SCAN_PAGES = Number(process.env.TEST_OCR_LONG_SCAN_PAGES ?? 30)

describe('OCR is shared fairly between workspaces', () => {
  let app: TestApp
  let load: ReturnType<typeof Bun.spawn> | undefined
  beforeAll(async () => {
    app = await startApp({ env: {} })
  })
  afterAll(() => {
    load?.kill()
    app?.stop()
  })

  test(`a ${LONG_SCAN_PAGES}-page scan in one workspace does not hold back a one-page scan in another beyond about a page's time, and ends ready whole`, async () => {
    const a = await app.tenant()
    const b = await app.tenant()
    const keyA = await app.apiKey(a.id, ['scenarios:read', 'scenarios:write'])
    const keyB = await app.apiKey(b.id, ['scenarios:read', 'scenarios:write'])
    const scA = (await call(app.url, 'POST', '/v1/scenarios', { token: keyA, body: { name: 'Loan file' } })).body.id
    const scB = (await call(app.url, 'POST', '/v1/scenarios', { token: keyB, body: { name: 'ID card' } })).body.id
    // Another suite loading the machine: a process spinning on one core for the whole test.
    load = Bun.spawn([process.execPath, '-e', 'for (;;) {}'], { stdout: 'ignore', stderr: 'ignore' })

    const long = await uploadAndComplete(app, keyA, scA, { filename: 'loan-file.pdf', contentType: 'application/pdf', bytes: await sharedImagePdf(scanned(textPage(['Page of a long scanned loan file', 'Borrower: Acme Holdings LLC'], { width: 850, height: 1100, fontPx: 26 })), LONG_SCAN_PAGES) })
    // Wait until the long scan has pages done, so its page time is known and its pages fill the slots.
    await until(async () => (await app.sql`select 1 from case_events where type = 'document.progress' and data->>'document_id' = ${long.doc.id} and (data->>'page')::int >= 4`).length > 0, 240_000, 'the long scan to progress')
    const card = ['Driver licence', 'Name: Jane Example', 'Licence number D1234567']
    const health = performance.now()
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200)
    const healthMs = performance.now() - health
    const longPagesDone = async () => (await app.sql<{ n: number }[]>`
      select count(*)::int as n from case_events
      where tenant_id = ${a.id} and type = 'document.progress' and data->>'document_id' = ${long.doc.id}`)[0]!.n
    const pagesBefore = await longPagesDone()
    const one = await timedToSettled(app, keyB, scB, { filename: 'id-card.jpg', contentType: 'image/jpeg', bytes: scanned(textPage(card, { width: 850, height: 550, fontPx: 30 })) })
    expect(one.doc).toMatchObject({ status: 'ready', pages: { total: 1, ocr: 1 } })
    // Pages of the long scan read while the card waited and was read, counted in its progress events.
    const pagesMeanwhile = (await longPagesDone()) - pagesBefore
    const longNow = await call(app.url, 'GET', `/v1/scenarios/${scA}/documents/${long.doc.id}`, { token: keyA })
    expect(longNow.body.status).toBe('processing') // the card did not wait for the long scan to end

    const done = await settled(app, keyA, scA, long.doc.id, 400_000)
    const longMs = app.deps.parser.recent().find((r) => r.documentId === long.doc.id)!.ms
    expect(done).toMatchObject({ status: 'ready', pages: { total: LONG_SCAN_PAGES, ocr: LONG_SCAN_PAGES, unreadable: 0 } })
    // The card's wait, counted in the long scan's pages rather than in milliseconds (a time bound
    // fails under load): while the card waited for a slot (at most the page then in it) and was
    // read, each slot read at most about three of the long scan's pages; waiting behind the whole
    // scan would be all of its remaining pages (over 20).
    const slots = app.deps.config.parse.ocrConcurrency
    const pageMs = (longMs / LONG_SCAN_PAGES) * slots
    const cardParseMs = app.deps.parser.recent().find((r) => r.documentId === one.doc.id)!.ms
    console.log(`fairness: long scan ${Math.round(longMs)} ms for ${LONG_SCAN_PAGES} pages (${Math.round(pageMs)} ms a page a slot); card ready ${Math.round(one.ms)} ms after upload (parse ${cardParseMs} ms, ${pagesMeanwhile} pages of the long scan meanwhile), ${Math.round(one.uploadMs)} ms to upload it; /healthz ${Math.round(healthMs)} ms`)
    expect(pagesMeanwhile).toBeLessThanOrEqual(3 * slots)
    const progress = await app.sql<{ data: { page: number; pages: number } }[]>`
      select data from case_events where type = 'document.progress' and data->>'document_id' = ${long.doc.id} order by seq`
    expect(progress.map((e) => e.data.page)).toEqual([...progress.map((e) => e.data.page)].sort((x, y) => x - y))
    expect(progress.at(-1)!.data).toMatchObject({ page: LONG_SCAN_PAGES, pages: LONG_SCAN_PAGES })
  })
})
