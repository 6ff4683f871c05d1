/**
 * OCR throughput: pages per second of the service's OCR (the parser pool: spool file, parser
 * process, tesseract.js) on 20 dense scanned statement pages (200 dpi, ~50 lines each), side by
 * side with the `tesseract` command line (Debian's `tesseract-ocr`) on the same images at the same
 * parallelism, one thread per process (OMP_THREAD_LIMIT=1, faster on 2 cores). Target: the service
 * reaches at least 0.5 of the command line's pages/s. Without `tesseract` on PATH the ratio is skipped.
 *
 *   bun tests/bench/ocr.bench.ts         BENCH_OCR_PAGES=20 BENCH_OCR_PARALLEL=<cores> (defaults)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../server/config'
import { createParserPool } from '../../server/documents/parsing/parser-pool'
import { scanned, textPage } from '../helpers/scans'

const PAGES = Number(process.env.BENCH_OCR_PAGES ?? 20)
const PARALLEL = Number(process.env.BENCH_OCR_PARALLEL ?? availableParallelism())

/** A dense statement page at 200 dpi (US letter): ~50 lines of dated transactions. */
function statementPage(n: number) {
  const lines = [`First National Bank - statement page ${n + 1}`, 'Date        Description                         Amount      Balance']
  let balance = 48_200
  for (let i = 0; i < 48; i++) {
    const amount = ((i * 7919 + n * 104_729) % 500_000) / 100 - 1500
    balance += amount
    lines.push(`2024-03-${String((i % 28) + 1).padStart(2, '0')}  ${['Customer payment', 'Payroll transfer', 'Card purchase', 'Rent', 'Utility bill'][i % 5]!.padEnd(34)} ${amount.toFixed(2).padStart(10)}  ${balance.toFixed(2).padStart(11)}`)
  }
  return scanned(textPage(lines, { width: 1700, height: 2200, fontPx: 24 }), { degrees: 0.5, quality: 80 })
}

const dir = mkdtempSync(join(tmpdir(), 'svc-ocr-bench-'))
const images = Array.from({ length: PAGES }, (_, i) => statementPage(i))
images.forEach((img, i) => writeFileSync(join(dir, `p${i}.jpg`), img))
console.log(`ocr: ${PAGES} dense pages (1700x2200 JPEG, ~50 lines), parallelism ${PARALLEL}`)

/** Runs `work(i)` for every page with at most PARALLEL at once; returns pages per second. */
async function pagesPerSecond(work: (i: number) => Promise<void>): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < PAGES) await work(next++)
  }))
  return PAGES / ((performance.now() - t0) / 1000)
}

// The service's OCR: the parser pool as the ingestion job uses it.
const config = loadConfig({ SVC_PARSE_WORKERS: String(PARALLEL) }).parse
const pool = createParserPool(config)
let words = 0
await Promise.all(Array.from({ length: PARALLEL }, () => pool.parse(crypto.randomUUID(), { adapter: 'image', label: 'JPEG image' }, images[0]!))) // warm-up: processes, model
const service = await pagesPerSecond(async (i) => {
  const outcome = await pool.parse(crypto.randomUUID(), { adapter: 'image', label: 'JPEG image' }, images[i]!)
  if (outcome.kind === 'parsed') words += outcome.blocks.reduce((n, b) => n + b.text.split(/\s+/).length, 0)
})
await pool.close()
console.log(`service: ${service.toFixed(2)} pages/s (${Math.round(words / PAGES)} words a page)`)

// The command line, same images, same parallelism, one thread each.
const cli = Bun.which('tesseract')
if (!cli) {
  console.log('tesseract command line: not installed (apt-get install tesseract-ocr); ratio skipped')
} else {
  const run = (i: number) => new Promise<void>((resolve, reject) => {
    const p = Bun.spawn([cli, join(dir, `p${i}.jpg`), '-', '-l', 'eng'], { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, stdout: 'ignore', stderr: 'ignore' })
    p.exited.then((code) => (code === 0 ? resolve() : reject(new Error(`tesseract exited ${code}`))))
  })
  await run(0) // warm-up (page cache)
  const native = await pagesPerSecond(run)
  const version = Bun.spawnSync([cli, '--version']).stdout.toString().split('\n')[0]
  console.log(`tesseract command line (${version}): ${native.toFixed(2)} pages/s`)
  console.log(`ratio service / command line: ${(service / native).toFixed(2)} (target >= 0.5)`)
}
rmSync(dir, { recursive: true, force: true })
