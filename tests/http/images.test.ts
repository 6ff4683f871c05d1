/**
 * The images of a real underwriting file: a multi-page CCITT G4 fax TIFF whose directories are at
 * the end of the file (accepted at upload, read a page per frame), an iPhone-style HEIC photo of a
 * page, and a photo with no text in it (kept as an image without text, listed so in the findings
 * report, never a failure and never read text). Each file's known words come out (recall >= 0.95)
 * and a fact from each answers a fact_path question with evidence citing its document and page.
 * Hostile images are bounded: a HEIC claiming 100,000 x 100,000 pixels, a TIFF of 10,000 frames.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { extractText, getDocumentProxy } from 'unpdf'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete, type SampleFile } from '../helpers/samples'
import { noisePage, scanned, textPage } from '../helpers/scans'
import { faxTiff, tiffFile } from '../helpers/tiff'
import { claimingSize, heicOf, heifClaiming, heifEncoder } from '../helpers/heic'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { SNIFF_BYTES } from '../../server/documents/registry'

setDefaultTimeout(400_000)

/** Share of the expected words found (as a multiset) in the text. */
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

const FAX = [
  ['Facsimile transmission', 'From: Harbor Insurance Brokers', 'To: Commercial underwriting desk', 'Pages: three including this cover'],
  ['Business loan application', 'Applicant: Acme Holdings LLC', 'Annual revenue: 1,250,000.00', 'Years in business: 12 years'],
  ['Signed by the applicant', 'Dated March 14, 2024', 'Witnessed at the branch office'],
]
const PHOTO = ['Property inspection photo', 'Warehouse at 12 Harbor Road', 'Insured value: 640,000.00']

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_OCR_ENGINE: 'wasm', SVC_OCR_PAGE_TIMEOUT_MS: '90000', SVC_PARSE_TIMEOUT_MS: '300000' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app?.stop())

async function ingest(sc: string, file: SampleFile) {
  const { doc } = await uploadAndComplete(app, key, sc, file)
  const done = await settled(app, key, sc, doc.id, 300_000)
  return { doc: done, blocks: await allBlocks(app, key, sc, doc.id) }
}

describe('images of an underwriting file', () => {
  test('a G4 fax TIFF (directories at the end), a HEIC photo of a page and a photo without text: read, cited, listed', async () => {
    await publishedSet(app, key, [
      { key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000' },
      ...(heifEncoder() ? [{ key: 'insured_value', text: 'What is the insured value?', criticality: 'major', answer_type: 'number', fact_path: 'insured_value', accept: 'value >= 100000' }] : []),
    ])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Faxed and photographed' } })).body.id

    // The fax: three G4 frames, every directory past the first 4,100 bytes the sniffer sees.
    const fax = faxTiff(FAX.map((lines) => textPage(lines, { fontPx: 34 })), { compression: 4 })
    expect(new DataView(fax.buffer, fax.byteOffset).getUint32(4, true)).toBeGreaterThan(SNIFF_BYTES)
    const tiff = await ingest(sc, { filename: 'fax.tif', contentType: 'image/tiff', bytes: fax })
    expect(tiff.doc).toMatchObject({ status: 'ready', page_count: 3, pages: { total: 3, ocr: 3, unreadable: 0, image_no_text: 0 } })
    FAX.forEach((lines, i) => expect(recall(lines, tiff.blocks.filter((b) => b.page === i + 1).map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.95))

    // The HEIC photo of a page (written by heif-enc where installed).
    let heicDoc: { id: string } | undefined
    if (heifEncoder()) {
      const heic = await ingest(sc, { filename: 'IMG_0412.HEIC', contentType: 'image/heic', bytes: heicOf(textPage(PHOTO, { fontPx: 34 })) })
      expect(heic.doc).toMatchObject({ status: 'ready', page_count: 1, pages: { total: 1, ocr: 1 } })
      expect(recall(PHOTO, heic.blocks.map((b) => b.text).join('\n'))).toBeGreaterThanOrEqual(0.95)
      heicDoc = heic.doc
    } else {
      console.warn('skipping the HEIC photo: no heif-enc command (Debian libheif-examples) to write one')
    }

    // A photo with no text: kept, ready_degraded, saying plainly what it is; no blocks.
    const photo = await ingest(sc, { filename: 'roof.jpg', contentType: 'image/jpeg', bytes: scanned(noisePage(900, 600, 11), { quality: 80 }) })
    expect(photo.doc).toMatchObject({ status: 'ready_degraded', block_count: 0, pages: { total: 1, ocr: 0, unreadable: 0, image_no_text: 1 } })
    expect(photo.doc.error_detail).toStartWith('image without text: page 1 holds a picture with no legible text')
    expect(photo.blocks).toEqual([])

    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: key, body: {} })
    expect(run.status).toBe(202)
    expect((await evaluationEnded(app, key, sc, run.body.id)).status).toBe('succeeded')
    const answers = (await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: key })).body.items
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: key })).body.items
    expect(answers.find((a: any) => a.question_key === 'annual_revenue')).toMatchObject({ value: '1250000.00', status: 'answered', source: 'fact' })
    const revenue = evidence.find((e: any) => e.question_key === 'annual_revenue')
    expect(revenue).toMatchObject({ document_id: tiff.doc.id, page: 2 })
    expect(revenue.quote).toContain('1,250,000.00')
    if (heicDoc) {
      expect(answers.find((a: any) => a.question_key === 'insured_value')).toMatchObject({ value: '640000.00', status: 'answered', source: 'fact' })
      expect(evidence.find((e: any) => e.question_key === 'insured_value')).toMatchObject({ document_id: heicDoc.id, page: 1 })
    }

    // The findings report lists the photo as an image without text.
    const report = await call(app.url, 'POST', `/v1/scenarios/${sc}/reports`, { token: key, body: { evaluation_id: run.body.id } })
    expect(report.status).toBe(202)
    let r: any
    for (let i = 0; i < 400; i++) {
      r = (await call(app.url, 'GET', `/v1/scenarios/${sc}/reports/${report.body.id}`, { token: key })).body
      if (r.status === 'succeeded' || r.status === 'failed') break
      await Bun.sleep(25)
    }
    expect(r.status).toBe('succeeded')
    const pdf = await fetch(`${app.url}/v1/scenarios/${sc}/reports/${report.body.id}/download`, { headers: { authorization: `Bearer ${key}` } })
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(await pdf.arrayBuffer())), { mergePages: true })
    const flat = text.replace(/\s+/g, ' ')
    expect(flat).toContain('fax.tif: 3 pages, 3 by OCR')
    expect(flat).toContain('roof.jpg: 1 page, image, no text')
  })
})

