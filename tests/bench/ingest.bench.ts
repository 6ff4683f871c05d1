/**
 * Documents and case events:
 *  1. Ingestion speed: pages per second for a 100-page PDF generated with pdf-lib, for the PDF
 *     adapter alone (parse + block cutting, in this process) and end to end through a running
 *     service (complete -> document_ingestion job -> ready).
 *  2. 1,000 concurrent SSE streams held by one service process: the p50/p99/max delay from the
 *     commit of a case event (written by this, another, process) to its arrival on every stream.
 *
 *   bun tests/bench/ingest.bench.ts                          # embedded database
 *   DATABASE_URL=postgres://... bun tests/bench/ingest.bench.ts   # PostgreSQL (LISTEN/NOTIFY)
 *   BENCH_STREAMS=1000 BENCH_EVENTS=20 BENCH_PAGES=100 (defaults)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestDatabase } from '../helpers/database'
import { runCli, spawnService } from '../helpers/service-process'
import { longPdfSample } from '../helpers/samples'
import { ADAPTERS } from '../../server/documents/adapters'
import { toBlocks } from '../../server/documents/blocks'
import { openDatabase } from '../../server/db/connect'
import { appendCaseEvent } from '../../server/events/log'

// Bun's fetch keeps at most 256 requests open at once unless told otherwise at process start.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const self = Bun.spawn(['bun', import.meta.path], { env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' }, stdout: 'inherit', stderr: 'inherit' })
  process.exit(await self.exited)
}

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20)
const PAGES = Number(process.env.BENCH_PAGES ?? 100)
const now = () => performance.timeOrigin + performance.now()
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
const ms = (n: number) => `${n.toFixed(1)} ms`

// ---- 1a. the PDF adapter alone ----
const pdf = await longPdfSample(PAGES)
console.log(`pdf: ${PAGES} pages, ${(pdf.byteLength / 1024).toFixed(0)} KiB`)
await ADAPTERS.pdf(pdf) // warm-up (module load, font tables)
const runs: number[] = []
let blockCount = 0
for (let i = 0; i < 5; i++) {
  const t0 = now()
  const extraction = await ADAPTERS.pdf(pdf)
  blockCount = toBlocks(crypto.randomUUID(), extraction).length
  runs.push(now() - t0)
}
runs.sort((a, b) => a - b)
const median = runs[2]!
console.log(`adapter: median ${ms(median)} per ${PAGES}-page PDF (${blockCount} blocks) = ${(PAGES / (median / 1000)).toFixed(0)} pages/s`)

// ---- 1a. beside it: pdf.js text in drawing order (the adapter before geometry-aware assembly,
// forms and CMaps: text items joined as drawn), and poppler's pdftotext -layout when installed ----
{
  const { getDocumentProxy } = await import('unpdf')
  const { pageBlocks } = await import('../../server/documents/adapters/pdf')
  const plain = async () => {
    const doc = await getDocumentProxy(new Uint8Array(pdf), { verbosity: 0, stopAtErrors: false })
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n)
      const content = await page.getTextContent()
      pageBlocks((content.items as { str?: string; hasEOL?: boolean }[]).map((i) => (i.str ?? '') + (i.hasEOL ? '\n' : '')).join(''))
      page.cleanup()
    }
    await doc.loadingTask.destroy()
  }
  await plain()
  // Interleaved, and in CPU time too, so a busy machine slows both alike.
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
  const wall = { plain: [] as number[], adapter: [] as number[] }
  const used = { plain: [] as number[], adapter: [] as number[] }
  for (let i = 0; i < 7; i++) {
    for (const [name, run] of [['plain', plain], ['adapter', () => ADAPTERS.pdf(pdf)]] as const) {
      const t0 = now()
      const c0 = cpu()
      await run()
      used[name].push(cpu() - c0)
      wall[name].push(now() - t0)
    }
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[3]!
  const rate = (msPerDoc: number) => PAGES / (msPerDoc / 1000)
  console.log(`pdf.js text in drawing order (the adapter before assembly, forms and CMaps): ${rate(mid(wall.plain)).toFixed(0)} pages/s (${rate(mid(used.plain)).toFixed(0)} per CPU second); interleaved with it the adapter: ${rate(mid(wall.adapter)).toFixed(0)} pages/s (${rate(mid(used.adapter)).toFixed(0)} per CPU second) = ${(mid(used.plain) / mid(used.adapter)).toFixed(2)} of it in CPU time`)
  const pdftotext = Bun.which('pdftotext')
  if (!pdftotext) console.log('pdftotext: not installed (poppler-utils), not compared')
  else {
    const popplerRuns: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = now()
      const proc = Bun.spawn([pdftotext, '-layout', '-', '-'], { stdin: pdf, stdout: 'pipe' })
      await new Response(proc.stdout).arrayBuffer()
      await proc.exited
      popplerRuns.push(now() - t0)
    }
    popplerRuns.sort((a, b) => a - b)
    console.log(`pdftotext -layout (a process per file): median ${ms(popplerRuns[2]!)} = ${(PAGES / (popplerRuns[2]! / 1000)).toFixed(0)} pages/s`)
  }
}

// ---- 1a'. a 50-page tabular PDF (a loss run: 40 rows of 5 columns a page, no rules) ----
{
  const { PDFDocument, StandardFonts } = await import('pdf-lib')
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const x = [40, 110, 250, 370, 470]
  for (let p = 0; p < 50; p++) {
    const page = doc.addPage([612, 792])
    page.drawText(`Loss run page ${p + 1}`, { x: 40, y: 760, size: 12, font })
    const rows = [['Year', 'Claim', 'Cause', 'Status', 'Incurred'], ...Array.from({ length: 40 }, (_, r) => [`${2000 + (r % 25)}`, `C-${p}-${r}`, ['Fire', 'Water', 'Theft', 'Wind'][r % 4]!, r % 3 ? 'Closed' : 'Open', `${(r * 731 + p * 97) % 90_000}.00`])]
    rows.forEach((row, i) => row.forEach((v, c) => page.drawText(v, { x: x[c]!, y: 730 - i * 17, size: 9, font })))
  }
  const tabular = new Uint8Array(await doc.save())
  await ADAPTERS.pdf(tabular)
  const truns: number[] = []
  let rows = 0
  for (let i = 0; i < 3; i++) {
    const t0 = now()
    const e = await ADAPTERS.pdf(tabular)
    truns.push(now() - t0)
    rows = e.pages.reduce((n, pg) => n + pg.segments.filter((sg) => sg.kind === 'table_row').length, 0)
  }
  truns.sort((a, b) => a - b)
  console.log(`tabular pdf adapter: median ${ms(truns[1]!)} per 50 pages (${rows} table rows) = ${(50 / (truns[1]! / 1000)).toFixed(0)} pages/s, ${(rows / (truns[1]! / 1000)).toFixed(0)} rows/s`)
}

// ---- 1b. the XLSX adapter alone: a 10,000-row sheet ----
{
  const { default: ExcelJS } = await import('exceljs')
  const ROWS = Number(process.env.BENCH_XLSX_ROWS ?? 10_000)
  const wb = new ExcelJS.Workbook()
  const ws = wb.addWorksheet('Rent roll')
  ws.addRow(['Unit', 'Tenant', 'Lease start', 'Monthly rent'])
  for (let i = 0; i < ROWS; i++) ws.addRow([`U${i}`, `Tenant ${i}`, new Date(Date.UTC(2020, i % 12, 1 + (i % 28))), 500 + (i % 997) + 0.25])
  const xlsx = new Uint8Array(await wb.xlsx.writeBuffer())
  await ADAPTERS.xlsx(xlsx, { maxPages: 2000, maxInflatedBytes: 128 * 1_048_576, maxBlocks: 1_000_000 }) // warm-up
  const xruns: number[] = []
  for (let i = 0; i < 3; i++) {
    const t0 = now()
    await ADAPTERS.xlsx(xlsx, { maxPages: 2000, maxInflatedBytes: 128 * 1_048_576, maxBlocks: 1_000_000 })
    xruns.push(now() - t0)
  }
  xruns.sort((a, b) => a - b)
  console.log(`xlsx adapter: median ${ms(xruns[1]!)} per ${ROWS}-row sheet (${(xlsx.byteLength / 1024).toFixed(0)} KiB) = ${(ROWS / (xruns[1]! / 1000)).toFixed(0)} rows/s`)
}

// ---- a running service ----
const database = await createTestDatabase()
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'))
const env = { DATABASE_URL: database.url, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }
await runCli(['migrate'], env)
const tenant = (await runCli(['tenant', 'create', '--slug', 'bench'], env)).json
const key = (await runCli(['api-key', 'create', '--tenant', 'bench', '--name', 'bench', '--scopes', 'scenarios:read,scenarios:write'], env)).json.key as string
const svc = await spawnService(['bun', 'server/main.ts'], env)
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${svc.url}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: res.status, body: await res.json().catch(() => undefined) as any }
}
let exitCode = 0
try {
  const scenario = (await api('POST', '/v1/scenarios', { name: 'Bench case' })).body.id as string

  // ---- 1b. end to end: the first document (a parser process meets pdf.js for the first time), then warm ones ----
  const endToEnd = async () => {
    const start = await api('POST', `/v1/scenarios/${scenario}/documents`, { filename: 'long.pdf', content_type: 'application/pdf', size_bytes: pdf.byteLength })
    const put = new URL(start.body.upload.url)
    await fetch(`${svc.url}${put.pathname}${put.search}`, { method: 'PUT', headers: start.body.upload.headers, body: pdf })
    const t0 = now()
    const done = await api('POST', `/v1/scenarios/${scenario}/documents/${start.body.id}/complete`, {})
    if (done.status !== 202) throw new Error(`complete: ${done.status}`)
    let doc: any
    do {
      await Bun.sleep(5)
      doc = (await api('GET', `/v1/scenarios/${scenario}/documents/${start.body.id}`)).body
    } while (doc.status === 'processing')
    return { ms: now() - t0, doc }
  }
  const first = await endToEnd()
  console.log(`end to end, first document: complete -> ${first.doc.status} in ${ms(first.ms)} = ${(PAGES / (first.ms / 1000)).toFixed(0)} pages/s`)
  const warm: number[] = []
  for (let i = 0; i < 5; i++) warm.push((await endToEnd()).ms)
  warm.sort((a, b) => a - b)
  const e2e = warm[2]!
  console.log(`end to end, warm: median ${ms(e2e)} (${PAGES} pages; complete, job claim on NOTIFY or poll, parse in a parser process, blocks written, status) = ${(PAGES / (e2e / 1000)).toFixed(0)} pages/s, ${(median / e2e).toFixed(2)} of the adapter alone`)

  // ---- 2. 1,000 concurrent streams ----
  // The events come from a second process; the embedded database belongs to the service process alone.
  if (!database.url) console.log('streams: skipped on the embedded database (events are written by a second process); set DATABASE_URL')
  else {
    const received: number[][] = Array.from({ length: EVENTS + 1 }, () => [])
    const commitAt: number[] = []
    let ready = 0
    const aborts: AbortController[] = []
    const readers = Array.from({ length: STREAMS }, async () => {
      const abort = new AbortController()
      aborts.push(abort)
      const res = await fetch(`${svc.url}/v1/scenarios/${scenario}/events`, { headers: { authorization: `Bearer ${key}`, 'last-event-id': '1000000' }, signal: abort.signal })
      if (res.status !== 200) throw new Error(`stream: ${res.status}`)
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
      let buf = ''
      let counted = false
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buf += value
          if (!counted && buf.includes('retry:')) { counted = true; ready++ }
          for (let m; (m = /id: (\d+)\nevent: bench\.tick\ndata: (.*)\n\n/.exec(buf)); ) {
            const i = JSON.parse(m[2]!).i as number
            received[i]!.push(now())
            buf = buf.slice(m.index + m[0].length)
          }
        }
      } catch { /* aborted at the end */ }
    })
    const openStart = now()
    while (ready < STREAMS) {
      await Bun.sleep(20)
      if (now() - openStart > 60_000) throw new Error(`only ${ready} of ${STREAMS} streams opened`)
    }
    console.log(`streams: ${STREAMS} open in ${ms(now() - openStart)}`)

    // Events are written by this process (another process than the service), each in its own commit;
    // the counter offsets Last-Event-ID: the streams above asked for ids after 1,000,000, so bring the
    // case's sequence there first.
    const db = await openDatabase({ databaseUrl: database.url, dataDir })
    await db.sql`update case_event_counters set last_seq = 1000000 where scenario_id = ${scenario}`
    for (let i = 1; i <= EVENTS; i++) {
      await db.sql.begin((tx) => appendCaseEvent(tx, { tenantId: tenant.id, scenarioId: scenario, type: 'bench.tick', data: { i } }))
      commitAt[i] = now()
      await Bun.sleep(100)
    }
    const waitUntil = now() + 30_000
    while (received.slice(1).some((r) => r.length < STREAMS) && now() < waitUntil) await Bun.sleep(20)
    const delays: number[] = []
    let missing = 0
    for (let i = 1; i <= EVENTS; i++) {
      missing += STREAMS - received[i]!.length
      for (const t of received[i]!) delays.push(Math.max(0, t - commitAt[i]!))
    }
    delays.sort((a, b) => a - b)
    console.log(`delivery over ${STREAMS} streams x ${EVENTS} events (${db.embedded ? 'embedded database, in-process bus' : 'PostgreSQL, LISTEN/NOTIFY'}): p50 ${ms(pct(delays, 50))}, p99 ${ms(pct(delays, 99))}, max ${ms(delays[delays.length - 1]!)}, missing ${missing}`)
    if (missing > 0) exitCode = 1
    for (const a of aborts) a.abort()
    await Promise.allSettled(readers)
    await db.sql.end({ timeout: 5 })
  }
} catch (e) {
  console.error(e)
  console.error(svc.output().slice(-2000))
  exitCode = 1
} finally {
  await svc.stop()
  await database.drop()
  rmSync(dataDir, { recursive: true, force: true })
}
process.exit(exitCode)
