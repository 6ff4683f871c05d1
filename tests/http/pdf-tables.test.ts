/**
 * Tables in born-digital PDFs, recovered from text positions: a loss run drawn without colons or
 * ruling lines becomes table_row blocks with named cells on its page, the page's other text stays
 * as before, and its columns answer facts (`loss_run.incurred.sum`, `.max`) citing the right rows.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { Document, Packer, Paragraph, Table, TableCell, TableRow } from 'docx'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete, type Bytes } from '../helpers/samples'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'

setDefaultTimeout(120_000)

/** A loss run: a title, a four-column table (amounts right-aligned), a footer line; page 2 of a PDF. */
async function lossRun(): Promise<Bytes> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  pdf.addPage([612, 792]).drawText('Cover page', { x: 50, y: 740, size: 14, font })
  const page = pdf.addPage([612, 792])
  page.drawText('Loss run report - Acme Holdings LLC', { x: 50, y: 740, size: 14, font })
  page.drawText('Valued as of 2025-01-31', { x: 50, y: 720, size: 10, font })
  const x = [50, 150, 300, 420]
  const rows = [['Policy year', 'Claim', 'Status', 'Incurred'], ['2022', 'Water damage', 'Closed', '12,400.00'], ['2023', 'Theft', 'Closed', '3,100.50'], ['2024', 'Fire', 'Open', '32,700.00']]
  rows.forEach((r, i) => r.forEach((v, c) => page.drawText(v, { x: c === 3 ? x[c]! + 60 - font.widthOfTextAtSize(v, 10) : x[c]!, y: 680 - i * 18, size: 10, font })))
  page.drawText('Prepared by the carrier for underwriting use.', { x: 50, y: 580, size: 10, font })
  return new Uint8Array(await pdf.save())
}

let app: TestApp
let key: string
beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app?.stop())

describe('tables in PDFs and Word files', () => {
  test('a loss run without colons or rules: rows with named cells on their page, the rest of the text kept, column facts cited', async () => {
    await publishedSet(app, key, [
      { key: 'incurred', text: 'What is the total incurred?', criticality: 'major', answer_type: 'number', fact_path: 'loss_run.incurred.sum' },
      { key: 'largest', text: 'What is the largest loss?', criticality: 'minor', answer_type: 'number', fact_path: 'loss_run.incurred.max' },
    ])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Loss run' } })).body.id
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'loss_run.pdf', contentType: 'application/pdf', bytes: await lossRun() })
    expect((await settled(app, key, sc, doc.id)).status).toBe('ready')
    const blocks = await allBlocks(app, key, sc, doc.id)
    expect(blocks.map((b) => [b.page, b.kind, b.text])).toEqual([
      [1, 'page_text', 'Cover page'],
      [2, 'page_text', 'Loss run report - Acme Holdings LLC\nValued as of 2025-01-31'],
      [2, 'table_row', 'Policy year | Claim | Status | Incurred'],
      [2, 'table_row', '2022 | Water damage | Closed | 12,400.00'],
      [2, 'table_row', '2023 | Theft | Closed | 3,100.50'],
      [2, 'table_row', '2024 | Fire | Open | 32,700.00'],
      [2, 'page_text', 'Prepared by the carrier for underwriting use.'],
    ])
    expect(blocks[3]!.cells).toEqual([
      { column: 'Policy year', value: '2022' }, { column: 'Claim', value: 'Water damage' }, { column: 'Status', value: 'Closed' }, { column: 'Incurred', value: '12,400.00' },
    ])
    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: key, body: {} })
    expect((await evaluationEnded(app, key, sc, run.body.id)).status).toBe('succeeded')
    const answers = Object.fromEntries((await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: key })).body.items.map((a: any) => [a.question_key, a.value]))
    expect(answers).toEqual({ incurred: '48200.50', largest: '32700.00' })
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: key })).body.items
    expect(evidence.find((e: any) => e.question_key === 'largest')).toMatchObject({ document_id: doc.id, page: 2, quote: '2024 | Fire | Open | 32,700.00' })
  })

  test('a Word table: rows with named cells, and its columns answer facts citing the rows', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
    await publishedSet(app, k, [
      { key: 'total_value', text: 'What is the total insured value of the schedule?', criticality: 'major', answer_type: 'number', fact_path: 'schedule.insured_value.sum' },
      { key: 'largest', text: 'What is the most valuable location worth?', criticality: 'minor', answer_type: 'number', fact_path: 'schedule.insured_value.max' },
    ])
    const row = (cells: string[]) => new TableRow({ children: cells.map((c) => new TableCell({ children: [new Paragraph(c)] })) })
    const word = new Document({ sections: [{ children: [
      new Paragraph('Schedule of values'),
      new Table({ rows: [row(['Location', 'Construction', 'Insured value']), row(['12 Harbour Street', 'Masonry', '1,200,000.00']), row(['4 Mill Lane', 'Frame', '650,000.00'])] }),
    ] }] })
    const bytes = new Uint8Array(await Packer.toBuffer(word)) as Bytes
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Schedule' } })).body.id
    const { doc } = await uploadAndComplete(app, k, sc, { filename: 'schedule.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes })
    expect((await settled(app, k, sc, doc.id)).status).toBe('ready')
    const rows = (await allBlocks(app, k, sc, doc.id)).filter((b) => b.kind === 'table_row')
    expect(rows.map((b) => b.cells)).toEqual([
      [{ column: 'Location', value: 'Location' }, { column: 'Construction', value: 'Construction' }, { column: 'Insured value', value: 'Insured value' }],
      [{ column: 'Location', value: '12 Harbour Street' }, { column: 'Construction', value: 'Masonry' }, { column: 'Insured value', value: '1,200,000.00' }],
      [{ column: 'Location', value: '4 Mill Lane' }, { column: 'Construction', value: 'Frame' }, { column: 'Insured value', value: '650,000.00' }],
    ])
    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: k, body: {} })
    expect((await evaluationEnded(app, k, sc, run.body.id)).status).toBe('succeeded')
    const answers = Object.fromEntries((await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: k })).body.items.map((a: any) => [a.question_key, a.value]))
    expect(answers).toEqual({ total_value: '1850000.00', largest: '1200000.00' })
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: k })).body.items
    expect(evidence.find((e: any) => e.question_key === 'largest')).toMatchObject({ document_id: doc.id, block_id: rows[1]!.id, quote: '12 Harbour Street | Masonry | 1,200,000.00' })
  })
})
