/**
 * The findings report as an underwriter reads it (issue 27), rendered with poppler: pdftoppm draws
 * every page, pdftotext -bbox-layout gives each word's page and position. Checked: the summary
 * table comes first with formatted amounts and verdicts, each decline/refer reason shows the value
 * found and the rule, every document's coverage, type and checks are listed, and no question's
 * details span a page break. Skips (saying why) when poppler-utils is absent; CI installs it.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, startApp, type TestApp } from '../helpers/app'
import { caseWith, evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { QUESTIONS, underwritingFile } from '../helpers/underwriting-file'
import { skipTitle } from '../helpers/skip-reason'

setDefaultTimeout(180_000)

const poppler = Bun.which('pdftoppm') !== null && Bun.which('pdftotext') !== null
if (!poppler) console.log('report-render: skipped, poppler-utils (pdftoppm, pdftotext) is not installed')

interface Word { page: number; x: number; y: number; text: string }

/** Every word of a PDF with its page and position (pdftotext -bbox-layout). */
async function wordsOf(pdfPath: string): Promise<{ words: Word[]; pages: number }> {
  const out = await Bun.$`pdftotext -bbox-layout ${pdfPath} -`.text()
  const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'")
  const pages = out.split('<page ').slice(1)
  const words: Word[] = []
  pages.forEach((p, i) => {
    for (const m of p.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)"[^>]*>([^<]*)<\/word>/g)) words.push({ page: i + 1, x: Number(m[1]), y: Number(m[2]), text: decode(m[3]!) })
  })
  return { words, pages: pages.length }
}

/** The visual lines of the document, in reading order: words of one page at one height, left to right. */
function linesOf(words: Word[]): { page: number; y: number; text: string }[] {
  const byLine = new Map<string, Word[]>()
  for (const w of words) {
    const key = `${w.page}:${Math.round(w.y)}`
    byLine.set(key, [...(byLine.get(key) ?? []), w])
  }
  return [...byLine.values()].map((ws) => ({ page: ws[0]!.page, y: ws[0]!.y, text: ws.sort((a, b) => a.x - b.x).map((w) => w.text).join(' ') }))
    .sort((a, b) => a.page - b.page || a.y - b.y)
}

let app: TestApp
let key: string
let dir: string
let pdfPath: string
let pageCount: number

beforeAll(async () => {
  if (!poppler) return
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'settings:write'])
  expect((await call(app.url, 'PUT', '/v1/tenant-settings', { token: key, body: { time_zone: 'America/New_York', currency: 'USD', number_locale: 'en-US' } })).status).toBe(200)
  const file = await underwritingFile({ closingBalance: '37,700.51' })
  const { scenario } = await caseWith(app, key, file.map((f) => f.file), { name: 'Acme Holdings LLC' })
  const rules: Record<string, { criticality: string; accept: string }> = {
    loan_amount: { criticality: 'critical', accept: 'value <= 1000000' },
    net_income: { criticality: 'major', accept: 'value >= 500000' },
    premium: { criticality: 'minor', accept: 'value < 50000' },
    prior_bankruptcy: { criticality: 'critical', accept: 'value = false' },
  }
  const questions = QUESTIONS.map(({ expect: _, kind: __, ...q }) => ({ ...q, criticality: 'minor', ...(rules[q.key] ?? {}) }))
  await publishedSet(app, key, questions, { name: 'Commercial lending' })
  const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
  expect((await evaluationEnded(app, key, scenario.id, e.body.id)).status).toBe('succeeded')
  const r = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/reports`, { token: key })
  let done: any
  for (const end = Date.now() + 60_000; ;) {
    done = (await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/reports/${r.body.id}`, { token: key })).body
    if (done.status !== 'queued' && done.status !== 'running') break
    if (Date.now() > end) throw new Error('report never ended')
    await Bun.sleep(50)
  }
  expect(done.status).toBe('succeeded')
  pageCount = done.page_count
  const res = await fetch(`${app.url}${done.download}`, { headers: { authorization: `Bearer ${key}` } })
  dir = await mkdtemp(join(tmpdir(), 'report-render-'))
  pdfPath = join(dir, 'report.pdf')
  await writeFile(pdfPath, new Uint8Array(await res.arrayBuffer()))
})
afterAll(async () => {
  if (!poppler) return
  await app.stop()
  await rm(dir, { recursive: true, force: true })
})

