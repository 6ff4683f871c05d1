import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import {
  allBlocks, corruptPdfSample, csvSample, docxSample, htmlSample, markdownSample, partlyBrokenPdfSample, pdfSample,
  pngSample, whitePngSample, pptSample, putBytes, settled, startUpload, textSample, truncatedCsvSample, uploadAndComplete, brokenUtf8TextSample, type SampleFile,
} from '../helpers/samples'
import { documentText, toBlocks } from '../../server/documents/blocks'
import { ADAPTERS } from '../../server/documents/adapters'
import { documentIngestionJobKind } from '../../server/documents/ingestion'
import { startRunner, type Runner } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let key: string
let readKey: string
let otherKey: string
let scenarioId: string

const newCase = async (token = key) => (await call(app.url, 'POST', '/v1/scenarios', { token, body: { name: 'Docs case' } })).body.id as string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'notifications:write'])
  readKey = await app.apiKey(t.id, ['scenarios:read'])
  const other = await app.tenant()
  otherKey = await app.apiKey(other.id, ['scenarios:read', 'scenarios:write'])
  scenarioId = await newCase()
}, 60_000)
let resumedRunner: Runner | undefined
afterAll(async () => {
  await resumedRunner?.stop()
  await app?.stop()
}, 60_000)

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

/** Each adapter: the file, and the [page, kind, text] of every block it must give. */
const flows: Array<{ name: string; file: () => Promise<SampleFile>; pages: number; blocks: Array<[number, string, string]> }> = [
  {
    name: 'PDF (pdf-lib)', pages: 2,
    file: async () => ({ filename: 'statement.pdf', contentType: 'application/pdf', bytes: await pdfSample([['Bank statement', 'Balance 1,200 EUR'], ['Page two text']]) }),
    blocks: [[1, 'page_text', 'Bank statement\nBalance 1,200 EUR'], [2, 'page_text', 'Page two text']],
  },
  {
    name: 'DOCX (docx)', pages: 1,
    file: async () => ({ filename: 'summary.docx', contentType: DOCX, bytes: await docxSample() }),
    blocks: [[1, 'heading', 'Applicant Summary'], [1, 'paragraph', 'The applicant is Jane Doe.'], [1, 'paragraph', 'Annual income is 85,000 EUR.'], [1, 'table_row', 'Asset | Value'], [1, 'table_row', 'House | 350,000']],
  },
  {
    name: 'CSV', pages: 1,
    file: async () => ({ filename: 'ledger.csv', contentType: 'text/csv', bytes: csvSample() }),
    blocks: [[1, 'table_row', 'name | amount | currency'], [1, 'table_row', 'Alice | 100 | EUR'], [1, 'table_row', 'Bob, Jr. | 250 | USD'], [1, 'table_row', 'Carol | 75 | GBP']],
  },
  {
    // A spreadsheet's export where the decimal mark is a comma: ';' between fields, so 1.234,50 is one figure.
    name: 'CSV with semicolons and decimal commas', pages: 1,
    file: async () => ({ filename: 'kontoauszug.csv', contentType: 'text/csv', bytes: new TextEncoder().encode('Datum;Buchung;Betrag (EUR, brutto)\n01.02.2024;Miete;-1.234,50\n15.02.2024;Gehalt;4.100,00\n') }),
    blocks: [[1, 'table_row', 'Datum | Buchung | Betrag (EUR, brutto)'], [1, 'table_row', '01.02.2024 | Miete | -1.234,50'], [1, 'table_row', '15.02.2024 | Gehalt | 4.100,00']],
  },
  {
    name: 'TSV', pages: 1,
    file: async () => ({ filename: 'rent-roll.tsv', contentType: 'text/tab-separated-values', bytes: new TextEncoder().encode('Unit\tTenant\tMonthly rent\n1A\tSmith, J\t1,250.00\n2B\tDoe, A\t980.00\n') }),
    blocks: [[1, 'table_row', 'Unit | Tenant | Monthly rent'], [1, 'table_row', '1A | Smith, J | 1,250.00'], [1, 'table_row', '2B | Doe, A | 980.00']],
  },
  {
    name: 'HTML', pages: 1,
    file: async () => ({ filename: 'report.html', contentType: 'text/html', bytes: htmlSample() }),
    blocks: [[1, 'heading', 'Property Report'], [1, 'paragraph', 'The property is a detached house.'], [1, 'paragraph', 'Built 1990'], [1, 'paragraph', 'Roof renewed 2015'], [1, 'table_row', 'Room | Area'], [1, 'table_row', 'Kitchen | 20 m2']],
  },
  {
    name: 'Markdown', pages: 1,
    file: async () => ({ filename: 'medical.md', contentType: 'text/markdown', bytes: markdownSample() }),
    blocks: [[1, 'heading', 'Medical Disclosure'], [1, 'paragraph', 'The applicant reports no chronic conditions and takes no medication.'], [1, 'heading', 'History'], [1, 'paragraph', 'Appendectomy 2004'], [1, 'paragraph', 'Broken arm 2011'], [1, 'table_row', 'Test | Result'], [1, 'table_row', 'Blood pressure | 120/80']],
  },
  {
    name: 'plain text', pages: 2,
    file: async () => ({ filename: 'letter.txt', contentType: 'text/plain', bytes: textSample(), checksum: true }),
    blocks: [[1, 'paragraph', 'Employment letter.\nThe applicant works here.'], [1, 'paragraph', 'Salary is 5,000 per month.'], [2, 'paragraph', 'Page two: signed by HR.']],
  },
]

