/**
 * Word 97-2003 (DOC, word-extractor), RTF (rtf-stream-parser) and ODT (htmlparser2): text in
 * reading order with tables as rows named by their header row; each fixture's known words come
 * out and one of its facts answers a question with evidence citing the document and page; a
 * hostile RTF nested 100,000 groups deep and one declaring more binary data than it holds end
 * with a clear outcome while the API keeps answering.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { unzipSync, zipSync } from 'fflate'
import { join } from 'node:path'
import { call, startApp, type TestApp } from '../helpers/app'
import { settled, uploadAndComplete, type Bytes } from '../helpers/samples'
import { publishedSet } from '../helpers/underwriting-pack'
import { documentText, evaluateCase } from '../helpers/fact-check'
import { recall } from '../helpers/spreadsheets'
import { deepRtf, PROPOSAL_FORM_RTF, PROPOSAL_RTF, PROPOSAL_WORDS, proposalDocx, SURVEY_WORDS, surveyOdt, WORD_FIXTURE_WORDS, wordFixture } from '../helpers/word-processing'

setDefaultTimeout(120_000)

const DOC = 'application/msword'
const RTF = 'application/rtf'
const ODT = 'application/vnd.oasis.opendocument.text'
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  await publishedSet(app, key, [
    { key: 'sum_insured', text: 'What is the sum insured?', criticality: 'major', answer_type: 'number', fact_path: 'sum_insured' },
    { key: 'building_value', text: 'What is the building value?', criticality: 'major', answer_type: 'number', fact_path: 'building_value' },
    { key: 'analyst', text: 'Who is the analyst?', criticality: 'minor', answer_type: 'text', fact_path: 'analyste' },
    { key: 'first_licence_question', text: 'What does the licence table ask first?', criticality: 'minor', answer_type: 'text', fact_path: 'license.first' },
    { key: 'sprinklered', text: 'Is the building sprinklered?', criticality: 'minor', answer_type: 'boolean', fact_path: 'sprinklered' },
    { key: 'flood_zone', text: 'Is it in a flood zone?', criticality: 'minor', answer_type: 'boolean', fact_path: 'flood_zone' },
  ])
})
afterAll(() => app?.stop())

/** Uploads one file into a case of its own; returns the settled document, its blocks and text. */
async function ingest(filename: string, contentType: string, bytes: Bytes) {
  const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: filename } })).body.id
  const { doc, complete } = await uploadAndComplete(app, key, sc, { filename, contentType, bytes })
  expect(complete.status).toBe(202)
  const done = await settled(app, key, sc, doc.id)
  return { sc, doc: done, ...(await documentText(app, key, sc, doc.id)) }
}

describe('RTF', () => {
  test('paragraphs and table rows in reading order, code-page and Unicode characters, no font table or document info; a fact cites the row', async () => {
    const { sc, doc, blocks, text } = await ingest('proposal.rtf', RTF, new TextEncoder().encode(PROPOSAL_RTF) as Bytes)
    expect(doc).toMatchObject({ status: 'ready', page_count: 1, pages: { total: 1, text_layer: 1, unreadable: 0 } })
    expect(blocks.map((b) => [b.kind, b.text])).toEqual([
      ['paragraph', 'Proposal form'],
      ['paragraph', 'The proposer is Harbour Holdings Limited, trading as Café Lumière, since 1998.'],
      ['paragraph', 'The premium is €5000 per year – payable quarterly.'],
      ['table_row', 'Item | Value'],
      ['table_row', 'Sum insured | 2500000'],
      ['table_row', 'Construction | Reinforced concrete frame'],
      ['paragraph', 'After the table, the declaration follows.'],
      ['paragraph', 'Signed declaration'],
    ])
    expect(blocks[4]!.cells).toEqual([{ column: 'Item', value: 'Sum insured' }, { column: 'Value', value: '2500000' }])
    expect(recall(PROPOSAL_WORDS, text)).toBeGreaterThanOrEqual(0.95)
    for (const hidden of ['Times', 'Hidden title', 'Riched20', '0123456789abcdef', 'HYPERLINK']) expect(text).not.toContain(hidden)
    const answers = await evaluateCase(app, key, sc)
    expect(answers.sum_insured!.value).toBe('2500000')
    expect(answers.sum_insured!.cited).toEqual([expect.objectContaining({ document_id: doc.id, page: 1, block_id: blocks[4]!.id })])
  })

  test('a text/rtf upload reads the same', async () => {
    const { doc, blocks } = await ingest('proposal.rtf', 'text/rtf', new TextEncoder().encode(PROPOSAL_RTF) as Bytes)
    expect(doc.status).toBe('ready')
    expect(blocks).toHaveLength(8)
  })
})

