/**
 * PDF fidelity through the service (issue 24): a PDF that needs a password fails with its own
 * machine-readable reason (not as a corrupt file), an owner-password-only PDF reads; filled form
 * fields answer fact questions with evidence on their page; CJK text with a predefined CMap is read;
 * a text layer over an image is kept whatever OCR finds.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete } from '../helpers/samples'
import { CJK_TEXT, cjkPdf, encryptedPdf, filledFormPdf, textOverImagePdf, unmappedGlyphsPdf } from '../helpers/pdf-fixtures'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'

setDefaultTimeout(300_000)

let app: TestApp
let key: string
let scenarioId: string
beforeAll(async () => {
  // OCR reads two pages here; generous limits, so a busy machine slows the test instead of failing it.
  app = await startApp({ env: { SVC_OCR_PAGE_TIMEOUT_MS: '120000', SVC_PARSE_TIMEOUT_MS: '300000' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'notifications:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'PDF fidelity' } })).body.id
})
afterAll(() => app?.stop())

/** The stored notification envelopes of a task. */
const envelopes = async (taskId: string) =>
  (await app.sql<{ body: string }[]>`select body from notification_deliveries where task_id = ${taskId} order by created_at`).map((r) => JSON.parse(r.body))

describe('password-protected PDFs', () => {
  test('a PDF that needs a user password ends failed with document_password_protected and says to remove the password', async () => {
    const { doc, complete } = await uploadAndComplete(app, key, scenarioId, { filename: 'statement.pdf', contentType: 'application/pdf', bytes: await encryptedPdf('user') }, { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
    expect(complete.status, complete.text).toBe(202)
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done).toMatchObject({ status: 'failed', error_code: 'document_password_protected', error_detail: 'the PDF is password-protected: remove the password and upload it again', block_count: 0 })
    const [envelope] = await envelopes(doc.id)
    expect(envelope).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'document_ingestion_failed', summary: 'ingestion failed: the PDF is password-protected: remove the password and upload it again' } })
  })

  test('a PDF with an owner password only reads as any other', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'owner-only.pdf', contentType: 'application/pdf', bytes: await encryptedPdf('owner-only') })
    expect(await settled(app, key, scenarioId, doc.id)).toMatchObject({ status: 'ready', block_count: 1 })
    expect((await allBlocks(app, key, scenarioId, doc.id)).map((b) => b.text)).toEqual(['Statement balance: 1,234.56'])
  })
})

describe('filled forms', () => {
  test('each filled AcroForm field answers its fact question with evidence on its page; an empty field adds nothing', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
    await publishedSet(app, k, [
      { key: 'name', text: 'Who is the applicant?', criticality: 'major', answer_type: 'text', fact_path: 'applicant_name' },
      { key: 'revenue', text: 'What is the annual revenue?', criticality: 'major', answer_type: 'number', fact_path: 'annual_revenue' },
      { key: 'tin', text: 'What is the tax id?', criticality: 'minor', answer_type: 'text', fact_path: 'tax_id' },
      { key: 'bankruptcy', text: 'Any prior bankruptcy?', criticality: 'minor', answer_type: 'boolean', fact_path: 'prior_bankruptcy' },
      { key: 'entity', text: 'What type of entity?', criticality: 'minor', answer_type: 'text', fact_path: 'entity_type' },
      { key: 'state', text: 'Where is it incorporated?', criticality: 'minor', answer_type: 'text', fact_path: 'state_of_incorporation' },
    ])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Filled form' } })).body.id
    const { doc } = await uploadAndComplete(app, k, sc, { filename: 'application.pdf', contentType: 'application/pdf', bytes: await filledFormPdf() })
    expect((await settled(app, k, sc, doc.id)).status).toBe('ready')
    const blocks = await allBlocks(app, k, sc, doc.id)
    expect(blocks.map((b) => [b.page, b.text])).toEqual([
      [1, 'Credit application: cover page'],
      [2, 'Section A: applicant\nApplicant name\nAnnual revenue:\nGuarantor\nPrior bankruptcy\nEntity type\nState of incorporation'],
      [2, 'Applicant name: Acme Holdings LLC\nAnnual revenue: 1,250,000.00\nTax ID: 12-3456789\nPrior bankruptcy: Yes\nEntity type: LLC\nState of incorporation: Delaware'],
    ])
    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: k, body: {} })
    expect((await evaluationEnded(app, k, sc, run.body.id)).status).toBe('succeeded')
    const answers = Object.fromEntries((await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: k })).body.items.map((a: any) => [a.question_key, a.value]))
    expect(answers).toEqual({ name: 'Acme Holdings LLC', revenue: '1250000.00', tin: '12-3456789', bankruptcy: true, entity: 'LLC', state: 'Delaware' })
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: k })).body.items
    for (const key of Object.keys(answers)) expect(evidence.find((e: any) => e.question_key === key)).toMatchObject({ document_id: doc.id, page: 2, block_id: blocks[2]!.id })
    expect(evidence.find((e: any) => e.question_key === 'revenue').quote).toBe('Annual revenue: 1,250,000.00')
  })
})

