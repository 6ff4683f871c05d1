/**
 * Emails (EML): a broker's message becomes header and body blocks, and each attachment a document
 * of the same case linked to it (a PDF read like any PDF, an attached email recursing, to a bounded
 * depth); a fact in an attachment answers a question citing that attachment. Attachment count and
 * nesting limits are outcomes, not crashes. Messages are composed with nodemailer's MailComposer.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, pdfSample, settled, uploadAndComplete, type Bytes } from '../helpers/samples'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { outlookMessage } from '../helpers/msg'

setDefaultTimeout(120_000)

/** An RFC 822 message with the given attachments. */
async function eml(subject: string, text: string, attachments: { filename: string; content: Uint8Array | string; contentType: string }[] = []): Promise<Bytes> {
  const mail = new MailComposer({
    from: 'Broker <broker@example.test>', to: 'underwriting@example.test', subject, text, date: new Date('2026-03-02T09:30:00Z'),
    attachments: attachments.map((a) => ({ ...a, content: typeof a.content === 'string' ? a.content : Buffer.from(a.content) })),
  })
  const built: Buffer = await new Promise((resolve, reject) => mail.compile().build((e: Error | null, m: Buffer) => (e ? reject(e) : resolve(m))))
  return new Uint8Array(built)
}

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_EMAIL_MAX_ATTACHMENTS: '20', SVC_EMAIL_MAX_DEPTH: '2' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app?.stop())

/** The documents of a case, by file name. */
async function documentsOf(sc: string) {
  const items = (await call(app.url, 'GET', `/v1/scenarios/${sc}/documents?limit=200`, { token: key })).body.items as any[]
  return items
}

/** Waits until every document of a case is processed. */
async function allSettled(sc: string, count: number) {
  const until = Date.now() + 60_000
  for (;;) {
    const docs = await documentsOf(sc)
    if (docs.length >= count && docs.every((d) => d.status !== 'processing')) return docs
    if (Date.now() > until) throw new Error(`documents: ${JSON.stringify(docs.map((d) => [d.filename, d.status]))}`)
    await Bun.sleep(50)
  }
}

