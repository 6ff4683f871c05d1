import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { startModelStub, type ModelStub, type StubReply, type StubRequest } from '../helpers/model-stub'
import type { SampleFile } from '../helpers/samples'
import { caseWith } from '../helpers/underwriting-pack'
import { MODEL_TYPE_BLOCKS, MODEL_TYPE_CHARS } from '../../server/evaluation/model-typing'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(120_000)

let app: TestApp
let stub: ModelStub
let key: string

beforeAll(async () => {
  stub = startModelStub()
  // Retries allowed for other calls: typing must still make one attempt only.
  app = await startApp({ env: { SVC_MODEL_URL: stub.url, SVC_MODEL_NAME: 'stub-model', SVC_MODEL_API_KEY: 'sk-test-secret', SVC_MODEL_MAX_RETRIES: '2', SVC_MODEL_TIMEOUT_MS: '2000' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write'])
})
afterAll(async () => { await app.stop(); stub.stop() })

const text = (filename: string, body: string): SampleFile => ({ filename, contentType: 'text/plain', bytes: new TextEncoder().encode(body) as SampleFile['bytes'] })
const system = (r: StubRequest) => r.body.messages.find((m) => m.role === 'system')?.content ?? ''
const user = (r: StubRequest) => r.body.messages.find((m) => m.role === 'user')?.content ?? ''
const typingRequests = () => stub.typing
const requestsFor = (marker: string) => typingRequests().filter((r) => user(r).includes(marker))

// Documents the rules cannot type (no title, fewer than 3 points): each carries a marker the stub replies by.
const unclear = (marker: string) => `Summary prepared for the committee meeting, reference ${marker}.\n\nFigures follow in the schedule kept by the office.\n\nPrepared by the regional desk.`
const REPLIES: Record<string, () => StubReply | Promise<StubReply>> = {
  'MARK-TYPED': () => ({ json: { type: 'loss_run', confidence: 0.97 } }),
  'MARK-NOCONF': () => ({ json: { type: 'rent_roll' } }),
  'MARK-UNKNOWN': () => ({ json: { type: 'invoice', confidence: 0.9 } }),
  'MARK-OUTAGE': () => ({ status: 503, body: '{"error":{"message":"overloaded"}}' }),
  'MARK-HANG': () => new Promise<StubReply>(() => {}),
  'MARK-LONG': () => ({ json: { type: 'pay_stub', confidence: 0.6 } }),
}

describe('document types from the model when one is configured', () => {
  test('an untyped document is typed by the model in one bounded request; a sure one is not sent; a reply naming no type, a vendor error or a timeout leaves the rules type with a note and the document ready', async () => {
    stub.respondTyping((req) => {
      const marker = Object.keys(REPLIES).find((m) => user(req).includes(m))
      return marker ? REPLIES[marker]!() : { json: { type: 'other' } }
    })
    stub.reset()
    const long = Array.from({ length: 300 }, (_, i) => `Paragraph ${i} of the committee notes, reference MARK-LONG, kept for the file.`).join('\n\n')
    const files = [
      text('scan0001-FILENAME-TYPED.txt', unclear('MARK-TYPED')),
      text('scan0002.txt', unclear('MARK-NOCONF')),
      text('scan0003.txt', unclear('MARK-UNKNOWN')),
      text('scan0004.txt', unclear('MARK-OUTAGE')),
      text('scan0005.txt', unclear('MARK-HANG')),
      text('scan0006.txt', long),
      text('scan0007.txt', 'Bank Statement MARK-SURE\n\nStatement period: 2026-01-01 to 2026-01-31\n\nOpening balance: 1,000.00\n\nTotal credits: 500.00\n\nTotal debits: 200.00\n\nClosing balance: 1,300.00'),
    ]
    const { docs } = await caseWith(app, key, files)
    const doc = (n: number) => docs[files[n]!.filename]

    // Typed by the model: its type, its confidence capped at 0.9, the source says so; checks follow the model's type.
    expect(doc(0)).toMatchObject({ status: 'ready', document_type: 'loss_run', document_type_confidence: 0.9, document_type_source: 'model' })
    expect(doc(0).document_type_note).toBeUndefined()
    expect(doc(1)).toMatchObject({ status: 'ready', document_type: 'rent_roll', document_type_confidence: 0.7, document_type_source: 'model' })
    // A reply naming no fixed type: the rules' type stands, and the document says so.
    expect(doc(2)).toMatchObject({ status: 'ready', document_type: 'other', document_type_confidence: 0.5, document_type_source: 'rules' })
    expect(doc(2).document_type_note).toContain('named no known document type')
    // A vendor error and a timeout never fail ingestion: the rules' type stands with the reason.
    expect(doc(3)).toMatchObject({ status: 'ready', document_type: 'other', document_type_source: 'rules' })
    expect(doc(3).document_type_note).toContain('HTTP 503')
    expect(doc(4)).toMatchObject({ status: 'ready', document_type: 'other', document_type_source: 'rules' })
    expect(doc(4).document_type_note).toContain('timeout')
    // A document the rules type surely is never sent to the model.
    expect(doc(6)).toMatchObject({ status: 'ready', document_type: 'bank_statement', document_type_source: 'rules' })
    expect(doc(6).document_type_confidence).toBeGreaterThanOrEqual(0.6)
    expect(requestsFor('MARK-SURE')).toHaveLength(0)

    // One attempt per document, even after a 503 or a timeout (SVC_MODEL_MAX_RETRIES is 2 here).
    for (const m of Object.keys(REPLIES)) expect({ m, n: requestsFor(m).length }).toEqual({ m, n: 1 })
    expect(typingRequests()).toHaveLength(6)
    // What was sent: the content, never the file name; the key only in the header; JSON replies asked for.
    const typed = requestsFor('MARK-TYPED')[0]!
    expect(user(typed)).toContain('Figures follow in the schedule kept by the office.')
    expect(JSON.stringify(typed.body)).not.toContain('FILENAME')
    expect(JSON.stringify(typed.body)).not.toContain('sk-test-secret')
    expect(typed.headers.get('authorization')).toBe('Bearer sk-test-secret')
    expect(typed.body.response_format).toEqual({ type: 'json_object' })
    for (const t of ['bank_statement', 'pay_stub', 'loss_run', 'application_form', 'other']) expect(system(typed)).toContain(`- ${t}:`)
    // Bounded: the first blocks only, within the character bound (300 paragraphs were read).
    const sent = user(requestsFor('MARK-LONG')[0]!)
    const paragraphs = sent.match(/Paragraph \d+ of the committee notes/g) ?? []
    expect(paragraphs.length).toBeGreaterThan(0)
    expect(paragraphs.length).toBeLessThanOrEqual(MODEL_TYPE_BLOCKS)
    expect(sent).toContain('Paragraph 0 of')
    expect(sent).not.toContain('Paragraph 299 of')
    expect(sent.length).toBeLessThan(MODEL_TYPE_CHARS + 1000)
    expect(doc(5)).toMatchObject({ document_type: 'pay_stub', document_type_confidence: 0.6, document_type_source: 'model' })

    // The calls that were answered are metered like every model call (run kind document_ingestion, run the document).
    const usage = await app.sql<{ run_id: string; input_tokens: string }[]>`select run_id, input_tokens from model_usage where run_kind = 'document_ingestion'`
    const metered = new Set(usage.map((u) => u.run_id))
    for (const n of [0, 1, 2, 5]) expect(metered.has(doc(n).id)).toBe(true)
    for (const n of [3, 4, 6]) expect(metered.has(doc(n).id)).toBe(false)
    expect(usage.every((u) => Number(u.input_tokens) > 0)).toBe(true)
  })
})
