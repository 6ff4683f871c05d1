/**
 * OCR throughput: pages per second of the service's OCR (the parser pool: spool file, parser
 * process, page analysis, recognition) on a mixed set, side by side with the `tesseract` command
 * line (Debian's `tesseract-ocr`) on the same images at the same parallelism, one thread per
 * process (OMP_THREAD_LIMIT=1, faster on 2 cores). The set: dense scanned statement pages (200 dpi,
 * ~50 lines each), 1920x1080 screenshots of a web application, and rotated pages (screenshots
 * turned 90 and 180 degrees, statements turned 180 and 270). The command line reads each image as
 * it is (it does not turn pages). Targets on the whole set: the native engine at least 0.9 of the
 * command line's pages/s, the built-in engine (tesseract.js) at least 0.5. Each engine is run when
 * available; without `tesseract` on PATH only the built-in engine runs and no ratio is printed.
 *
 *   bun tests/bench/ocr.bench.ts    BENCH_OCR_STATEMENTS=8 BENCH_OCR_SCREENSHOTS=4 BENCH_OCR_ROUNDS=2 BENCH_OCR_PARALLEL=<cores> (defaults)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../server/config'
import { createParserPool } from '../../server/documents/parsing/parser-pool'
import { nativeTesseract } from '../../server/documents/ocr/native'
import { scanned, screenshotPage, textPage, turned } from '../helpers/scans'

const STATEMENTS = Number(process.env.BENCH_OCR_STATEMENTS ?? 8)
const SCREENSHOTS = Number(process.env.BENCH_OCR_SCREENSHOTS ?? 4)
const PARALLEL = Number(process.env.BENCH_OCR_PARALLEL ?? availableParallelism())

/** A dense statement page at 200 dpi (US letter): ~50 lines of dated transactions. */
function statementLines(n: number) {
  const lines = [`First National Bank - statement page ${n + 1}`, 'Date        Description                         Amount      Balance']
  let balance = 48_200
  for (let i = 0; i < 48; i++) {
    const amount = ((i * 7919 + n * 104_729) % 500_000) / 100 - 1500
    balance += amount
    lines.push(`2024-03-${String((i % 28) + 1).padStart(2, '0')}  ${['Customer payment', 'Payroll transfer', 'Card purchase', 'Rent', 'Utility bill'][i % 5]!.padEnd(34)} ${amount.toFixed(2).padStart(10)}  ${balance.toFixed(2).padStart(11)}`)
  }
  return lines
}
const statement = (n: number, quarterTurns = 0) => scanned(textPage(statementLines(n), { width: 1700, height: 2200, fontPx: 24 }), { degrees: 0.5, quality: 80, quarterTurns })
const screenLines = (n: number) => Array.from({ length: 28 }, (_, i) => `2024-03-${String(i + 1).padStart(2, '0')}   Payment received from account ${n * 100 + i}   invoice ${4100 + i}   amount ${(1234.5 + i * 17).toFixed(2)}   balance ${(50_000 - i * 120).toFixed(2)}`)
const screenshot = (n: number) => screenshotPage(`Loan servicing portal - statement ${n + 1}`, screenLines(n))
const png = (c: { toBuffer(t: 'image/png'): Buffer }) => new Uint8Array(c.toBuffer('image/png'))

interface Page { kind: 'statement' | 'screenshot' | 'rotated'; file: string; bytes: Uint8Array; adapter: { adapter: 'image'; label: string } }
const jpegType = { adapter: 'image' as const, label: 'JPEG image' }
const pngType = { adapter: 'image' as const, label: 'PNG image' }
const set: Page[] = [
  ...Array.from({ length: STATEMENTS }, (_, i): Page => ({ kind: 'statement', file: `s${i}.jpg`, bytes: statement(i), adapter: jpegType })),
  ...Array.from({ length: SCREENSHOTS }, (_, i): Page => ({ kind: 'screenshot', file: `w${i}.png`, bytes: png(screenshot(i)), adapter: pngType })),
  { kind: 'rotated', file: 'r90.png', bytes: png(turned(screenshot(90), 1)), adapter: pngType },
  { kind: 'rotated', file: 'r180.png', bytes: png(turned(screenshot(180), 2)), adapter: pngType },
  { kind: 'rotated', file: 's180.jpg', bytes: statement(180, 2), adapter: jpegType },
  { kind: 'rotated', file: 's270.jpg', bytes: statement(270, 3), adapter: jpegType },
]
const dir = mkdtempSync(join(tmpdir(), 'svc-ocr-bench-'))
for (const p of set) writeFileSync(join(dir, p.file), p.bytes)
const kinds = ['statement', 'screenshot', 'rotated'] as const
console.log(`ocr: ${set.length} pages (${kinds.map((k) => `${set.filter((p) => p.kind === k).length} ${k}`).join(', ')}), parallelism ${PARALLEL}`)

