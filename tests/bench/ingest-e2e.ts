/**
 * End to end against the adapter alone (ingest.bench.ts, part 1e): each file through a running
 * service (complete -> job claim -> parser process -> blocks, status, type and checks -> ready, seen
 * on the case's event stream) beside the same adapter function run on the same bytes in this
 * process, two ways:
 *  - one at a time: interleaved, median of BENCH_E2E_ROUNDS warm documents (after one warm-up), each
 *    side timed alone (the other side's garbage collected and settled first, untimed), every round
 *    printed, with
 *    the service's stage times per document (SVC_LOG_LEVEL=debug: `document ingestion stages`), so the
 *    fixed cost a document pays around its parse is itemised;
 *  - a batch: BENCH_BATCH documents of the file uploaded, then completed together; documents per
 *    second from the first `complete` to the last `ready`, against the adapter alone doing the same
 *    documents one after another in this process (the service reads them with its SVC_PARSE_WORKERS
 *    parser processes, as it would a real upload of a whole file).
 * Target for both: end to end >= 0.8 of the adapter alone.
 */
import { mid, ms, now, type BenchFile } from './ingest-adapters'

/** A file to send end to end and the adapter run it is compared with. */
export interface Target { label: string; file: BenchFile; run: () => Promise<unknown>; units: number; unit: string; rounds?: number; batch?: number }

/** The running service this part talks to. */
export interface Service { url: string; output(): string }

/** A pause between the two sides of a round, for the collector of the side just timed to finish. */
const SETTLE_MS = 100

/** The stages printed per file, in the order a document meets them. */
const STAGES = ['before_prepare', 'policy_read', 'parser_wait', 'spool_write', 'parser_read', 'parser_extract', 'parser_after', 'parser_encode', 'reply_transfer', 'parser_release', 'blocks_decode', 'attachments_read', 'typing', 'handler_start', 'handler_lock', 'blocks_write', 'status_write', 'task_finish', 'findings', 'after_parsed', 'after_handler']

/**
 * Runs every target end to end, one at a time and as a batch, and prints a line per target and two
 * tables. `settledAt` is fed by the case's event stream (see followStatuses).
 */