describe('ODT', () => {
  test('heading, paragraphs, list items and table rows; tracked deletions and annotations left out; a fact cites the row', async () => {
    const { sc, doc, blocks, text } = await ingest('survey.odt', ODT, surveyOdt())
    expect(doc).toMatchObject({ status: 'ready', page_count: 1, pages: { total: 1, text_layer: 1, unreadable: 0 } })
    expect(blocks.map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Survey report'],
      ['paragraph', 'The building at 12 Harbour Street was inspected on 3 March 2025. It is sound.'],
      ['paragraph', 'Roof replaced in 2019'],
      ['paragraph', 'Sprinklers throughout'],
      ['table_row', 'Item | Value'],
      ['table_row', 'Building value | 1800000'],
      ['table_row', 'Condition | Good no defects'],
      ['paragraph', 'Surveyor: A. Jones & Partners'],
    ])
    expect(recall(SURVEY_WORDS, text)).toBeGreaterThanOrEqual(0.95)
    expect(text).not.toContain('Deleted words')
    expect(text).not.toContain('comment never read')
    const answers = await evaluateCase(app, key, sc)
    expect(answers.building_value!.value).toBe('1800000')
    expect(answers.building_value!.cited).toEqual([expect.objectContaining({ document_id: doc.id, page: 1, block_id: blocks[5]!.id })])
  })
})

describe('DOCX as Word writes a form', () => {
  test('check boxes read as their state, not as nothing; a form field\'s value; a tracked deletion left out; the header and footer after the body, once each', async () => {
    const { sc, doc, blocks, text } = await ingest('proposal.docx', DOCX, proposalDocx())
    expect(doc).toMatchObject({ status: 'ready', page_count: 1 })
    expect(blocks.map((b) => [b.kind, b.text])).toEqual([
      ['paragraph', 'Sprinklered: \u2612 Yes \u2610 No'],
      ['paragraph', 'Flood zone: \u2610 Yes \u2612 No'],
      ['paragraph', 'Sum insured: 2500000'],
      ['paragraph', 'Building value: 1800000'],
      ['table_row', 'Item | Value'],
      ['table_row', 'Construction | Reinforced concrete'],
      ['paragraph', 'Policy P-12345, Harbour Holdings Limited'],
      ['paragraph', 'Broker reference B-9'],
    ])
    expect(text).not.toContain('1000000')
    const answers = await evaluateCase(app, key, sc)
    expect(answers.sum_insured!.value).toBe('2500000')
    expect(answers.building_value!.value).toBe('1800000')
    // The ticked box is the answer, with the line as its evidence.
    expect(answers.sprinklered!.value).toBe(true)
    expect(answers.flood_zone!.value).toBe(false)
    expect(answers.sprinklered!.cited).toEqual([expect.objectContaining({ document_id: doc.id, block_id: blocks[0]!.id })])
  })

  test('a package of 43 header and footer parts: the first 32 read, degraded saying how many were left', async () => {
    const parts = unzipSync(proposalDocx())
    const header = new TextDecoder().decode(parts['word/header1.xml'])
    for (let i = 3; i <= 42; i++) parts[`word/header${i}.xml`] = new TextEncoder().encode(header.replace('Policy P-12345', `Section ${i}`))
    const { doc, blocks } = await ingest('sections.docx', DOCX, zipSync(parts) as Bytes)
    expect(doc.status).toBe('ready_degraded')
    expect(doc.error_detail).toContain('only the first 32 header and footer parts were read (11 more)')
    const margins = blocks.map((b) => b.text).filter((t) => t.includes('Harbour Holdings Limited'))
    expect(margins).toEqual(['Policy P-12345, Harbour Holdings Limited', ...Array.from({ length: 30 }, (_, i) => `Section ${i + 3}, Harbour Holdings Limited`)])
  })
})

