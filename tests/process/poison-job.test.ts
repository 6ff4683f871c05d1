/**
 * A poison job: every attempt at it ends the process running it (here the test kills the worker
 * process with SIGKILL in the middle of each parse, as the kernel's OOM killer would). An attempt
 * counts when it is claimed, so after the kind's limit the next worker finds the job dead instead
 * of running it again: the document fails with a worker-crashed reason and its notification goes
 * out. The killed workers' parser processes do not outlive them.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { call, startApp, type TestApp } from '../helpers/app'
import { uploadAndComplete } from '../helpers/samples'
import { manyPagesPdf } from '../helpers/hostile-files'
import { readOutbox } from '../helpers/outbox'
import { spawnWorker, workerEnv, type WorkerProcess } from '../helpers/worker-process'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): a job whose every attempt kills its process: separate worker processes share the database, which the embedded one cannot')

setDefaultTimeout(180_000)

const postgres = Boolean(process.env.DATABASE_URL)

/** The parser processes that are children of `parent` (from /proc). */
function parsersOf(parent: number): number[] {
  const out: number[] = []
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('parser-process')) continue
      if (Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) === parent) out.push(Number(pid))
    } catch { /* gone meanwhile */ }
  }
  return out
}
const alive = (pid: number) => { try { process.kill(pid, 0); return true } catch { return false } }

describe.skipIf(!postgres)(skipTitle('a job whose every attempt kills its process (PostgreSQL)', NEEDS_POSTGRES), () => {
  let app: TestApp
  let key: string
  const workers: WorkerProcess[] = []

  if (postgres) beforeAll(async () => {
    app = await startApp({ runner: false })
    const t = await app.tenant()
    key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'notifications:write'])
  })
  if (postgres) afterAll(async () => {
    for (const w of workers) if (w.proc.exitCode === null && w.proc.signalCode === null) await w.kill('SIGKILL')
    await app?.stop()
  })

  test('is dead after its limit, its document failed with the reason and notified; no parser outlives its worker', async () => {
    const scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Poison' } })).body.id
    // 20,000 pages, all read: a parse of many seconds, long enough to be killed in the middle.
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'poison.pdf', contentType: 'application/pdf', bytes: manyPagesPdf(20_000) },
      { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
    const [job] = await app.sql`select id from jobs where kind = 'document_ingestion' and payload->>'documentId' = ${doc.id}`
    const dataDir = app.config.dataDir // the document's bytes are there (local blob store); mail lands there too
    // A lease of 3 s (heartbeat every second): with 1 s, a worker starved by a second full suite
    // missed its heartbeats, its own lease lapsed and the job was claimed again inside one worker's
    // life, so five attempts took four kills.
    const env = workerEnv(app, { SVC_DATA_DIR: dataDir, SVC_JOB_LEASE_MS: '3000', SVC_JOB_POLL_MS: '50', SVC_PARSE_MAX_PAGES: '100000', SVC_PARSE_TIMEOUT_MS: '600000' })

    let kills = 0
    const parsers: number[] = []
    for (let round = 0; round < 8; round++) {
      const worker = await spawnWorker(env)
      workers.push(worker)
      // Wait until this worker holds the job (claimed after the last one's lease lapsed) or finds it dead.
      const deadline = Date.now() + 30_000
      let row: any
      for (;;) {
        ;[row] = await app.sql`select locked_by, attempts, dead_at from jobs where id = ${job!.id}`
        if (row.dead_at !== null || row.locked_by === worker.workerId) break
        if (Date.now() > deadline) throw new Error(`worker never claimed the job: ${JSON.stringify(row)}\n${worker.output()}`)
        await Bun.sleep(25)
      }
      if (row.dead_at !== null) break
      // The parse is under way once the worker has a parser process (or the claim gave the job up).
      // Waited for, not slept for: on a loaded machine reading the blob and starting the process can
      // take well over a fixed pause.
      let own: number[] = []
      let gaveUp = false
      const started = Date.now() + 60_000
      for (;;) {
        if ((await app.sql`select dead_at from jobs where id = ${job!.id}`)[0]!.dead_at !== null) { gaveUp = true; break }
        own = parsersOf(worker.proc.pid)
        if (own.length > 0) break
        if (Date.now() > started) throw new Error(`the worker started no parser process\n${worker.output()}`)
        await Bun.sleep(25)
      }
      if (gaveUp) break
      parsers.push(...own)
      await worker.kill('SIGKILL')
      kills++
    }

    // Five attempts (the kind's limit), each ended by a kill; the sixth claim gave it up unrun.
    if (kills !== 5) console.error(workers.map((w) => w.output()).join('\n-----\n'))
    expect(kills).toBe(5)
    const [dead] = await app.sql`select attempts, dead_at, last_error from jobs where id = ${job!.id}`
    expect(dead!.dead_at).toBeInstanceOf(Date)
    expect(dead!.attempts).toBe(5)
    expect(dead!.last_error).toContain('worker crashed')
    const after = (await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${doc.id}`, { token: key })).body
    expect(after.status).toBe('failed')
    expect(after.error_detail).toContain('worker crashed')

    // The notification goes out from the surviving worker.
    const deadline = Date.now() + 30_000
    while (readOutbox(dataDir).length === 0 && Date.now() < deadline) await Bun.sleep(50)
    const [mail] = readOutbox(dataDir)
    expect(mail?.to).toContain('uw@example.test')
    expect(mail?.text).toContain('failed')

    // The killed workers' parser processes (one each, busy with the PDF) did not outlive them.
    expect(parsers.length).toBe(5)
    const quiet = Date.now() + 5_000
    while (parsers.some(alive) && Date.now() < quiet) await Bun.sleep(50)
    expect(parsers.filter(alive)).toEqual([])
  })
})
