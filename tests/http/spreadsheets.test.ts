/**
 * Spreadsheets (XLSX): every sheet a page with its name, every row a table_row block with its
 * cells named by the header row; formulas as their cached values, dates as ISO dates, numbers as
 * exact decimals; column facts like a CSV's (the total row kept apart), a row cited as evidence;
 * hostile workbooks bounded. Fixtures are generated with exceljs in the run.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import ExcelJS from 'exceljs'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete, type Bytes } from '../helpers/samples'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { unzipSync, zipSync } from 'fflate'

setDefaultTimeout(120_000)

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/** A rent roll: a header, three units, a formula total row; a second sheet of notes; a hidden sheet. */
async function rentRoll(): Promise<Bytes> {
  const wb = new ExcelJS.Workbook()
  const ws = wb.addWorksheet('Rent roll')
  ws.addRow(['Unit', 'Tenant', 'Lease start', 'Monthly rent'])
  ws.addRow(['1A', 'Acme Dental', new Date(Date.UTC(2024, 0, 15)), 1250.5])
  ws.addRow(['1B', 'Beta Books', new Date(Date.UTC(2023, 5, 1)), 980])
  ws.addRow(['2A', 'Gamma Cafe', new Date(Date.UTC(2022, 10, 30)), 2100.25])
  ws.addRow(['Total', null, null, { formula: 'SUM(D2:D4)', result: 4330.75 }])
  ws.getColumn(3).numFmt = 'yyyy-mm-dd'
  ws.getColumn(4).numFmt = '#,##0.00 [$EUR]'
  const notes = wb.addWorksheet('Notes')
  notes.addRow(['Property', '12 Harbour Street'])
  notes.addRow(['Occupancy', 0.95])
  const hidden = wb.addWorksheet('Calc', { state: 'hidden' })
  hidden.addRow(['Cap rate', 'Value'])
  hidden.addRow(['0.065', 1])
  return new Uint8Array(await wb.xlsx.writeBuffer())
}

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app?.stop())

describe('XLSX', () => {
  test('a rent roll: sheets as pages, rows with named cells, cached formula values, ISO dates, exact decimals', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Rent roll' } })).body.id
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'rent_roll.xlsx', contentType: XLSX, bytes: await rentRoll() })
    const done = await settled(app, key, sc, doc.id)
    expect(done).toMatchObject({ status: 'ready', page_count: 3, pages: { total: 3, text_layer: 3, unreadable: 0 } })
    const blocks = await allBlocks(app, key, sc, doc.id)
    const shape = blocks.map((b) => [b.page, b.sheet, b.kind, b.text])
    expect(shape).toEqual([
      [1, 'Rent roll', 'heading', 'Rent roll'],
      [1, 'Rent roll', 'table_row', 'Unit | Tenant | Lease start | Monthly rent'],
      [1, 'Rent roll', 'table_row', '1A | Acme Dental | 2024-01-15 | 1250.5'],
      [1, 'Rent roll', 'table_row', '1B | Beta Books | 2023-06-01 | 980'],
      [1, 'Rent roll', 'table_row', '2A | Gamma Cafe | 2022-11-30 | 2100.25'],
      [1, 'Rent roll', 'table_row', 'Total |  |  | 4330.75'],
      [2, 'Notes', 'heading', 'Notes'],
      [2, 'Notes', 'table_row', 'Property | 12 Harbour Street'],
      [2, 'Notes', 'table_row', 'Occupancy | 0.95'],
      [3, 'Calc', 'heading', 'Calc'],
      [3, 'Calc', 'table_row', 'Cap rate | Value'],
      [3, 'Calc', 'table_row', '0.065 | 1'],
    ])
    expect(blocks[2]!.cells).toEqual([
      { column: 'Unit', value: '1A' }, { column: 'Tenant', value: 'Acme Dental' }, { column: 'Lease start', value: '2024-01-15' }, { column: 'Monthly rent', value: '1250.5' },
    ])
    expect(blocks[5]!.cells).toEqual([
      { column: 'Unit', value: 'Total' }, { column: 'Tenant', value: '' }, { column: 'Lease start', value: '' }, { column: 'Monthly rent', value: '4330.75' },
    ])
  })

  test('column facts answer questions with evidence on the sheet and row: a sum, a maximum, the total row, a cell', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
    await publishedSet(app, k, [
      { key: 'rent_sum', text: 'What is the sum of monthly rent?', criticality: 'major', answer_type: 'number', fact_path: 'rent_roll.monthly_rent.sum' },
      { key: 'rent_max', text: 'What is the highest monthly rent?', criticality: 'minor', answer_type: 'number', fact_path: 'rent_roll.monthly_rent.max' },
      { key: 'rent_total', text: 'What total does the rent roll state?', criticality: 'minor', answer_type: 'number', fact_path: 'rent_roll.monthly_rent.total' },
      { key: 'units', text: 'How many units are let?', criticality: 'minor', answer_type: 'number', fact_path: 'rent_roll.unit.count' },
      { key: 'occupancy', text: 'What is the occupancy?', criticality: 'minor', answer_type: 'number', fact_path: 'occupancy' },
    ])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'Harbour Street' } })).body.id
    const { doc } = await uploadAndComplete(app, k, sc, { filename: 'rent_roll.xlsx', contentType: XLSX, bytes: await rentRoll() })
    expect((await settled(app, k, sc, doc.id)).status).toBe('ready')
    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: k, body: {} })
    expect((await evaluationEnded(app, k, sc, run.body.id)).status).toBe('succeeded')
    const answers = Object.fromEntries((await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: k })).body.items.map((a: any) => [a.question_key, a.value]))
    expect(answers).toEqual({ rent_sum: '4330.75', rent_max: '2100.25', rent_total: '4330.75', units: '3', occupancy: '0.95' })
    const blocks = await allBlocks(app, k, sc, doc.id)
    const evidence = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: k })).body.items
    const cited = (q: string) => { const e = evidence.find((x: any) => x.question_key === q); return blocks.find((b) => b.id === e.block_id) }
    expect(cited('rent_max')).toMatchObject({ page: 1, sheet: 'Rent roll', text: '2A | Gamma Cafe | 2022-11-30 | 2100.25' })
    expect(cited('rent_total')).toMatchObject({ page: 1, sheet: 'Rent roll', text: 'Total |  |  | 4330.75' })
    expect(cited('occupancy')).toMatchObject({ page: 2, sheet: 'Notes', text: 'Occupancy | 0.95' })
  })
})