describe('the proposal form in every word-processing format: ticked boxes, tracked changes, headers', () => {
  const fixture = async (name: string) => new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/libreoffice-7.4', name)).arrayBuffer()) as Bytes
  const BODY = (sprinklered: string) => [
    `Sprinklered: ${sprinklered}`, 'Flood zone: \u2610 Yes \u2612 No', 'Sum insured: 2500000', 'Building value: 1800000',
    'Item | Value', 'Construction | Reinforced concrete', 'Policy P-12345, Harbour Holdings Limited', 'Broker reference B-9',
  ]

  test('RTF as Word writes it: check box form fields read as their state, the deleted figure left out, the header after the body once', async () => {
    const { sc, doc, blocks } = await ingest('proposal.rtf', RTF, new TextEncoder().encode(PROPOSAL_FORM_RTF) as Bytes)
    expect(doc.status).toBe('ready')
    expect(blocks.map((b) => b.text)).toEqual(BODY('\u2612 Yes \u2610 No').filter((t) => !t.includes(' | ')))
    const answers = await evaluateCase(app, key, sc)
    expect([answers.sprinklered!.value, answers.flood_zone!.value, answers.building_value!.value]).toEqual([true, false, '1800000'])
  })

  test('RTF as LibreOffice writes it: the deleted 1000000 never glued to the inserted 1800000; check boxes without a state degrade the document, saying so', async () => {
    const { sc, doc, blocks } = await ingest('proposal.rtf', RTF, await fixture('proposal.rtf'))
    expect(doc.status).toBe('ready_degraded')
    expect(doc.error_detail).toContain('2 check box form fields have no state in the file')
    expect(blocks.map((b) => b.text)).toEqual(BODY('Yes No'))
    const answers = await evaluateCase(app, key, sc)
    expect(answers.building_value!.value).toBe('1800000')
    expect(answers.sprinklered!.value).toBeNull()
  })

  test('DOC as LibreOffice writes it: check box form fields, whose state word-extractor cannot read, degrade the document; the header once', async () => {
    const { doc, blocks } = await ingest('proposal.doc', DOC, await fixture('proposal.doc'))
    expect(doc.status).toBe('ready_degraded')
    expect(doc.error_detail).toContain('2 check box form fields whose state is not read')
    expect(blocks.map((b) => b.text)).toEqual(BODY(' Yes  No')) // where each box was, its space
  })

  test('ODT as LibreOffice writes it: check box field marks read as their state; the tracked deletion left out', async () => {
    const { sc, doc, blocks } = await ingest('proposal.odt', ODT, await fixture('proposal.odt'))
    expect(doc.status).toBe('ready')
    expect(blocks.map((b) => b.text)).toEqual(BODY('\u2612 Yes \u2610 No'))
    const answers = await evaluateCase(app, key, sc)
    expect([answers.sprinklered!.value, answers.flood_zone!.value]).toEqual([true, false])
  })
})

describe('ODT headers and footers', () => {
  test('the master page\'s header and footer after the body, each text once; the body as before', async () => {
    const { doc, blocks } = await ingest('survey.odt', ODT, surveyOdt({ margins: true }))
    expect(doc.status).toBe('ready')
    expect(blocks.map((b) => b.text).slice(-3)).toEqual(['Surveyor: A. Jones & Partners', 'Survey S-2025-031, 12 Harbour Street', 'Page 1'])
    expect(blocks).toHaveLength(10)
  })
})

describe('hostile ODT', () => {
  // styles.xml too: its headers and footers are read since session 14, inside the same bound.
  for (const part of ['content.xml', 'styles.xml'] as const) test(`a ${part} that inflates past the limit (a zip bomb) fails naming the limit, within the parser memory ceiling`, async () => {
    // 160 MiB of XML (past the 128 MiB default of SVC_PARSE_MAX_INFLATED_MB) deflates to a fraction of a megabyte.
    const bomb = zipSync({ ...unzipSync(surveyOdt({ margins: true })), [part]: new Uint8Array(160 * 1_048_576).fill(0x20) }, { level: 9 })
    expect(bomb.length).toBeLessThan(2 * 1_048_576)
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'ODT bomb' } })).body.id
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'bomb.odt', contentType: ODT, bytes: bomb as Bytes })
    const done = await settled(app, key, sc, doc.id, 60_000)
    expect(done.status).toBe('failed')
    expect(done.error_detail).toContain('SVC_PARSE_MAX_INFLATED_MB')
    const parse = app.deps.parser.recent().find((r) => r.documentId === doc.id)!
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
  })
})