describe('EML', () => {
  test('a broker email: header and body blocks; a PDF and a nested email attached become linked documents, read by their own types; a fact in the PDF is answered citing it', async () => {
    await publishedSet(app, key, [{ key: 'revenue', text: 'What is the annual revenue?', criticality: 'major', answer_type: 'number', fact_path: 'annual_revenue' }])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Broker submission' } })).body.id
    const inner = await eml('Fwd: loss history', 'No losses in the last five years.\n\nLoss ratio: 0.00', [{ filename: 'notes.txt', content: 'Sprinklered building.\n', contentType: 'text/plain' }])
    const message = await eml('Submission: Acme Holdings LLC', 'Please find the application attached.\n\nRegards,\nThe broker', [
      { filename: 'application.pdf', content: await pdfSample([['Business Loan Application', 'Annual revenue: 1,250,000.00']]), contentType: 'application/pdf' },
      { filename: 'loss-history.eml', content: inner, contentType: 'message/rfc822' },
    ])
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'submission.eml', contentType: 'message/rfc822', bytes: message })
    expect((await settled(app, key, sc, doc.id)).status).toBe('ready')
    expect((await allBlocks(app, key, sc, doc.id)).map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Submission: Acme Holdings LLC'],
      ['paragraph', 'From: Broker <broker@example.test>\nTo: underwriting@example.test\nDate: 2026-03-02T09:30:00.000Z\nSubject: Submission: Acme Holdings LLC'],
      ['paragraph', 'Please find the application attached.'],
      ['paragraph', 'Regards,\nThe broker'],
    ])
    const docs = await allSettled(sc, 4)
    const by = Object.fromEntries(docs.map((d) => [d.filename, d]))
    expect(by['application.pdf']).toMatchObject({ parent_document_id: doc.id, content_type: 'application/pdf', status: 'ready' })
    expect(by['loss-history.eml']).toMatchObject({ parent_document_id: doc.id, content_type: 'message/rfc822', status: 'ready' })
    expect(by['notes.txt']).toMatchObject({ parent_document_id: by['loss-history.eml'].id, content_type: 'text/plain', status: 'ready' })
    expect((await allBlocks(app, key, sc, by['application.pdf'].id)).map((b) => b.text)).toEqual(['Business Loan Application\nAnnual revenue: 1,250,000.00'])
    // Reading the message again stores no attachment twice.
    expect((await call(app.url, 'POST', `/v1/scenarios/${sc}/documents/${doc.id}/reingest`, { token: key })).status).toBe(202)
    expect((await settled(app, key, sc, doc.id)).status).toBe('ready')
    expect((await allSettled(sc, 4)).length).toBe(4)

    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: key, body: {} })
    expect((await evaluationEnded(app, key, sc, run.body.id)).status).toBe('succeeded')
    const [answer] = (await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: key })).body.items
    expect(answer).toMatchObject({ question_key: 'revenue', value: '1250000.00', status: 'answered' })
    const [evidence] = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: key })).body.items
    expect(evidence).toMatchObject({ document_id: by['application.pdf'].id, page: 1, quote: 'Annual revenue: 1,250,000.00' })
  })

  test('an email with 1,000 attachments keeps the first 20, naming the limit; a self-nesting email stops at the depth limit', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Hostile mail' } })).body.id
    const many = await eml('Many files', 'See attached.', Array.from({ length: 1000 }, (_, i) => ({ filename: `f${i}.txt`, content: `File ${i}\n`, contentType: 'text/plain' })))
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'many.eml', contentType: 'message/rfc822', bytes: many })
    const done = await settled(app, key, sc, doc.id, 60_000)
    expect(done.status).toBe('ready_degraded')
    expect(done.error_detail).toBe('980 attachments after the first 20 were not kept (SVC_EMAIL_MAX_ATTACHMENTS)')
    expect((await allSettled(sc, 21)).filter((d) => d.parent_document_id === doc.id).length).toBe(20)
    const parse = app.deps.parser.recent().find((r) => r.documentId === doc.id)!
    // Done: within the parser's time limit (a timeout would end it as 'timeout') and memory ceiling.
    expect(parse).toMatchObject({ end: 'done' })
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200)

    // An email inside an email inside an email ...: with a depth limit of 2, the third level keeps its attachments to itself.
    let nested = await eml('Level 4', 'Deepest.', [{ filename: 'deep.txt', content: 'Deep file\n', contentType: 'text/plain' }])
    for (const level of [3, 2, 1]) nested = await eml(`Level ${level}`, `Level ${level} body.`, [{ filename: `level${level + 1}.eml`, content: nested, contentType: 'message/rfc822' }])
    const sc2 = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Nested mail' } })).body.id
    await uploadAndComplete(app, key, sc2, { filename: 'level1.eml', contentType: 'message/rfc822', bytes: nested })
    const docs = await allSettled(sc2, 3)
    expect(docs.map((d) => d.filename).sort()).toEqual(['level1.eml', 'level2.eml', 'level3.eml'])
    const third = docs.find((d) => d.filename === 'level3.eml')!
    expect(third).toMatchObject({ status: 'ready_degraded', error_detail: '1 attachment of an email nested 2 deep was not kept (SVC_EMAIL_MAX_DEPTH)' })
  })

  test('an Outlook message (MSG): the same blocks as an EML, its PDF attachment a linked document read like any PDF', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Outlook submission' } })).body.id
    const msg = outlookMessage({
      subject: 'Submission: Beta Bakery', from: { name: 'Broker', email: 'broker@example.test' }, to: { name: 'Underwriting', email: 'uw@example.test' },
      body: 'Application attached.\r\n\r\nRegards',
      attachments: [{ filename: 'schedule.pdf', contentType: 'application/pdf', content: await pdfSample([['Schedule of values', 'Total insured value: 2,400,000.00']]) }],
    })
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'submission.msg', contentType: 'application/vnd.ms-outlook', bytes: msg })
    expect((await settled(app, key, sc, doc.id)).status).toBe('ready')
    expect((await allBlocks(app, key, sc, doc.id)).map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Submission: Beta Bakery'],
      ['paragraph', 'From: Broker <broker@example.test>\nTo: Underwriting <uw@example.test>\nSubject: Submission: Beta Bakery'],
      ['paragraph', 'Application attached.'],
      ['paragraph', 'Regards'],
    ])
    const docs = await allSettled(sc, 2)
    const pdf = docs.find((d) => d.filename === 'schedule.pdf')!
    expect(pdf).toMatchObject({ parent_document_id: doc.id, content_type: 'application/pdf', status: 'ready' })
    expect((await allBlocks(app, key, sc, pdf.id)).map((b) => b.text)).toEqual(['Schedule of values\nTotal insured value: 2,400,000.00'])
    // A fact in the attachment answers a question, citing the attachment.
    await publishedSet(app, key, [{ key: 'tiv', text: 'What is the total insured value?', criticality: 'major', answer_type: 'number', fact_path: 'total_insured_value' }], { name: 'Property' })
    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: key, body: {} })
    expect((await evaluationEnded(app, key, sc, run.body.id)).status).toBe('succeeded')
    const [answer] = (await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: key })).body.items
    expect(answer).toMatchObject({ question_key: 'tiv', value: '2400000.00' })
    const [evidence] = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: key })).body.items
    expect(evidence).toMatchObject({ document_id: pdf.id, page: 1, quote: 'Total insured value: 2,400,000.00' })
  })
})
