/**
 * Spreadsheets (XLSX): every sheet a page with its name, every row a table_row block with its
 * cells named by the header row; formulas as their cached values, dates as ISO dates, numbers as
 * exact decimals; column facts like a CSV's (the total row kept apart), a row cited as evidence;
 * hostile workbooks bounded. Fixtures are generated with SheetJS in the run.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete, type Bytes } from '../helpers/samples'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { unzipSync, zipSync } from 'fflate'
import * as XLSXLib from '@e965/xlsx'
import { hugeXls, lossRunPackage, scheduleOdsWithHiddenSheet, LOSS_RUN_ROWS, recall, rentRollBook, scheduleBook, SCHEDULE_WORDS, writeBook, type PackageLayout } from '../helpers/spreadsheets'
import { documentText, evaluateCase } from '../helpers/fact-check'

setDefaultTimeout(120_000)

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const XLSM = 'application/vnd.ms-excel.sheet.macroEnabled.12'
const XLS = 'application/vnd.ms-excel'
const ODS = 'application/vnd.oasis.opendocument.spreadsheet'

/** The rent roll (SheetJS) as XLSX. */
const rentRoll = async (): Promise<Bytes> => writeBook(rentRollBook(), 'xlsx')

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
})
afterAll(() => app?.stop())

/** A workspace of its own whose published question set asks `questions`; returns its API key. */
async function workspaceAsking(questions: Parameters<typeof publishedSet>[2]): Promise<string> {
  const t = await app.tenant()
  const k = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  await publishedSet(app, k, questions)
  return k
}