describe('Word 97-2003 (DOC), files shipped inside word-extractor 0.1.4', () => {
  for (const name of ['test03.doc', 'test04.doc', 'test06.doc'] as const) {
    test(`${name}: its known words come out, tables as rows`, async () => {
      const { sc, doc, blocks, text } = await ingest(name, DOC, await wordFixture(name))
      expect(doc).toMatchObject({ status: 'ready', page_count: 1, pages: { unreadable: 0 } })
      expect(recall(WORD_FIXTURE_WORDS[name]!, text)).toBeGreaterThanOrEqual(0.95)
      if (name === 'test03.doc') {
        expect(blocks[0]).toMatchObject({ kind: 'paragraph', text: 'Each license name is hyperlinked to its location.' })
        expect(blocks[1]).toMatchObject({ kind: 'table_row', text: 'License | GPL v3.0 | LGPL v3.0 | BSD | MIT (X11) | Apache v2.0' })
        expect(blocks.filter((b) => b.kind === 'table_row')).toHaveLength(5)
        // The table's first column answers a column fact, citing its first body row.
        const answers = await evaluateCase(app, key, sc)
        expect(answers.first_licence_question!.value).toBe('Can You Release Commercial Works?')
        expect(answers.first_licence_question!.cited).toEqual([expect.objectContaining({ document_id: doc.id, page: 1, block_id: blocks[2]!.id })])
      }
      if (name === 'test04.doc') expect(blocks.map((b) => b.text)).toEqual(expect.arrayContaining(['GBP - £', 'EUR - €', 'Molière', 'The footer, with Molière, has Unicode in it.']))
    })
  }

  test('test06.doc: a two-column table gives label facts; the analyst answers with evidence on its row', async () => {
    const { sc, doc, blocks } = await ingest('fiche.doc', DOC, await wordFixture('test06.doc'))
    const row = blocks.find((b) => b.text === 'Analyste | ROB (432)')
    expect(row).toMatchObject({ kind: 'table_row', cells: [{ column: 'Nom', value: 'Analyste' }, { column: 'Document1', value: 'ROB (432)' }] })
    // A cell of two paragraphs stays one cell of its row.
    expect(blocks.map((b) => b.text)).toContain('Méthode(s) | public Boolean evaluate( ) throw Exception (méthode où se trouve toute la logique).')
    const answers = await evaluateCase(app, key, sc)
    expect(answers.analyst!.value).toBe('ROB (432)')
    expect(answers.analyst!.cited).toEqual([expect.objectContaining({ document_id: doc.id, page: 1, block_id: row!.id })])
  })
})

describe('hostile RTF', () => {
  test('nested 100,000 groups deep: read within the parser limits, the API answering', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Deep RTF' } })).body.id
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'deep.rtf', contentType: RTF, bytes: deepRtf(100_000) })
    let probes = 0
    let probing = true
    const probe = (async () => {
      while (probing) {
        const r = await fetch(`${app.url}/healthz`)
        await r.arrayBuffer()
        expect(r.status).toBe(200)
        probes++
        await Bun.sleep(10)
      }
    })()
    const done = await settled(app, key, sc, doc.id, 60_000)
    probing = false
    await probe
    expect(done.status).toBe('ready')
    expect((await documentText(app, key, sc, doc.id)).blocks.map((b) => b.text)).toEqual(['deep words inside', 'After the nesting.'])
    expect(probes).toBeGreaterThan(0) // the API answered (every probe 200) while the parse ran; how fast is a benchmark's question
    const parse = app.deps.parser.recent().at(-1)!
    expect(parse.end).toBe('done')
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
  })

  test('nested 100,000 groups and never closed: the text read is kept, degraded naming why', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Open RTF' } })).body.id
    const open = new TextEncoder().encode(`{\\rtf1\\ansi Start words.\\par ${'{'.repeat(100_000)}never closed`) as Bytes
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'open.rtf', contentType: RTF, bytes: open })
    const done = await settled(app, key, sc, doc.id, 60_000)
    expect(done.status).toBe('ready_degraded')
    expect(done.error_detail).toContain('ends inside an open group')
  })

  test('a \\bin length past the end of the file fails before any allocation', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Bin RTF' } })).body.id
    const bin = new TextEncoder().encode('{\\rtf1\\ansi Text {\\*\\blob\\bin999999999999 x}}') as Bytes
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'bin.rtf', contentType: RTF, bytes: bin })
    const done = await settled(app, key, sc, doc.id, 60_000)
    expect(done.status).toBe('failed')
    expect(done.error_detail).toContain('binary data longer than the file')
  })
})
