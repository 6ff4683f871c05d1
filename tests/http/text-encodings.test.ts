/**
 * Text encodings: the `charset` parameter of the declared content type is honoured (kept on the
 * document's content type); without one a byte-order mark, else valid UTF-8, else the detector
 * (chardet) decides; the document's `pages.text_encoding` records the encoding and its source. A
 * Shift-JIS file's words come out and its fact answers with evidence on the right document.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import iconv from 'iconv-lite'
import { call, startApp, type TestApp } from '../helpers/app'
import { brokenUtf8TextSample, settled, uploadAndComplete, type Bytes } from '../helpers/samples'
import { publishedSet } from '../helpers/underwriting-pack'
import { documentText, evaluateCase } from '../helpers/fact-check'
import { recall } from '../helpers/spreadsheets'

setDefaultTimeout(120_000)

/** A Japanese proposal note: phrases separated by spaces (so words can be counted), and a fact line. */
const NOTE = '火災保険 申込書\n\n保険契約者 東京港 株式会社 の 本社ビル です。 構造 鉄筋コンクリート造 です。\n\nSum insured: 2500000\n'
const sjis = (s: string) => new Uint8Array(iconv.encode(s, 'shift_jis')) as Bytes

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  await publishedSet(app, key, [{ key: 'sum_insured', text: 'What is the sum insured?', criticality: 'major', answer_type: 'number', fact_path: 'sum_insured' }])
})
afterAll(() => app?.stop())

async function ingest(filename: string, contentType: string, bytes: Bytes) {
  const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: filename } })).body.id
  const { doc, complete } = await uploadAndComplete(app, key, sc, { filename, contentType, bytes })
  expect(complete.status).toBe(202)
  const done = await settled(app, key, sc, doc.id)
  return { sc, doc: done, ...(await documentText(app, key, sc, doc.id)) }
}

describe('text encodings', () => {
  test('Shift-JIS declared as text/plain; charset=shift_jis: read in it, recorded as declared; its fact cites the document', async () => {
    const { sc, doc, text } = await ingest('note.txt', 'text/plain; charset=Shift_JIS', sjis(NOTE))
    expect(doc).toMatchObject({ status: 'ready', content_type: 'text/plain; charset=shift_jis', pages: { text_encoding: { charset: 'shift_jis', source: 'declared' } } })
    expect(recall(NOTE, text)).toBeGreaterThanOrEqual(0.95)
    expect(text).not.toContain('\ufffd')
    const answers = await evaluateCase(app, key, sc)
    expect(answers.sum_insured!.value).toBe('2500000')
    expect(answers.sum_insured!.cited).toEqual([expect.objectContaining({ document_id: doc.id, page: 1 })])
  })

  test('Shift-JIS without a charset: the detector decides, and the page summary says so', async () => {
    const { doc, text } = await ingest('note.txt', 'text/plain', sjis(NOTE))
    expect(doc).toMatchObject({ status: 'ready', content_type: 'text/plain', pages: { text_encoding: { charset: 'shift_jis', source: 'detected' } } })
    expect(recall(NOTE, text)).toBeGreaterThanOrEqual(0.95)
  })

  test('a declared charset wins over the detector: Windows-1252 CSV cells', async () => {
    const csv = new Uint8Array(iconv.encode('Name,City,Premium\nCafé Lumière,Besançon,1200\n', 'windows-1252')) as Bytes
    const { doc, blocks } = await ingest('premiums.csv', 'text/csv; charset=windows-1252', csv)
    expect(doc).toMatchObject({ status: 'ready', pages: { text_encoding: { charset: 'windows-1252', source: 'declared' } } })
    expect(blocks[1]!.cells).toEqual([{ column: 'Name', value: 'Café Lumière' }, { column: 'City', value: 'Besançon' }, { column: 'Premium', value: '1200' }])
  })

  test('a UTF-16 byte-order mark decides without a charset', async () => {
    const bytes = new Uint8Array([0xff, 0xfe, ...iconv.encode('Markdown heading\n\nBody with ü and 日本.\n', 'utf-16le')]) as Bytes
    const { doc, text } = await ingest('notes.md', 'text/markdown', bytes)
    expect(doc).toMatchObject({ status: 'ready', pages: { text_encoding: { charset: 'utf-16le', source: 'bom' } } })
    expect(text).toContain('Body with ü and 日本.')
  })

  test('plain UTF-8 is the default; stray bytes the detector is unsure of stay a degraded UTF-8 read', async () => {
    const plain = await ingest('plain.txt', 'text/plain', new TextEncoder().encode('Plain words here.\n') as Bytes)
    expect(plain.doc).toMatchObject({ status: 'ready', pages: { text_encoding: { charset: 'utf-8', source: 'default' } } })
    const broken = await ingest('broken.txt', 'text/plain', brokenUtf8TextSample())
    expect(broken.doc).toMatchObject({ status: 'ready_degraded', error_detail: 'invalid UTF-8 byte sequences were replaced', pages: { text_encoding: { charset: 'utf-8', source: 'default' } } })
  })

  test('NUL bytes in a text file and a CSV cell are replaced (U+FFFD), the document stored and degraded saying so', async () => {
    // PostgreSQL cannot hold NUL in text or jsonb: kept, the write failed and the document retried until
    // given up. The upload's sniff reads the leading bytes only, so a NUL after them reaches the parser.
    const lead = 'Schedule of premiums, see below.\n'.repeat(160)
    const txt = await ingest('nul.txt', 'text/plain', new TextEncoder().encode(`${lead}Premium due\u0000 1,200 on 1 May.\n`) as Bytes)
    expect(txt.doc).toMatchObject({ status: 'ready_degraded', error_detail: 'NUL characters were replaced (U+FFFD)' })
    expect(txt.text).toContain('Premium due\ufffd 1,200 on 1 May.')
    const rows = Array.from({ length: 400 }, (_, i) => `Holder ${i},${1000 + i}`).join('\n')
    const csv = await ingest('nul.csv', 'text/csv', new TextEncoder().encode(`Name,Premium\n${rows}\nAcme\u0000 Ltd,1200\n`) as Bytes)
    expect(csv.doc.status).toBe('ready_degraded')
    expect(csv.blocks.at(-1)!.cells).toEqual([{ column: 'Name', value: 'Acme\ufffd Ltd' }, { column: 'Premium', value: '1200' }])
  })

  test('an unknown declared charset falls back to detection', async () => {
    const { doc } = await ingest('note.txt', 'text/plain; charset=x-no-such-charset', sjis(NOTE))
    expect(doc).toMatchObject({ status: 'ready', pages: { text_encoding: { charset: 'shift_jis', source: 'detected' } } })
  })
})