describe('XLSX', () => {
  test('a rent roll: sheets as pages, rows with named cells, cached formula values, ISO dates, exact decimals with the currency the format shows, the hidden sheet marked', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Rent roll' } })).body.id
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'rent_roll.xlsx', contentType: XLSX, bytes: await rentRoll() })
    const done = await settled(app, key, sc, doc.id)
    expect(done).toMatchObject({ status: 'ready', page_count: 3, pages: { total: 3, text_layer: 3, unreadable: 0 } })
    const blocks = await allBlocks(app, key, sc, doc.id)
    const shape = blocks.map((b) => [b.page, b.sheet, b.kind, b.text])
    expect(shape).toEqual([
      [1, 'Rent roll', 'heading', 'Rent roll'],
      [1, 'Rent roll', 'table_row', 'Unit | Tenant | Lease start | Monthly rent'],
      [1, 'Rent roll', 'table_row', '1A | Acme Dental | 2024-01-15 | 1250.5 EUR'],
      [1, 'Rent roll', 'table_row', '1B | Beta Books | 2023-06-01 | 980 EUR'],
      [1, 'Rent roll', 'table_row', '2A | Gamma Cafe | 2022-11-30 | 2100.25 EUR'],
      [1, 'Rent roll', 'table_row', 'Total |  |  | 4330.75 EUR'],
      [2, 'Notes', 'heading', 'Notes'],
      [2, 'Notes', 'table_row', 'Property | 12 Harbour Street'],
      [2, 'Notes', 'table_row', 'Occupancy | 0.95'],
      [3, 'Calc', 'heading', 'Calc (hidden sheet)'],
      [3, 'Calc', 'table_row', 'Cap rate | Value'],
      [3, 'Calc', 'table_row', '0.065 | 1'],
    ])
    expect(blocks[2]!.cells).toEqual([
      { column: 'Unit', value: '1A' }, { column: 'Tenant', value: 'Acme Dental' }, { column: 'Lease start', value: '2024-01-15' }, { column: 'Monthly rent', value: '1250.5 EUR' },
    ])
    expect(blocks[5]!.cells).toEqual([
      { column: 'Unit', value: 'Total' }, { column: 'Tenant', value: '' }, { column: 'Lease start', value: '' }, { column: 'Monthly rent', value: '4330.75 EUR' },
    ])
  })

  test('column facts answer questions with evidence on the sheet and row: a sum, a maximum, the total row, a cell', async () => {
    const k = await workspaceAsking([
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
    expect(cited('rent_max')).toMatchObject({ page: 1, sheet: 'Rent roll', text: '2A | Gamma Cafe | 2022-11-30 | 2100.25 EUR' })
    expect(cited('rent_total')).toMatchObject({ page: 1, sheet: 'Rent roll', text: 'Total |  |  | 4330.75 EUR' })
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

describe('every spreadsheet format: XLS, ODS, XLSM and XLSX as other writers lay it out', () => {
  let k: string
  beforeAll(async () => {
    k = await workspaceAsking([
      { key: 'sum_insured', text: 'What is the sum insured?', criticality: 'major', answer_type: 'number', fact_path: 'sum_insured' },
      { key: 'incurred', text: 'What is the total incurred?', criticality: 'major', answer_type: 'number', fact_path: 'loss_run.incurred.sum' },
    ])
  })

  /** Uploads one workbook into a case of its own; returns the settled document, its blocks and text. */
  async function ingest(filename: string, contentType: string, bytes: Bytes) {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: filename } })).body.id
    const { doc, complete } = await uploadAndComplete(app, k, sc, { filename, contentType, bytes })
    expect(complete.status).toBe(202)
    const done = await settled(app, k, sc, doc.id)
    return { sc, doc: done, ...(await documentText(app, k, sc, doc.id)) }
  }

  const schedules: [string, string, Bytes, boolean][] = [
    ['schedule.xls', XLS, writeBook(scheduleBook(), 'biff8'), true],
    ['schedule.ods', ODS, scheduleOdsWithHiddenSheet(), true],
    ['schedule.xlsm', XLSM, writeBook(scheduleBook(), 'xlsm'), true],
  ]
  for (const [filename, contentType, bytes, marksHidden] of schedules) {
    test(`${filename}: every cell type, the empty sheet named, the hidden sheet read; a fact cites the sheet`, async () => {
      const { sc, doc, blocks, text } = await ingest(filename, contentType, bytes)
      expect(doc).toMatchObject({ status: 'ready', page_count: 3, pages: { total: 3, text_layer: 2, blank: 1, unreadable: 0 } })
      expect(recall(SCHEDULE_WORDS, text)).toBeGreaterThanOrEqual(0.95)
      expect(text).not.toContain('[object Object]')
      const rows = blocks.filter((b) => b.page === 1).map((b) => b.text)
      expect(rows).toEqual(expect.arrayContaining([
        'Sum insured | 2500000', 'Inception | 2025-04-01', 'Sprinklered | true', 'Flood zone | false', 'Premium | 5000',
      ]))
      if (contentType !== ODS) expect(rows).toContain('Loss ratio | #DIV/0!') // SheetJS's ODS writer leaves error cells out
      expect(blocks.filter((b) => b.page === 2).map((b) => [b.kind, b.sheet, b.text])).toEqual([['heading', 'Blank', 'Blank (empty sheet)']])
      expect(blocks.filter((b) => b.page === 3).map((b) => b.text)).toEqual([marksHidden ? 'Workings (hidden sheet)' : 'Workings', 'Loading | Factor', 'Catastrophe | 1.15'])
      const answers = await evaluateCase(app, k, sc)
      expect(answers.sum_insured!.value).toBe('2500000')
      expect(answers.sum_insured!.cited).toEqual([expect.objectContaining({ document_id: doc.id, page: 1 })])
      expect(blocks.find((b) => b.id === answers.sum_insured!.cited[0]!.block_id)!.text).toBe('Sum insured | 2500000')
    })
  }

  const layouts: [string, PackageLayout, string][] = [
    ['cells without r attributes', { noRefs: true }, XLSX],
    ['namespace-prefixed XML (s:workbook)', { prefix: 's' }, XLSX],
    ['LibreOffice part order (shared strings after the sheet, the manifest last)', { libreOfficeOrder: true }, XLSX],
    ['a macro-enabled workbook with a VBA project (never run, never read)', { macroEnabled: true }, XLSM],
  ]
  for (const [what, layout, contentType] of layouts) {
    test(`an XLSX package with ${what} reads every cell; the column sum cites the sheet`, async () => {
      const filename = contentType === XLSM ? 'loss_run.xlsm' : 'loss_run.xlsx'
      const { sc, doc, blocks, text } = await ingest(filename, contentType, lossRunPackage(layout))
      expect(doc).toMatchObject({ status: 'ready', page_count: 1, pages: { total: 1, text_layer: 1, unreadable: 0 } })
      expect(blocks.map((b) => b.text)).toEqual(['Loss run', ...LOSS_RUN_ROWS])
      expect(blocks[2]!.cells).toEqual([
        { column: 'Claim', value: 'C-101' }, { column: 'Date of loss', value: '2023-03-04' }, { column: 'Incurred', value: '12500.5' },
        { column: 'Open', value: 'false' }, { column: 'Cause', value: 'Water escape' },
      ])
      expect(recall(['Loss run', ...LOSS_RUN_ROWS].join(' '), text)).toBeGreaterThanOrEqual(0.95)
      const answers = await evaluateCase(app, k, sc)
      expect(answers.incurred!.value).toBe('15700.5')
      expect(answers.incurred!.cited.length).toBeGreaterThan(0)
      for (const c of answers.incurred!.cited) expect(c).toMatchObject({ document_id: doc.id, page: 1 })
    })
  }
})