describe.skipIf(!poppler)(skipTitle('the findings report, rendered', !poppler && 'poppler-utils (pdftoppm, pdftotext) is not installed'), () => {
  test('every page renders (pdftoppm)', async () => {
    expect(pageCount).toBeGreaterThanOrEqual(3)
    await Bun.$`pdftoppm -r 30 -png ${pdfPath} ${join(dir, 'page')}`.quiet()
    const pngs = (await readdir(dir)).filter((f) => f.endsWith('.png'))
    expect(pngs.length).toBe(pageCount)
    for (const f of pngs) expect(Bun.file(join(dir, f)).size).toBeGreaterThan(500)
  })

  test('the summary table comes before the details, with formatted amounts and verdicts', async () => {
    const { words, pages } = await wordsOf(pdfPath)
    expect(pages).toBe(pageCount)
    const lines = linesOf(words)
    const at = (pred: (t: string) => boolean) => lines.findIndex((l) => pred(l.text))
    const summary = at((t) => t.startsWith(`Summary (${QUESTIONS.length} questions)`))
    const header = at((t) => t === 'Question Answer Verdict Conf. Document, page')
    const details = at((t) => t.startsWith(`Questions (${QUESTIONS.length})`))
    expect(summary).toBeGreaterThan(0)
    expect(lines[summary]!.page).toBeLessThanOrEqual(2)
    expect(header).toBe(summary + 1)
    expect(details).toBeGreaterThan(header + QUESTIONS.length)
    // the whole table (title, header, one row per question) is on one page
    expect(new Set(lines.slice(summary, header + QUESTIONS.length + 1).map((l) => l.page)).size).toBe(1)
    const row = (k: string) => lines.slice(header + 1, details).find((l) => l.text.startsWith(`${k} `))?.text
    expect(row('loan_amount')).toMatch(/^loan_amount \$1,250,000\.00 FAIL 1\.00 \S.*, p\. 1$/)
    expect(row('rent_1b')).toMatch(/^rent_1b \$3,200\.00 - 1\.00 .*, p\. 1$/)
    expect(row('years_in_business')).toMatch(/^years_in_business 12 - 1\.00 /) // a count, not money
    expect(row('claims_2024')).toMatch(/^claims_2024 3 - 1\.00 /)
    expect(row('prior_bankruptcy')).toMatch(/^prior_bankruptcy no pass 1\.00 /)
    expect(row('credit_score')).toMatch(/^credit_score not found not found 0\.00 -$/)
    // the statement's closing balance fails its check: its answers are below 0.5
    expect(row('ending_balance')).toMatch(/^ending_balance \$37,700\.51 - 0\.49 /)
  })

  test('decline and refer reasons carry the value found and the rule; documents show coverage, type and checks', async () => {
    const text = linesOf((await wordsOf(pdfPath)).words).map((l) => l.text)
    expect(text).toContain('Final outcome: DECLINE')
    expect(text).toContain('- loan_amount (decline): found $1,250,000.00; rule value <= 1000000 not met')
    expect(text).toContain('- net_income (refer): found $310,000.00; rule value >= 500000 not met')
    expect(text.some((t) => /^Warning: 1 document fails an arithmetic check/.test(t))).toBe(true)
    expect(text.filter((t) => /^.+\.(pdf|csv|eml): (\d) pages?, \2 from text$/.test(t)).length).toBe(9)
    expect(text).toContain('type bank statement (0.99); checks: 0 passed, 1 failed')
    expect(text).toContain('type loss run (0.75); checks: 4 passed, 0 failed')
    expect(text.some((t) => t.startsWith('FAILED balance_reconciles: opening balance 48,200.00 + credits 20,500.50 - debits 31,000.00 = 37,700.50, but'))).toBe(true)
  })

  test('no question spans a page break', async () => {
    const lines = linesOf((await wordsOf(pdfPath)).words).filter((l) => !l.text.startsWith('Findings report - case'))
    const start = lines.findIndex((l) => l.text.startsWith(`Questions (${QUESTIONS.length})`))
    const pagesOf = new Map<string, Set<number>>()
    let current: string | null = null
    for (const l of lines.slice(start + 1)) {
      const m = /^(\S+) \[(critical|major|minor), (text|number|date|boolean)\]$/.exec(l.text)
      if (m) current = m[1]!
      if (current) pagesOf.set(current, new Set([...(pagesOf.get(current) ?? []), l.page]))
    }
    expect([...pagesOf.keys()]).toEqual(QUESTIONS.map((q) => q.key))
    const split = [...pagesOf].filter(([, p]) => p.size > 1).map(([k]) => k)
    expect(split).toEqual([])
    expect(new Set([...pagesOf.values()].flatMap((p) => [...p])).size).toBeGreaterThan(1) // the details do cross pages
  })
})
