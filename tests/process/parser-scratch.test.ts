/**
 * The parser pool's scratch directories under churn: 500 small XLSX workbooks (exceljs, the reader
 * before SheetJS, spilled their sheets to temporary files in the parser process's private TMPDIR) parsed through one pool while
 * parses around them are canceled (the process killed mid-read or the request dropped while it
 * waits) and timed out (a document that outlasts SVC_PARSE_TIMEOUT_MS). Every workbook that was not
 * canceled reads in full, no parse ends unreadable or crashed (a temporary file deleted under a
 * live parser showed as ENOENT: "the XLSX package could not be read" or a crashed process), and
 * no scratch file is left once the pool has closed. No database: the pool alone.
 */
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import * as XLSX from '@e965/xlsx'
import { writeBook } from '../helpers/spreadsheets'
import { loadConfig } from '../../server/config'
import { createParserPool } from '../../server/documents/parsing/parser-pool'
import { ParseCanceled, type DocumentParser } from '../../server/documents/parsing/parse-control'
import { manyPagesPdf } from '../helpers/hostile-files'

setDefaultTimeout(600_000)

const WORKBOOKS = 500
const DISTINCT = 20
const TIMEOUT_EVERY = 125
const WORKBOOK = { adapter: 'spreadsheet' as const, label: 'XLSX workbook' }

/** A small two-sheet workbook whose cells carry `n`. */
async function workbook(n: number): Promise<Uint8Array> {
  const wb = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Unit', 'Tenant', 'Rent'], [`U${n}`, `Tenant ${n}`, 1000 + n]]), `Rent ${n}`)
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['Note', `workbook ${n}`]]), 'Notes')
  return writeBook(wb, 'xlsx')
}

let pool: DocumentParser | undefined
afterAll(() => pool?.close())

test('500 small XLSX parses with cancels and timeouts around them: every one read, none unreadable or crashed, no scratch left', async () => {
  const books = await Promise.all(Array.from({ length: DISTINCT }, (_, n) => workbook(n)))
  const slow = manyPagesPdf(20_000) // far longer than the limit below on any machine
  // The limit is generous for a cold parser process on a loaded two-core machine; only the slow PDF meets it.
  pool = createParserPool(loadConfig({ ...process.env, SVC_PARSE_WORKERS: '3', SVC_PARSE_TIMEOUT_MS: '10000', SVC_PARSE_MAX_PAGES: '100000' }).parse)
  const p = pool
  const tally = { read: 0, canceled: 0, timedOut: 0 }
  const wrong: string[] = []
  const lanes = 4
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    for (let i = lane; i < WORKBOOKS; i += lanes) {
      // Around the workbooks: a parse that times out every 125th (i = 3, 128, 253, 378: one in each
      // lane, so no lane waits out the limit twice), one canceled every 8th: every 16th at once,
      // while it waits for a parser or has just reached one, the others at a random moment (on an
      // idle machine a small workbook often parses before the random moment comes, so only the
      // immediate cancels are sure to land).
      if (i % TIMEOUT_EVERY === 3) {
        const outcome = await p.parse(crypto.randomUUID(), { adapter: 'pdf', label: 'PDF document' }, slow)
        if (outcome.kind === 'unreadable' && /time limit/.test(outcome.reason)) tally.timedOut++
        else wrong.push(`slow PDF: ${JSON.stringify(outcome).slice(0, 200)}`)
      }
      const n = i % DISTINCT
      const abort = new AbortController()
      if (i % 16 === 13) setTimeout(() => abort.abort(), Math.random() * 200)
      try {
        const parsing = p.parse(crypto.randomUUID(), WORKBOOK, books[n]!, { signal: abort.signal })
        if (i % 16 === 5) abort.abort()
        const outcome = await parsing
        if (outcome.kind !== 'parsed') { wrong.push(`workbook ${n}: ${outcome.kind}: ${outcome.reason}`); continue }
        const text = outcome.blocks.map((b) => b.text)
        if (outcome.pageCount === 2 && text.includes(`U${n} | Tenant ${n} | ${1000 + n}`) && text.includes(`Note | workbook ${n}`)) tally.read++
        else wrong.push(`workbook ${n}: blocks ${JSON.stringify(text)}`)
      } catch (e) {
        if (e instanceof ParseCanceled && abort.signal.aborted) tally.canceled++
        else wrong.push(`workbook ${n}: ${String(e)}`)
      }
    }
  }))
  expect(wrong).toEqual([])
  expect(tally.read + tally.canceled).toBe(WORKBOOKS)
  expect(tally.timedOut).toBe(Math.ceil((WORKBOOKS - 3) / TIMEOUT_EVERY))
  expect(tally.canceled).toBeGreaterThanOrEqual(Math.floor(WORKBOOKS / 16)) // the immediate cancels, at least
  expect(tally.read).toBeGreaterThan(WORKBOOKS * 0.8)
  const spools = readdirSync(tmpdir()).filter((d) => d.startsWith(`svc-parse-${process.pid}-`))
  await p.close()
  // Every parser process has exited and its scratch is gone with the spool.
  expect(spools.filter((d) => existsSync(`${tmpdir()}/${d}`))).toEqual([])
})