describe('hostile workbooks', () => {
  let sc: string
  beforeAll(async () => {
    sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Hostile workbooks' } })).body.id
  })

  test('a sheet that inflates past the limit (a zip bomb) fails naming the limit', async () => {
    const parts = unzipSync(await rentRoll())
    // 160 MiB of sheet XML deflates to a fraction of a megabyte.
    const bomb = zipSync({ ...parts, 'xl/worksheets/sheet1.xml': new Uint8Array(160 * 1_048_576).fill(0x20) }, { level: 9 })
    expect(bomb.length).toBeLessThan(2 * 1_048_576)
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'bomb.xlsx', contentType: XLSX, bytes: bomb as Bytes })
    const done = await settled(app, key, sc, doc.id, 60_000)
    expect(done.status).toBe('failed')
    expect(done.error_detail).toContain('SVC_PARSE_MAX_INFLATED_MB')
  })

  test('a sheet of 1,000,000 rows is read up to the block limit, degraded naming it, within the parser limits', async () => {
    // The rent roll's first sheet replaced by a header and 1,000,000 rows of inline cells (~50 MB of XML, deflated small).
    const parts = unzipSync(await rentRoll())
    const rows = ['<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Amount</t></is></c></row>']
    for (let r = 2; r <= 1_000_000; r++) rows.push(`<row r="${r}"><c r="A${r}" t="inlineStr"><is><t>Unit</t></is></c><c r="B${r}"><v>1250.5</v></c></row>`)
    const xml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows.join('')}</sheetData></worksheet>`
    const bytes = zipSync({ ...parts, 'xl/worksheets/sheet1.xml': new TextEncoder().encode(xml) }, { level: 6 })
    const started = Date.now()
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'million.xlsx', contentType: XLSX, bytes: bytes as Bytes })
    const done = await settled(app, key, sc, doc.id, 110_000)
    expect(done.status).toBe('ready_degraded')
    expect(done.block_count).toBe(20_000)
    expect(done.error_detail).toContain('SVC_PARSE_MAX_BLOCKS')
    expect(Date.now() - started).toBeLessThan(60_000)
    const parse = app.deps.parser.recent().at(-1)!
    expect(parse.end).toBe('done')
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
  })
})