/** The stored notification envelopes of a task (the rendered body, verbatim). */
const envelopes = async (taskId: string) =>
  (await app.sql<{ body: string }[]>`select body from notification_deliveries where task_id = ${taskId} order by created_at`).map((r) => JSON.parse(r.body))

describe('the whole flow for each adapter', () => {
  for (const flow of flows) {
    test(flow.name, async () => {
      const file = await flow.file()
      const start = await startUpload(app, key, scenarioId, file)
      expect(start.status).toBe(201)
      expect(start.headers.get('location')).toBe(`/v1/scenarios/${scenarioId}/documents/${start.body.id}`)
      expect(start.body).toMatchObject({ scenario_id: scenarioId, filename: file.filename, content_type: file.contentType, size_bytes: file.bytes.byteLength, status: 'awaiting_upload' })
      expect(start.body.upload.method).toBe('PUT')
      expect(start.body.upload.headers).toEqual({ 'content-type': file.contentType })
      expect(start.body.upload.url).toStartWith(`${app.deps.config.baseUrl}/v1/uploads/`)
      const ttl = Date.parse(start.body.upload.expires_at) - Date.now()
      expect(ttl).toBeGreaterThan(14 * 60_000)
      expect(ttl).toBeLessThanOrEqual(15 * 60_000)

      const put = await putBytes(app, start.body.upload, file.bytes)
      expect(put.status).toBe(204)

      const complete = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`, {
        token: key, body: { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] },
      })
      expect(complete.status).toBe(202)
      expect(complete.body.status).toBe('processing')
      expect(complete.headers.get('location')).toBe(`/v1/scenarios/${scenarioId}/documents/${start.body.id}`)

      const done = await settled(app, key, scenarioId, start.body.id)
      expect(done).toMatchObject({ status: 'ready', page_count: flow.pages, block_count: flow.blocks.length })
      expect(done.error_code).toBeUndefined()
      const blocks = await allBlocks(app, readKey, scenarioId, start.body.id)
      expect(blocks.map((b) => [b.page, b.kind, b.text])).toEqual(flow.blocks)
      expect(blocks.map((b) => b.position)).toEqual(flow.blocks.map((_, i) => i))
      const text = [...documentText(blocks)]
      for (const b of blocks) {
        expect(b.document_id).toBe(start.body.id)
        expect(text.slice(b.char_start, b.char_end).join('')).toBe(b.text)
      }

      // The terminal transition went through the notification path, with no document content.
      const [envelope, ...more] = await envelopes(start.body.id)
      expect(more).toEqual([])
      expect(envelope).toMatchObject({ event_type: 'task.completed', task_kind: 'document_ingestion', task_id: start.body.id, outcome: { status: 'succeeded', summary: 'ingestion completed', error_code: null } })
      expect(JSON.stringify(envelope)).not.toContain(flow.blocks[0]![2].split('\n')[0]!)
    })
  }
})

describe('outcomes other than ready', () => {
  test('a PowerPoint 97-2003 file is accepted, stored and ends unsupported_pending saying why (task.failed, error_code unsupported_pending)', async () => {
    const ppt = pptSample()
    const { doc, complete } = await uploadAndComplete(app, key, scenarioId, { filename: 'deck.ppt', contentType: 'application/vnd.ms-powerpoint', bytes: ppt }, { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
    expect(complete.status).toBe(202)
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done).toMatchObject({ status: 'unsupported_pending', error_code: 'unsupported_pending', block_count: 0, error_detail: expect.stringContaining('PowerPoint 97-2003 presentations are not read') })
    expect(await allBlocks(app, key, scenarioId, doc.id)).toEqual([])
    const dl = await fetch(`${app.url}/v1/scenarios/${scenarioId}/documents/${doc.id}/download`, { headers: { authorization: `Bearer ${key}` } })
    expect(new Uint8Array(await dl.arrayBuffer())).toEqual(ppt)
    const [envelope] = await envelopes(doc.id)
    expect(envelope).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'unsupported_pending', summary: 'format not yet supported for automatic ingestion' } })
  })

  test('a blank PNG is read by OCR and ends ready with its page counted blank; a picture without text is kept as an image without text, never ready and never read text', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'blank.png', contentType: 'image/png', bytes: whitePngSample() })
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done).toMatchObject({ status: 'ready', block_count: 0, page_count: 1, pages: { total: 1, text_layer: 0, ocr: 0, blank: 1, unreadable: 0, low_confidence_blocks: 0 } })
    const picture = await uploadAndComplete(app, key, scenarioId, { filename: 'pattern.png', contentType: 'image/png', bytes: pngSample() })
    expect(await settled(app, key, scenarioId, picture.doc.id)).toMatchObject({
      status: 'ready_degraded', block_count: 0, error_detail: 'image without text: page 1 holds a picture with no legible text', pages: { total: 1, unreadable: 0, image_no_text: 1, ocr: 0 },
    })
  })

  test('a corrupt PDF ends failed with document_ingestion_failed and a content-free reason', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'broken.pdf', contentType: 'application/pdf', bytes: corruptPdfSample() }, { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done).toMatchObject({ status: 'failed', error_code: 'document_ingestion_failed', error_detail: 'the PDF structure is invalid', block_count: 0 })
    const [envelope] = await envelopes(doc.id)
    expect(envelope).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'document_ingestion_failed', summary: 'ingestion failed: the PDF structure is invalid' } })
  })

  test('a PDF with a missing page ends ready_degraded with the readable pages, and the summary says so', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'partial.pdf', contentType: 'application/pdf', bytes: await partlyBrokenPdfSample() }, { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done).toMatchObject({
      status: 'ready_degraded', page_count: 3, block_count: 2, error_detail: 'page 3 unreadable: the page could not be read',
      pages: { total: 3, text_layer: 2, ocr: 0, blank: 0, unreadable: 1, low_confidence_blocks: 0 },
    })
    expect((await allBlocks(app, key, scenarioId, doc.id)).map((b) => [b.page, b.text])).toEqual([[1, 'Readable page one'], [2, 'Readable page two']])
    const [envelope] = await envelopes(doc.id)
    expect(envelope).toMatchObject({ event_type: 'task.completed', outcome: { status: 'succeeded', error_code: null, summary: 'ingestion completed with a degraded parse (some content may be incomplete)' } })
  })

  test('a CSV cut inside a quoted field and text with invalid UTF-8 end ready_degraded', async () => {
    const csv = await uploadAndComplete(app, key, scenarioId, { filename: 'cut.csv', contentType: 'text/csv', bytes: truncatedCsvSample() })
    const txt = await uploadAndComplete(app, key, scenarioId, { filename: 'mangled.txt', contentType: 'text/plain', bytes: brokenUtf8TextSample() })
    expect(await settled(app, key, scenarioId, csv.doc.id)).toMatchObject({ status: 'ready_degraded', block_count: 3, error_detail: '1 malformed record was skipped' })
    expect(await settled(app, key, scenarioId, txt.doc.id)).toMatchObject({ status: 'ready_degraded', block_count: 3 })
  })
})

describe('bytes gone from the store', () => {
  test('the job retries while the bytes cannot be read, and giving up ends the document failed', async () => {
    const start = await startUpload(app, key, scenarioId, { filename: 'gone.txt', contentType: 'text/plain', bytes: textSample() })
    await putBytes(app, start.body.upload, textSample())
    const [{ blob_key }] = await app.sql`select blob_key from documents where id = ${start.body.id}` as unknown as [{ blob_key: string }]
    await app.deps.blobs.delete(blob_key)
    const complete = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`, { token: key, body: { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] } })
    expect(complete.status).toBe(202)
    // The first run fails (nothing to read) and is rescheduled; the document stays processing.
    const deadline = Date.now() + 10_000
    let job: { attempts: number; last_error: string | null } | undefined
    while (Date.now() < deadline) {
      ;[job] = await app.sql<{ attempts: number; last_error: string | null }[]>`select attempts, last_error from jobs where kind = 'document_ingestion' and payload->>'documentId' = ${start.body.id}`
      if (job && job.attempts >= 1 && job.last_error) break
      await Bun.sleep(25)
    }
    expect(job!.last_error).toContain('not in the blob store')
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${start.body.id}`, { token: key })).body.status).toBe('processing')
    // What the runner does once the kind's attempts are spent.
    const kind = documentIngestionJobKind()
    const [{ tenant_id }] = await app.sql`select tenant_id from documents where id = ${start.body.id}` as unknown as [{ tenant_id: string }]
    const payload = { documentId: start.body.id, generation: 1 }
    await app.sql.begin((tx) => kind.onGiveUp!(tx, { id: crypto.randomUUID(), kind: 'document_ingestion', tenantId: tenant_id, payload, attempts: 5 }, app.deps))
    const done = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${start.body.id}`, { token: key })
    expect(done.body).toMatchObject({ status: 'failed', error_code: 'document_ingestion_failed', error_detail: 'the stored bytes could not be read' })
    const [envelope] = await envelopes(start.body.id)
    expect(envelope).toMatchObject({ event_type: 'task.failed', outcome: { error_code: 'document_ingestion_failed', summary: 'ingestion failed: the stored bytes could not be read' } })
    // A later run of the same job finds the document finished and changes nothing.
    await app.sql.begin((tx) => kind.handler(tx, { id: crypto.randomUUID(), kind: 'document_ingestion', tenantId: tenant_id, payload, attempts: 2 }, app.deps))
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${start.body.id}`, { token: key })).body.status).toBe('failed')
  })
})

describe('reingest, idempotency and inline notifications', () => {
  test('reingest runs the job again and the same bytes give the same block ids', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'again.md', contentType: 'text/markdown', bytes: markdownSample() })
    await settled(app, key, scenarioId, doc.id)
    const before = await allBlocks(app, key, scenarioId, doc.id)
    const jobsBefore = (await app.sql`select count(*)::int as n from case_events where data->>'document_id' = ${doc.id}`)[0]!.n
    // Hold the job runner so the second reingest surely meets the document still processing.
    await app.runner?.stop()
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${doc.id}/reingest`, { token: key })
    expect(r.status).toBe(202)
    expect(r.body.status).toBe('processing')
    // A reingest of a processing document supersedes the run under way (its job then does nothing).
    const again = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${doc.id}/reingest`, { token: key })
    expect(again.status).toBe(202)
    resumedRunner = startRunner(app.deps, JOB_KINDS, { pollMs: 20, drainTimeoutMs: 5_000 })
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done.status).toBe('ready')
    const after = await allBlocks(app, key, scenarioId, doc.id)
    expect(after).toEqual(before)
    await Bun.sleep(200) // the superseded job has run by now, and written nothing
    const events = await app.sql<{ data: { status: string } }[]>`select data from case_events where data->>'document_id' = ${doc.id} order by seq`
    expect(events.length).toBe(jobsBefore + 3)
    expect(events.slice(-3).map((e) => e.data.status)).toEqual(['processing', 'processing', 'ready'])
  })

  test('reingest of a document still awaiting upload is 409; a read-only key gets 403', async () => {
    const start = await startUpload(app, key, scenarioId, { filename: 'x.txt', contentType: 'text/plain', bytes: textSample() })
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/reingest`, { token: key })
    expect(problemOf(r).status).toBe(409)
    const ro = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/reingest`, { token: readKey })
    expect(problemOf(ro).type).toBe('urn:svc:error:forbidden')
  })

  test('complete with an Idempotency-Key replays its 202 and enqueues one job; a second complete without it is 409', async () => {
    const start = await startUpload(app, key, scenarioId, { filename: 'idem.txt', contentType: 'text/plain', bytes: textSample() })
    await putBytes(app, start.body.upload, textSample())
    const path = `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`
    const k = crypto.randomUUID()
    const a = await call(app.url, 'POST', path, { token: key, body: {}, headers: { 'idempotency-key': k } })
    const b = await call(app.url, 'POST', path, { token: key, body: {}, headers: { 'idempotency-key': k } })
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(b.body).toEqual(a.body)
    expect(b.headers.get('location')).toBe(a.headers.get('location'))
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    const c = await call(app.url, 'POST', path, { token: key })
    expect(problemOf(c)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    const processing = await app.sql`select count(*)::int as n from case_events where data->>'document_id' = ${start.body.id} and data->>'status' = 'processing'`
    expect(processing[0]!.n).toBe(1)
    expect((await settled(app, key, scenarioId, start.body.id)).status).toBe('ready')
  })

  test('inline notifications create subscriptions; an http webhook is 422 with a pointer and nothing changes', async () => {
    const start = await startUpload(app, key, scenarioId, { filename: 'n.txt', contentType: 'text/plain', bytes: textSample() })
    await putBytes(app, start.body.upload, textSample())
    const path = `/v1/scenarios/${scenarioId}/documents/${start.body.id}/complete`
    const bad = await call(app.url, 'POST', path, { token: key, body: { notifications: [{ channel: 'webhook', webhook: { url: 'http://example.test/hook' } }] } })
    const p = problemOf(bad)
    expect(p.status).toBe(422)
    expect(p.errors![0]!.pointer).toStartWith('/notifications/0/webhook')
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${start.body.id}`, { token: key })).body.status).toBe('awaiting_upload')
    expect((await app.sql`select count(*)::int as n from jobs where payload->>'documentId' = ${start.body.id}`)[0]!.n).toBe(0)
    const ok = await call(app.url, 'POST', path, { token: key, body: { notifications: [{ channel: 'email', email: { address: 'a@example.test' } }, { channel: 'webhook', webhook: { url: 'https://example.test/hook' } }] } })
    expect(ok.status).toBe(202)
    const subs = await app.sql`select channel from task_notification_subscriptions where task_kind = 'document_ingestion' and task_id = ${start.body.id} order by channel`
    expect(subs.map((s) => s.channel)).toEqual(['email', 'webhook'])
    await settled(app, key, scenarioId, start.body.id)
    expect((await envelopes(start.body.id)).map((e) => e.event_type)).toEqual(['task.completed', 'task.completed'])
  })
})

