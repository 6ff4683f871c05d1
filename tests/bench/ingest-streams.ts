/**
 * Concurrent case event streams (ingest.bench.ts, part 2): `streams` SSE streams held by one service
 * process, and the p50/p99/max delay from the commit of a case event (written by this process, another
 * than the service, on PostgreSQL) to its arrival on every stream. Resolves with the events missing.
 */
import { openDatabase } from '../../server/db/connect'
import { appendCaseEvent } from '../../server/events/log'
import { ms, now } from './ingest-adapters'

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** Opens STREAMS streams on a case, writes EVENTS events one by one, prints the delays; resolves with how many arrivals were missing. */
export async function streamFigures(svc: { url: string }, key: string, scenario: string, tenantId: string, database: { url: string }, dataDir: string, STREAMS: number, EVENTS: number): Promise<number> {
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
    await db.sql.begin((tx) => appendCaseEvent(tx, { tenantId: tenantId, scenarioId: scenario, type: 'bench.tick', data: { i } }))
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
  for (const a of aborts) a.abort()
  await Promise.allSettled(readers)
  await db.sql.end({ timeout: 5 })
  return missing
}