describe('formulas a writer stored without calculating them', () => {
  let k: string
  beforeAll(async () => {
    k = await workspaceAsking([
      { key: 'incurred', text: 'What is the total incurred?', criticality: 'major', answer_type: 'number', fact_path: 'loss_run.incurred.sum' },
    ])
  })

  /** Uploads the loss run as `layout` stores its total into a case of its own; returns the settled document and its blocks. */
  async function ingest(layout: PackageLayout) {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: `Loss run ${layout.totalResult ?? 'calculated'}` } })).body.id
    const { doc } = await uploadAndComplete(app, k, sc, { filename: 'loss_run.xlsx', contentType: XLSX, bytes: lossRunPackage(layout) })
    const done = await settled(app, k, sc, doc.id)
    return { sc, doc: done, blocks: await allBlocks(app, k, sc, doc.id) }
  }

  test('no result at all (openpyxl): the cell says so instead of vanishing, the document is degraded naming it, the column sum still holds', async () => {
    const { sc, doc, blocks } = await ingest({ totalResult: 'missing' })
    expect(doc.status).toBe('ready_degraded')
    expect(doc.error_detail).toContain('sheet 1 has 1 formula cell with no calculated result (C4)')
    expect(blocks.map((b) => b.text)).toEqual(['Loss run', ...LOSS_RUN_ROWS.slice(0, -1), 'Total |  | (formula not calculated)'])
    expect(blocks.at(-1)!.cells!.at(-1)).toEqual({ column: 'Incurred', value: '(formula not calculated)' })
    expect((await evaluateCase(app, k, sc)).incurred!.value).toBe('15700.5')
  })

  test('a placeholder result and fullCalcOnLoad (XlsxWriter): the stored value is kept and the document is degraded naming the cell', async () => {
    const { sc, doc, blocks } = await ingest({ totalResult: 'placeholder' })
    expect(doc.status).toBe('ready_degraded')
    expect(doc.error_detail).toContain('sheet 1 has 1 formula cell whose stored result may not be current (C4)')
    expect(doc.error_detail).toContain('fullCalcOnLoad')
    expect(blocks.at(-1)!.text).toBe('Total |  | 0')
    expect((await evaluateCase(app, k, sc)).incurred!.value).toBe('15700.5')
  })

  test('a workbook calculated when saved reads as before: ready, the cached result', async () => {
    const { doc, blocks } = await ingest({})
    expect(doc.status).toBe('ready')
    expect(blocks.at(-1)!.text).toBe('Total |  | 15700.5')
  })
})