describe('hostile images are bounded', () => {
  let hostile: TestApp
  let k: string
  let sc: string
  beforeAll(async () => {
    hostile = await startApp({ env: { SVC_OCR_MAX_PAGES: '5' } })
    const t = await hostile.tenant()
    k = await hostile.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
    sc = (await call(hostile.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Hostile images' } })).body.id
  })
  afterAll(() => hostile?.stop())

  /** Ingests a file while probing /healthz; returns the document, the parse's record and how many probes were answered. */
  async function ingestProbing(file: SampleFile) {
    const { doc } = await uploadAndComplete(hostile, k, sc, file)
    let probes = 0
    let done = false
    const probe = (async () => {
      while (!done) {
        expect((await fetch(`${hostile.url}/healthz`)).status).toBe(200)
        probes++
        await Bun.sleep(10)
      }
    })()
    const settledDoc = await settled(hostile, k, sc, doc.id, 150_000)
    done = true
    await probe
    // What cannot vary with the machine: every probe answered 200 (above), and probes were answered while it ran.
    return { doc: settledDoc, parse: hostile.deps.parser.recent().at(-1)!, probes }
  }

  test('a HEIC claiming 100,000 x 100,000 pixels is refused from its header: failed, naming the pixel limit, at once', async () => {
    const files = [heifClaiming(100_000, 100_000), ...(heifEncoder() ? [claimingSize(heicOf(textPage(['A real photo'], { width: 320, height: 240 })), 100_000, 100_000)] : [])]
    for (const bytes of files) {
      const { doc, parse, probes } = await ingestProbing({ filename: 'huge.heic', contentType: 'image/heic', bytes })
      expect(doc).toMatchObject({ status: 'failed', block_count: 0, pages: { total: 1, unreadable: 1 } })
      expect(doc.error_detail).toBe('page 1 unreadable: the image has 10000000000 pixels, over the limit of 40000000 (SVC_OCR_MAX_PIXELS)')
      expect(parse.end).toBe('done')
      expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
      expect(probes).toBeGreaterThan(0)
    }
  })

  test('a TIFF of 10,000 frames (directories at the end): every frame accounted for, limits named, memory and the API unharmed', async () => {
    const frame = { width: 48, height: 48, strip: new Uint8Array(48 * 48).fill(255), compression: 1, photometric: 1, bitsPerSample: 8 }
    const bytes = tiffFile(Array.from({ length: 10_000 }, () => frame), { ifdAtEnd: true })
    const { doc, parse, probes } = await ingestProbing({ filename: 'frames.tiff', contentType: 'image/tiff', bytes })
    expect(doc.pages).toEqual({ total: 10_000, text_layer: 0, ocr: 0, blank: 5, unreadable: 9995, image_no_text: 0, low_confidence_blocks: 0 })
    expect(doc.status).toBe('failed')
    expect(doc.error_detail).toContain('SVC_OCR_MAX_PAGES')
    expect(doc.error_detail).toContain('SVC_PARSE_MAX_PAGES')
    expect(parse.end).toBe('done')
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
    expect(probes).toBeGreaterThan(0)
    // The service keeps serving: another document is read afterwards.
    const after = await ingestProbing({ filename: 'after.png', contentType: 'image/png', bytes: new Uint8Array(textPage(['Still serving'], { width: 600, height: 300 }).toBuffer('image/png')) })
    expect(after.doc).toMatchObject({ status: 'ready', pages: { ocr: 1 } })
  })
})