export async function endToEndFigures(svc: Service, key: string, scenario: string, targets: Target[], opts: { rounds: number; batch: number }) {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${svc.url}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })
    return { status: res.status, body: await res.json().catch(() => undefined) as any }
  }
  const stream = followStatuses(svc, key, scenario)
  await Bun.sleep(200)
  const upload = async (file: BenchFile): Promise<string> => {
    const start = await api('POST', `/v1/scenarios/${scenario}/documents`, { filename: file.filename, content_type: file.contentType, size_bytes: file.bytes.byteLength })
    if (start.status !== 201) throw new Error(`create ${file.filename}: ${start.status} ${JSON.stringify(start.body)}`)
    const put = new URL(start.body.upload.url)
    const res = await fetch(`${svc.url}${put.pathname}${put.search}`, { method: 'PUT', headers: start.body.upload.headers, body: file.bytes as Uint8Array<ArrayBuffer> })
    if (res.status !== 204) throw new Error(`put ${file.filename}: ${res.status}`)
    return start.body.id as string
  }
  const complete = async (id: string) => {
    const done = await api('POST', `/v1/scenarios/${scenario}/documents/${id}/complete`, {})
    if (done.status !== 202) throw new Error(`complete: ${done.status} ${JSON.stringify(done.body)}`)
  }
  const deadline = (what: string) => Bun.sleep(300_000).then(() => { throw new Error(`${what}: no status event in 300 s`) })
  // The documents found inside the last ones (a ZIP's members, an email's attachments) are read
  // before the next measurement, so it does not queue behind them.
  const drained = async () => {
    while ((await api('GET', `/v1/scenarios/${scenario}/documents?status=processing&limit=1`)).body?.items?.length) await Bun.sleep(20)
  }

  const one = async (file: BenchFile) => {
    const id = await upload(file)
    const settled = stream.settled(id)
    const t0 = now()
    await complete(id)
    const seen = await Promise.race([settled, deadline(file.filename)])
    const doc = (await api('GET', `/v1/scenarios/${scenario}/documents/${id}`)).body
    // The document's stage line (written before its commit; wait a tick for the log flush).
    await Bun.sleep(20)
    await drained()
    const line = svc.output().split('\n').find((l) => l.includes('document ingestion stages') && l.includes(id))
    const stages: Record<string, number> = {}
    if (line) {
      const f = JSON.parse(line) as Record<string, unknown>
      for (const [k, v] of Object.entries(f)) if (k.endsWith('_ms') && typeof v === 'number') stages[k.slice(0, -3)] = v
      stages.before_prepare = (f.started_at as number) - t0
      stages.after_handler = seen - (f.ended_at as number)
    }
    return { ms: seen - t0, doc, stages }
  }

  const rows: string[] = []
  const batchRows: string[] = []
  for (const t of targets) {
    // ---- one at a time ----
    const e2eRuns: number[] = []
    const adapterRuns: number[] = []
    const stageRuns: Record<string, number[]> = {}
    let status = ''
    let blocks = 0
    for (let i = 0; i <= (t.rounds ?? opts.rounds); i++) {
      const w0 = now()
      await t.run()
      const adapterMs = now() - w0
      // Each side measured alone: the garbage of the run in this process is collected (untimed)
      // before the service parses, and the parser process's after the service is done, so neither
      // side's collector runs on the cores while the other side is timed.
      Bun.gc(true)
      await Bun.sleep(SETTLE_MS)
      const r = await one(t.file)
      await Bun.sleep(SETTLE_MS)
      status = r.doc.status
      blocks = r.doc.block_count ?? 0
      if (i === 0) continue // warm-up
      adapterRuns.push(adapterMs)
      e2eRuns.push(r.ms)
      for (const [k, v] of Object.entries(r.stages)) (stageRuns[k] ??= []).push(v)
    }
    const [ad, e2e] = [mid(adapterRuns), mid(e2eRuns)]
    if (status !== 'ready' && status !== 'ready_degraded') console.log(`  ${t.label}: ended ${status}`)
    const ratio = ad / e2e
    const st = Object.fromEntries(STAGES.filter((k) => stageRuns[k]).map((k) => [k, mid(stageRuns[k]!)]))
    const fixed = e2e - (st.parser_extract ?? 0)
    console.log(`end to end, ${t.label} (${blocks} blocks, ${status}): median ${ms(e2e)} = ${(t.units / (e2e / 1000)).toFixed(t.units < 10 ? 1 : 0)} ${t.unit}/s; adapter alone in between ${ms(ad)}: end to end at ${ratio.toFixed(2)} of the adapter alone ${ratio >= 0.8 ? 'PASS' : 'MISS'}; around the parse ${ms(fixed)}`)
    console.log(`  stages (medians, ms): ${Object.entries(st).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`)
    console.log(`  rounds (adapter alone / end to end / parse in the parser process, ms): ${adapterRuns.map((a, i) => `${a.toFixed(0)}/${e2eRuns[i]!.toFixed(0)}/${(stageRuns.parser_extract?.[i] ?? 0).toFixed(0)}`).join(' ')}`)
    rows.push(`| ${t.label} | ${blocks} | ${ms(ad)} | ${ms(e2e)} | ${ratio.toFixed(2)} | ${ms(fixed)} | ${(st.blocks_write ?? 0).toFixed(1)} | ${(st.reply_transfer ?? 0).toFixed(1)} | ${(st.findings ?? 0).toFixed(1)} |`)

    // ---- a batch: n documents completed together, against the adapter doing the same n ----
    const n = t.batch ?? opts.batch
    if (n <= 0) continue
    const a0 = now()
    for (let i = 0; i < n; i++) await t.run()
    const adapterMs = now() - a0
    Bun.gc(true)
    await Bun.sleep(SETTLE_MS)
    const ids: string[] = []
    for (let i = 0; i < n; i++) ids.push(await upload(t.file))
    const settled = ids.map((id) => stream.settled(id))
    const t0 = now()
    await Promise.all(ids.map(complete))
    const ends = await Promise.race([Promise.all(settled), deadline(`${t.label} batch`)])
    const e2eMs = Math.max(...ends) - t0
    const statuses = await Promise.all(ids.map(async (id) => (await api('GET', `/v1/scenarios/${scenario}/documents/${id}`)).body.status as string))
    const bad = statuses.filter((s) => s !== 'ready' && s !== 'ready_degraded')
    await drained()
    const rate = (x: number) => (n / (x / 1000)).toFixed(1)
    const r = adapterMs / e2eMs
    console.log(`batch of ${n}, ${t.label}: end to end ${ms(e2eMs)} = ${rate(e2eMs)} documents/s; the adapter alone on the same ${n} in this process ${ms(adapterMs)} = ${rate(adapterMs)} documents/s: end to end at ${r.toFixed(2)} of the adapter alone ${r >= 0.8 ? 'PASS' : 'MISS'}${bad.length ? ` (${bad.length} ended ${[...new Set(bad)].join(', ')})` : ''}`)
    batchRows.push(`| ${t.label} | ${n} | ${rate(adapterMs)} | ${rate(e2eMs)} | ${r.toFixed(2)} |`)
  }
  console.log(['One at a time (medians):', '| file | blocks | adapter alone (wall) | end to end (wall) | end to end / adapter | around the parse | blocks write | reply transfer | type + checks |', '|---|---|---|---|---|---|---|---|---|', ...rows].join('\n'))
  console.log(['Batches (documents completed together):', '| file | documents | adapter alone, documents/s | end to end, documents/s | end to end / adapter |', '|---|---|---|---|---|', ...batchRows].join('\n'))
  stream.close()
}

/**
 * Follows the case's event stream: `settled(id)` resolves with the moment a document's status
 * event (other than processing) arrived. Seen on the stream, not by polling: a GET every few
 * milliseconds took CPU from the parse on a 2-core machine.
 */
function followStatuses(svc: Service, key: string, scenario: string) {
  const waiting = new Map<string, (at: number) => void>()
  const arrived = new Map<string, number>()
  const abort = new AbortController()
  void (async () => {
    const res = await fetch(`${svc.url}/v1/scenarios/${scenario}/events`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal })
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buf = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buf += value
      for (let m; (m = /event: document\.status\ndata: (.*)\n\n/.exec(buf)); ) {
        buf = buf.slice(m.index + m[0].length)
        const data = JSON.parse(m[1]!) as { document_id: string; status: string }
        if (data.status === 'processing' || data.status === 'awaiting_upload') continue
        const at = now()
        const resolve = waiting.get(data.document_id)
        if (resolve) { waiting.delete(data.document_id); resolve(at) } else arrived.set(data.document_id, at)
      }
    }
  })().catch(() => {})
  return {
    settled: (id: string) => new Promise<number>((resolve) => {
      const at = arrived.get(id)
      if (at !== undefined) { arrived.delete(id); resolve(at) } else waiting.set(id, resolve)
    }),
    close: () => abort.abort(),
  }
}