/** Runs `work(page)` over `pages` with at most PARALLEL at once; returns pages per second. */
async function pagesPerSecond(pages: Page[], work: (p: Page) => Promise<void>): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < pages.length) await work(pages[next++]!)
  }))
  return pages.length / ((performance.now() - t0) / 1000)
}

const cli = Bun.which('tesseract')
const version = cli ? Bun.spawnSync([cli, '--version']).stdout.toString().split('\n')[0] : undefined
const ROUNDS = Number(process.env.BENCH_OCR_ROUNDS ?? 2)
const groups = [...kinds, 'whole set'] as const
const pagesOf = (g: (typeof groups)[number]) => (g === 'whole set' ? set : set.filter((p) => p.kind === g))

/** The command line on one page, one thread. */
const runCli = (p: Page) => new Promise<void>((resolve, reject) => {
  const proc = Bun.spawn([cli!, join(dir, p.file), '-', '-l', 'eng'], { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, stdout: 'ignore', stderr: 'ignore' })
  proc.exited.then((code) => (code === 0 ? resolve() : reject(new Error(`tesseract exited ${code}`))))
})

/**
 * One engine: the parser pool as the ingestion job uses it, each group of pages run by the service
 * and then by the command line, ROUNDS times (the machine may be shared: interleaving keeps both
 * under the same load), the best of each kept.
 */
async function bench(engine: 'native' | 'wasm') {
  const config = loadConfig({ SVC_PARSE_WORKERS: String(PARALLEL), SVC_OCR_ENGINE: engine }).parse
  const pool = createParserPool(config)
  await Promise.all(Array.from({ length: PARALLEL }, () => pool.parse(crypto.randomUUID(), jpegType, set[0]!.bytes))) // warm-up: processes, model
  if (cli) await runCli(set[0]!) // warm-up (page cache)
  const service: Record<string, number> = {}
  const line: Record<string, number> = {}
  let recognitions = 0
  let words = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (const g of groups) {
      const s = await pagesPerSecond(pagesOf(g), async (p) => {
        const id = crypto.randomUUID()
        const outcome = await pool.parse(id, p.adapter, p.bytes)
        if (g === 'whole set' && round === 0) {
          if (outcome.kind === 'parsed') words += outcome.blocks.reduce((n, b) => n + b.text.split(/\s+/).length, 0)
          recognitions += pool.recent().find((r) => r.documentId === id)?.ocr?.recognitions ?? 0
        }
      })
      service[g] = Math.max(service[g] ?? 0, s)
      if (cli) line[g] = Math.max(line[g] ?? 0, await pagesPerSecond(pagesOf(g), runCli))
    }
  }
  await pool.close()
  const fmt = (r: Record<string, number>) => groups.map((g) => `${g} ${r[g]!.toFixed(2)}`).join(', ')
  console.log(`service (${engine}): ${fmt(service)} pages/s (${(recognitions / set.length).toFixed(2)} recognitions and ${Math.round(words / set.length)} words a page)`)
  if (!cli) return
  console.log(`tesseract command line (${version}), same rounds: ${fmt(line)} pages/s`)
  console.log(`ratio service (${engine}) / command line: ${groups.map((g) => `${g} ${(service[g]! / line[g]!).toFixed(2)}`).join(', ')} (target on the whole set >= ${engine === 'native' ? 0.9 : 0.5})`)
}

for (const engine of [...(nativeTesseract() ? ['native' as const] : []), 'wasm' as const]) await bench(engine)
if (!cli) console.log('tesseract command line: not installed (apt-get install tesseract-ocr); ratios skipped')
rmSync(dir, { recursive: true, force: true })
