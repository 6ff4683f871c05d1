/**
 * Email as it really comes: an MSG whose body is only binary HTML, an MSG in a legacy code page
 * (CP932), each read in full (known words recall >= 0.95) with a fact answering a fact_path
 * question citing that message; and attachments that are no document (a GIF logo, an S/MIME
 * signature, a delivery report) are kept as unsupported_pending documents whose detail says what
 * each one is.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import iconv from 'iconv-lite'
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete } from '../helpers/samples'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { outlookMessage } from '../helpers/msg'

setDefaultTimeout(120_000)

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app?.stop())

/** Share of the expected words found in the text. */
function recall(expected: string, text: string): number {
  const split = (s: string) => s.split(/[\s,:、。]+/).filter(Boolean)
  const have = new Set(split(text))
  const words = split(expected)
  return words.filter((w) => have.has(w)).length / words.length
}

const people = { from: { name: 'Harbor Brokers', email: 'broker@example.test' }, to: { name: 'Underwriting', email: 'uw@example.test' } }
const HTML_BODY = 'Dear underwriter, please find the renewal figures below. Annual revenue: 1,250,000.00 Thank you'
const JA_BODY = 'お世話になっております。 倉庫の保険の件です。 Insured value: 640,000.00'

describe('email as it really comes', () => {
  test('an HTML-only MSG and a CP932 MSG are read in full; a fact in each answers a fact_path question citing that message', async () => {
    await publishedSet(app, key, [
      { key: 'revenue', text: 'What is the annual revenue?', criticality: 'major', answer_type: 'number', fact_path: 'annual_revenue' },
      { key: 'insured', text: 'What is the insured value?', criticality: 'major', answer_type: 'number', fact_path: 'insured_value' },
    ])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Outlook submissions' } })).body.id
    const html = new TextEncoder().encode(`<html><head><meta charset="utf-8"></head><body><p>Dear underwriter, please find the renewal figures below.</p><p>Annual revenue: 1,250,000.00</p><p>Thank you</p></body></html>`)
    const htmlMsg = await uploadAndComplete(app, key, sc, { filename: 'renewal.msg', contentType: 'application/vnd.ms-outlook', bytes: outlookMessage({ subject: 'Renewal figures', ...people, html }) })
    const ja = outlookMessage({
      subject: '倉庫の保険', ...people, body: 'お世話になっております。\r\n\r\n倉庫の保険の件です。\r\n\r\nInsured value: 640,000.00\r\n',
      ansi: { codepage: 932, encode: (s) => iconv.encode(s, 'cp932') },
    })
    const jaMsg = await uploadAndComplete(app, key, sc, { filename: 'warehouse.msg', contentType: 'application/vnd.ms-outlook', bytes: ja })
    for (const d of [htmlMsg.doc, jaMsg.doc]) expect((await settled(app, key, sc, d.id)).status).toBe('ready')
    const textOf = async (id: string) => (await allBlocks(app, key, sc, id)).map((b) => b.text).join('\n')
    expect(recall(HTML_BODY, await textOf(htmlMsg.doc.id))).toBeGreaterThanOrEqual(0.95)
    expect(recall(JA_BODY, await textOf(jaMsg.doc.id))).toBeGreaterThanOrEqual(0.95)
    expect(await textOf(jaMsg.doc.id)).toContain('倉庫の保険')

    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: key, body: {} })
    expect((await evaluationEnded(app, key, sc, run.body.id)).status).toBe('succeeded')
    const answers = (await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: key })).body.items
    expect(answers.find((a: any) => a.question_key === 'revenue')).toMatchObject({ value: '1250000.00', status: 'answered' })
    expect(answers.find((a: any) => a.question_key === 'insured')).toMatchObject({ value: '640000.00', status: 'answered' })
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: key })).body.items
    expect(evidence.find((e: any) => e.question_key === 'revenue')).toMatchObject({ document_id: htmlMsg.doc.id, page: 1, quote: 'Annual revenue: 1,250,000.00' })
    expect(evidence.find((e: any) => e.question_key === 'insured')).toMatchObject({ document_id: jaMsg.doc.id, page: 1, quote: 'Insured value: 640,000.00' })
  })

  test('attachments that are no document end unsupported_pending with a detail saying what each is', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Signed mail' } })).body.id
    const gif = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x21, 0xf9, 4, 1, 0, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b])
    const mail = new MailComposer({
      from: 'Broker <broker@example.test>', to: 'uw@example.test', subject: 'Signed submission', text: 'See attached.',
      attachments: [
        { filename: 'logo.gif', content: Buffer.from(gif), contentType: 'image/gif' },
        { filename: 'smime.p7s', content: Buffer.from([0x30, 0x82, 0x01, 0x00]), contentType: 'application/pkcs7-signature' },
        { filename: 'delivery-status', content: 'Reporting-MTA: dns; mx.example.test\r\n\r\nFinal-Recipient: rfc822; gone@example.test\r\nAction: failed\r\n', contentType: 'message/delivery-status' },
      ],
    })
    const built: Buffer = await new Promise((resolve, reject) => mail.compile().build((e: Error | null, m: Buffer) => (e ? reject(e) : resolve(m))))
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'signed.eml', contentType: 'message/rfc822', bytes: new Uint8Array(built) })
    expect((await settled(app, key, sc, doc.id)).status).toBe('ready')
    let children: any[] = []
    for (const until = Date.now() + 30_000; Date.now() < until; await Bun.sleep(50)) {
      children = ((await call(app.url, 'GET', `/v1/scenarios/${sc}/documents?limit=50`, { token: key })).body.items as any[]).filter((d) => d.parent_document_id === doc.id)
      if (children.length === 3 && children.every((c) => c.status !== 'processing')) break
    }
    const by = Object.fromEntries(children.map((c) => [c.filename, c]))
    expect(by['logo.gif']).toMatchObject({ status: 'unsupported_pending', error_code: 'unsupported_pending', error_detail: expect.stringMatching(/^a GIF image/) })
    expect(by['smime.p7s']).toMatchObject({ status: 'unsupported_pending', error_detail: 'an S/MIME signature of the email, not a document' })
    expect(by['delivery-status']).toMatchObject({ status: 'unsupported_pending', error_detail: 'a delivery status report (a bounce), not a document' })
  })
})