describe('number formats', () => {
  /** One sheet of `rows` as an XLSX in a case of its own, read to `ready`; returns the case and the blocks' text. */
  async function readSheet(k: string, sheet: string, rows: unknown[][]) {
    const book = XLSXLib.utils.book_new()
    XLSXLib.utils.book_append_sheet(book, XLSXLib.utils.aoa_to_sheet(rows), sheet)
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: sheet } })).body.id
    const { doc } = await uploadAndComplete(app, k, sc, { filename: `${sheet.toLowerCase()}.xlsx`, contentType: XLSX, bytes: writeBook(book, 'xlsx') })
    expect((await settled(app, k, sc, doc.id)).status).toBe('ready')
    return { sc, texts: (await allBlocks(app, k, sc, doc.id)).map((b) => b.text) }
  }

  test('a percentage reads as the percentage it shows, as a PDF\'s or a letter\'s would: 4.25%, not 0.0425', async () => {
    const pk = await workspaceAsking([{ key: 'rate', text: 'What is the interest rate?', criticality: 'major', answer_type: 'number', fact_path: 'interest_rate' }])
    const { sc, texts } = await readSheet(pk, 'Terms', [
      ['Term', 'Value'],
      ['Interest rate', { t: 'n', v: 0.0425, z: '0.00%' }],
      ['Loan to value', { t: 'n', v: 0.8, z: '0%' }],
      ['Arrangement fee', { t: 'n', v: 1250, z: '#,##0.00' }],
    ])
    expect(texts).toEqual(['Terms', 'Term | Value', 'Interest rate | 4.25%', 'Loan to value | 80%', 'Arrangement fee | 1250'])
    expect((await evaluateCase(app, pk, sc)).rate!.value).toBe('4.25')
  })

  test('a number reads with Excel\'s 15 significant digits: a formula\'s binary noise (110.00000000000001) is not a figure', async () => {
    const { texts } = await readSheet(key, 'Quote', [
      ['Item', 'Value'],
      ['Premium with 10% loading', { t: 'n', f: '100*1.1', v: 100 * 1.1 }],
      ['Share', { t: 'n', f: '0.1+0.2', v: 0.1 + 0.2 }],
      ['Sum insured', 2500000.25],
    ])
    expect(texts).toEqual(['Quote', 'Item | Value', 'Premium with 10% loading | 110', 'Share | 0.3', 'Sum insured | 2500000.25'])
  })

  test('a schedule in two currencies: each value with the currency its format shows, and no sum across them', async () => {
    const ck = await workspaceAsking([
      { key: 'total_insured', text: 'What is the total sum insured?', criticality: 'major', answer_type: 'number', fact_path: 'schedule.sum_insured.sum' },
      { key: 'locations', text: 'How many locations?', criticality: 'minor', answer_type: 'number', fact_path: 'schedule.location.count' },
    ])
    const { sc, texts } = await readSheet(ck, 'Schedule', [
      ['Location', 'Sum insured'],
      ['London', { t: 'n', v: 1000000, z: '£#,##0' }],
      ['Paris', { t: 'n', v: 2000000, z: '[$€-407] #,##0' }],
    ])
    expect(texts).toEqual(['Schedule', 'Location | Sum insured', 'London | 1000000 GBP', 'Paris | 2000000 EUR'])
    const answers = await evaluateCase(app, ck, sc)
    expect(answers.total_insured!.value).toBeNull()
    expect(answers.locations!.value).toBe('2')
  })

  test('a European bank export (semicolons, decimal commas): each amount one figure, the column summed exactly', async () => {
    const ek = await workspaceAsking([
      { key: 'net', text: 'What is the net of the statement?', criticality: 'major', answer_type: 'number', fact_path: 'kontoauszug.betrag_eur.sum' },
      { key: 'largest', text: 'What is the largest amount?', criticality: 'minor', answer_type: 'number', fact_path: 'kontoauszug.betrag_eur.max' },
    ])
    const csv = 'Datum;Buchung;Betrag (EUR)\n01.02.2024;Miete;-1.234,50\n15.02.2024;Gehalt;4.100,00\n20.02.2024;Erstattung;12,75\n'
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: ek, body: { name: 'Kontoauszug' } })).body.id
    const { doc } = await uploadAndComplete(app, ek, sc, { filename: 'kontoauszug.csv', contentType: 'text/csv', bytes: new TextEncoder().encode(csv) as Bytes })
    expect((await settled(app, ek, sc, doc.id)).status).toBe('ready')
    const answers = await evaluateCase(app, ek, sc)
    expect(answers.net!.value).toBe('2878.25')
    expect(answers.largest!.value).toBe('4100.00')
  })
})

describe('a hostile XLS', () => {
  let big: TestApp
  let bk: string
  beforeAll(async () => {
    // The whole BIFF8 grid is ~100 MB of cell records: the upload limit is raised to let it in; every parse limit is the default.
    big = await startApp({ env: { SVC_MAX_UPLOAD_BYTES: String(160 * 1_048_576) } })
    const t = await big.tenant()
    bk = await big.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
  })
  afterAll(() => big?.stop())

  test('65,536 x 256 cells: read to the cell bound, degraded naming it, within the parser limits, the API answering', async () => {
    const bytes = await hugeXls(65_536, 256)
    expect(bytes.length).toBeGreaterThan(100_000_000)
    const sc = (await call(big.url, 'POST', '/v1/scenarios', { token: bk, body: { name: 'Whole grid' } })).body.id
    const { doc, complete } = await uploadAndComplete(big, bk, sc, { filename: 'grid.xls', contentType: XLS, bytes })
    expect(complete.status).toBe(202)
    const latencies: number[] = []
    let probing = true
    const probe = (async () => {
      while (probing) {
        const t = performance.now()
        const r = await fetch(`${big.url}/healthz`)
        await r.arrayBuffer()
        expect(r.status).toBe(200)
        latencies.push(performance.now() - t)
        await Bun.sleep(20)
      }
    })()
    const done = await settled(big, bk, sc, doc.id, 110_000)
    probing = false
    await probe
    expect(done.status).toBe('ready_degraded')
    expect(done.error_detail).toContain('sheet 1 was read to row')
    expect(done.error_detail).toContain('cells a sheet at most')
    expect(done.block_count).toBeGreaterThan(3000)
    // The API answered throughout (every probe 200, probes answered while the parser process worked);
    // how fast is a benchmark's question, not a test's.
    expect(latencies.length).toBeGreaterThan(10)
    const parse = big.deps.parser.recent().at(-1)!
    expect(parse.end).toBe('done') // within the parse's own time limit: a parse past it ends 'timed_out'
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
  })
})