describe('reading documents', () => {
  test('list: newest first, items equal the single GET, status filter, pages with a cursor', async () => {
    const c = await newCase()
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await uploadAndComplete(app, key, c, { filename: `f${i}.txt`, contentType: 'text/plain', bytes: textSample() })).doc.id)
    const waiting = (await startUpload(app, key, c, { filename: 'w.txt', contentType: 'text/plain', bytes: textSample() })).body.id
    for (const id of ids) await settled(app, key, c, id)
    const all = await call(app.url, 'GET', `/v1/scenarios/${c}/documents`, { token: readKey })
    expect(all.status).toBe(200)
    expect(all.body.items.map((d: { id: string }) => d.id)).toEqual([waiting, ...ids.reverse()])
    expect(all.body.next_cursor).toBeNull()
    const one = await call(app.url, 'GET', `/v1/scenarios/${c}/documents/${waiting}`, { token: readKey })
    expect(all.body.items[0]).toEqual(one.body)
    expect('upload' in one.body).toBe(false)
    const ready = await call(app.url, 'GET', `/v1/scenarios/${c}/documents?status=ready&limit=2`, { token: readKey })
    expect(ready.body.items.map((d: { status: string }) => d.status)).toEqual(['ready', 'ready'])
    const next = await call(app.url, 'GET', `/v1/scenarios/${c}/documents?status=ready&limit=2&cursor=${encodeURIComponent(ready.body.next_cursor)}`, { token: readKey })
    expect(next.body.items.length).toBe(1)
    expect(next.body.next_cursor).toBeNull()
    const wrongScope = await call(app.url, 'GET', `/v1/scenarios/${c}/documents?limit=2&cursor=${encodeURIComponent(ready.body.next_cursor)}`, { token: readKey })
    expect(problemOf(wrongScope).type).toBe('urn:svc:error:invalid_cursor')
    const badStatus = await call(app.url, 'GET', `/v1/scenarios/${c}/documents?status=done`, { token: readKey })
    expect(problemOf(badStatus).errors![0]!.pointer).toBe('/status')
  })

  test('blocks page in reading order with a cursor and filter by page', async () => {
    const pages = Array.from({ length: 5 }, (_, i) => [`Page ${i + 1} heading`])
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'five.pdf', contentType: 'application/pdf', bytes: await pdfSample(pages) })
    await settled(app, key, scenarioId, doc.id)
    const walked = await allBlocks(app, key, scenarioId, doc.id, 2)
    expect(walked.map((b) => b.text)).toEqual(pages.map((p) => p[0]))
    const third = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${doc.id}/blocks?page=3`, { token: readKey })
    expect(third.body.items.map((b: { page: number; text: string }) => [b.page, b.text])).toEqual([[3, 'Page 3 heading']])
    const big = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${doc.id}/blocks?limit=201`, { token: readKey })
    expect(problemOf(big).errors![0]!.pointer).toBe('/limit')
  })

  test('blocks are stored exactly as the adapter cut them, with the characters a bulk write escapes (tab, backslash, \\N, line breaks)', async () => {
    // On PostgreSQL blocks stream in through COPY's text format, which escapes these; embedded, they travel as JSON.
    const text = new TextEncoder().encode('Tab\there, a back\\slash, a literal \\N and \\.\nsecond line of the paragraph 🏠 Größe\n\nNext paragraph\twith C:\\path\\file\r\n')
    const csv = new TextEncoder().encode('Path,Note\n"C:\\data\\roll.xlsx","tab\there ""quoted"" \\N"\n"\\","line\nbreak"\n')
    for (const [file, adapter] of [[{ filename: 'escapes.txt', contentType: 'text/plain', bytes: text }, 'text'], [{ filename: 'escapes.csv', contentType: 'text/csv', bytes: csv }, 'csv']] as const) {
      const { doc } = await uploadAndComplete(app, key, scenarioId, file)
      expect((await settled(app, key, scenarioId, doc.id)).status).toBe('ready')
      const stored = await allBlocks(app, key, scenarioId, doc.id)
      const expected = toBlocks(doc.id, await ADAPTERS[adapter](file.bytes))
      expect(expected.length).toBeGreaterThan(1)
      expect(stored.map((b) => [b.id, b.position, b.page, b.kind, b.text, b.char_start, b.char_end, b.cells ?? null])).toEqual(expected.map((b) => [b.id, b.position, b.page, b.kind, b.text, b.charStart, b.charEnd, b.cells]))
    }
  })

  test('download streams the bytes with their content type, length and an attachment disposition', async () => {
    const bytes = await docxSample()
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'Résumé final.docx', contentType: DOCX, bytes })
    const res = await fetch(`${app.url}/v1/scenarios/${scenarioId}/documents/${doc.id}/download`, { headers: { authorization: `Bearer ${readKey}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(DOCX)
    expect(res.headers.get('content-length')).toBe(String(bytes.byteLength))
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="R?sum? final.docx"; filename*=UTF-8''R%C3%A9sum%C3%A9%20final.docx`)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('x-request-id')).toBeString()
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes)
  })

  test('download before upload is 409; another workspace gets 404 on every document route', async () => {
    const start = await startUpload(app, key, scenarioId, { filename: 'x.txt', contentType: 'text/plain', bytes: textSample() })
    const early = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${start.body.id}/download`, { token: key })
    expect(problemOf(early).status).toBe(409)
    const base = `/v1/scenarios/${scenarioId}/documents`
    for (const [method, path] of [['GET', base], ['GET', `${base}/${start.body.id}`], ['GET', `${base}/${start.body.id}/blocks`], ['GET', `${base}/${start.body.id}/download`], ['POST', `${base}/${start.body.id}/complete`], ['POST', `${base}/${start.body.id}/reingest`]] as const) {
      const r = await call(app.url, method, path, { token: otherKey, ...(method === 'POST' ? { body: {} } : {}) })
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:not_found', status: 404 })
    }
    const foreign = await startUpload(app, otherKey, scenarioId, { filename: 'x.txt', contentType: 'text/plain', bytes: textSample() })
    expect(problemOf(foreign).status).toBe(404)
  })

  test('embed sessions are admitted to the document reads and the event stream (access table)', async () => {
    const doc = (await call(app.url, 'GET', '/v1/openapi.json')).body
    const rule = (path: string, method = 'get') => doc.paths[path][method]['x-svc-access']
    for (const p of ['/v1/scenarios/{scenarioId}/documents', '/v1/scenarios/{scenarioId}/documents/{documentId}', '/v1/scenarios/{scenarioId}/documents/{documentId}/blocks', '/v1/scenarios/{scenarioId}/documents/{documentId}/download', '/v1/scenarios/{scenarioId}/events']) {
      expect(rule(p).embed).toBe(true)
    }
    expect(rule('/v1/scenarios/{scenarioId}/documents', 'post').embed).toBe(false)
    expect(rule('/v1/scenarios/{scenarioId}/documents/{documentId}/complete', 'post').scopes).toEqual(['scenarios:write'])
  })
})