describe('fonts without an embedded Unicode mapping', () => {
  test('Chinese text in a non-embedded font with the predefined CMap GBK-EUC-H is read from the packaged CMaps', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'invoice-cn.pdf', contentType: 'application/pdf', bytes: await cjkPdf('GBK-EUC-H') })
    expect(await settled(app, key, scenarioId, doc.id)).toMatchObject({ status: 'ready', pages: { total: 2, text_layer: 2 } })
    expect((await allBlocks(app, key, scenarioId, doc.id)).map((b) => [b.page, b.text])).toEqual([[1, 'Cover page'], [2, `Invoice 2024\n${CJK_TEXT}`]])
  })

  test('glyphs nothing maps to characters: the rest is read, the document is ready_degraded and names the page', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'unmapped.pdf', contentType: 'application/pdf', bytes: await unmappedGlyphsPdf() })
    expect(await settled(app, key, scenarioId, doc.id)).toMatchObject({ status: 'ready_degraded', error_detail: 'page 2: characters without a Unicode mapping were left out' })
    expect((await allBlocks(app, key, scenarioId, doc.id)).map((b) => [b.page, b.text])).toEqual([[1, 'Cover page'], [2, 'Invoice 2024']])
  })
})

describe('a text layer over an image', () => {
  test('OCR finds nothing on the image: the text layer is kept and the page is text_layer, never blank', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'stamped.pdf', contentType: 'application/pdf', bytes: await textOverImagePdf('blank') })
    expect(await settled(app, key, scenarioId, doc.id, 280_000)).toMatchObject({ status: 'ready', pages: { total: 1, text_layer: 1, ocr: 0, blank: 0, unreadable: 0 } })
    expect((await allBlocks(app, key, scenarioId, doc.id)).map((b) => [b.source, b.text])).toEqual([['text', 'Test']])
  })

  test('OCR reads words on the image: they are added after the text layer, which stays', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'scan-with-stamp.pdf', contentType: 'application/pdf', bytes: await textOverImagePdf('printed') })
    expect(await settled(app, key, scenarioId, doc.id, 280_000)).toMatchObject({ status: 'ready', pages: { total: 1, ocr: 1, blank: 0, unreadable: 0 } })
    const blocks = await allBlocks(app, key, scenarioId, doc.id)
    expect(blocks[0]).toMatchObject({ source: 'text', text: 'Test' })
    const ocr = blocks.slice(1).map((b) => b.text).join('\n')
    expect(blocks.slice(1).every((b) => b.source === 'ocr')).toBe(true)
    expect(ocr).toContain('4471')
    expect(ocr).toContain('Harbour Bakery')
  })
})
