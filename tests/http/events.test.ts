import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { putBytes, settled, startUpload, textSample, uploadAndComplete } from '../helpers/samples'
import { appendCaseEvent } from '../../server/events/log'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): SIGTERM to a running server ends its open streams cleanly: a second server cannot open the embedded database the test app owns')
if (!process.env.DATABASE_URL) console.warn('skipped without PostgreSQL (set DATABASE_URL): an event written by another process reaches an open stream quickly: the embedded database has one owning process, so no other process writes events')

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let key: string
let readKey: string
let otherKey: string
let tenantId: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  tenantId = t.id
  key = await app.apiKey(t.id, ['scenarios:write'])
  readKey = await app.apiKey(t.id, ['scenarios:read'])
  otherKey = await app.apiKey((await app.tenant()).id, ['scenarios:read'])
}, 60_000)
afterAll(() => app?.stop(), 60_000)

const newCase = async () => (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Events case' } })).body.id as string

interface Sse { id: number; event: string; data: any }

/** A minimal SSE client over fetch: parses records, keeps comments, can be aborted. */
class Stream {
  events: Sse[] = []
  comments: string[] = []
  retry: number | undefined
  ended = false
  error: unknown
  readonly done: Promise<void>
  #waiters = new Set<() => void>()
  constructor(readonly res: Response, readonly abort: AbortController) {
    this.done = this.#read()
  }
  async #read() {
    const reader = this.res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buf = ''
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        buf += value
        let cut: number
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const record = buf.slice(0, cut)
          buf = buf.slice(cut + 2)
          const e: Partial<Sse> = {}
          for (const line of record.split('\n')) {
            if (line.startsWith(':')) this.comments.push(line.slice(1).trim())
            else if (line.startsWith('id: ')) e.id = Number(line.slice(4))
            else if (line.startsWith('event: ')) e.event = line.slice(7)
            else if (line.startsWith('data: ')) e.data = JSON.parse(line.slice(6))
            else if (line.startsWith('retry: ')) this.retry = Number(line.slice(7))
          }
          if (e.id !== undefined) this.events.push(e as Sse)
          for (const w of this.#waiters) w()
        }
      }
      this.ended = true
    } catch (err) {
      this.error = err
    } finally {
      for (const w of this.#waiters) w()
    }
  }
  /** Waits until `check` holds (re-checked on every record), or fails after `ms`. */
  async until(check: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out; events ${JSON.stringify(this.events.map((e) => e.id))} comments ${JSON.stringify(this.comments)}`)
      if (this.ended || this.error) throw new Error('stream ended while waiting')
      await new Promise<void>((resolve) => {
        const w = () => { this.#waiters.delete(w); resolve() }
        this.#waiters.add(w)
        setTimeout(w, 50)
      })
    }
  }
  close() { this.abort.abort() }
}

const open = async (scenarioId: string, opts: { token?: string; lastEventId?: string } = {}) => {
  const abort = new AbortController()
  const headers: Record<string, string> = { authorization: `Bearer ${opts.token ?? readKey}` }
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId
  const res = await fetch(`${app.url}/v1/scenarios/${scenarioId}/events`, { headers, signal: abort.signal })
  return new Stream(res, abort)
}

/** Appends events to a case directly, each in its own transaction (as a state change would). */
const append = async (scenarioId: string, n: number, type = 'test.tick') => {
  for (let i = 0; i < n; i++) await app.sql.begin((tx) => appendCaseEvent(tx, { tenantId, scenarioId, type, data: { i } }))
}

describe('case event stream', () => {
  test('a document upload streams its status changes with sequence ids, as text/event-stream', async () => {
    const c = await newCase()
    const s = await open(c)
    expect(s.res.status).toBe(200)
    expect(s.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(s.res.headers.get('x-request-id')).toBeString()
    expect(s.res.headers.get('cache-control')).toBe('no-store')
    const { doc } = await uploadAndComplete(app, key, c, { filename: 'a.txt', contentType: 'text/plain', bytes: textSample() })
    await settled(app, key, c, doc.id)
    await s.until(() => s.events.length >= 3)
    expect(s.retry).toBe(2000)
    expect(s.events.map((e) => [e.id, e.event, e.data.document_id, e.data.status])).toEqual([
      [1, 'document.status', doc.id, 'awaiting_upload'],
      [2, 'document.status', doc.id, 'processing'],
      [3, 'document.status', doc.id, 'ready'],
    ])
    expect(s.events[2]!.data.previous_status).toBe('processing')
    expect(Date.parse(s.events[2]!.data.occurred_at)).toBeGreaterThan(Date.now() - 60_000)
    s.close()
  })

  test('without Last-Event-ID the history replays; with Last-Event-ID: N exactly N+1... follow', async () => {
    const c = await newCase()
    await append(c, 5)
    const first = await open(c)
    await first.until(() => first.events.length === 5)
    expect(first.events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5])
    first.close() // disconnect after event 5
    await append(c, 3) // written while no one listens
    const again = await open(c, { lastEventId: '5' })
    await again.until(() => again.events.length === 3)
    await append(c, 1) // and one live
    await again.until(() => again.events.length === 4)
    expect(again.events.map((e) => e.id)).toEqual([6, 7, 8, 9])
    expect(again.events.map((e) => e.data.i)).toEqual([0, 1, 2, 0])
    await Bun.sleep(200)
    expect(again.events.length).toBe(4) // nothing replayed twice
    again.close()
    const caughtUp = await open(c, { lastEventId: '9' })
    await Bun.sleep(300)
    expect(caughtUp.events).toEqual([])
    caughtUp.close()
  })

  test('streams see only their own case', async () => {
    const a = await newCase()
    const b = await newCase()
    const sa = await open(a)
    const sb = await open(b)
    await append(a, 2, 'only.a')
    await append(b, 1, 'only.b')
    await sa.until(() => sa.events.length === 2)
    await sb.until(() => sb.events.length === 1)
    expect(sa.events.map((e) => e.event)).toEqual(['only.a', 'only.a'])
    expect(sb.events.map((e) => [e.id, e.event])).toEqual([[1, 'only.b']])
    sa.close()
    sb.close()
  })

  test('a rolled-back change leaves no event and no gap', async () => {
    const c = await newCase()
    const s = await open(c)
    await app.sql.begin(async (tx) => {
      await appendCaseEvent(tx, { tenantId, scenarioId: c, type: 'never', data: {} })
      throw new Error('roll back')
    }).catch(() => {})
    await append(c, 1, 'kept')
    await s.until(() => s.events.length === 1)
    expect(s.events.map((e) => [e.id, e.event])).toEqual([[1, 'kept']])
    s.close()
  })

  test.skipIf(!process.env.DATABASE_URL)(skipTitle('an event written by another process reaches an open stream quickly', NEEDS_POSTGRES), async () => {
    const c = await newCase()
    const s = await open(c)
    await s.until(() => s.retry !== undefined)
    const script = `
      import { openDatabase } from './server/db/connect'
      import { appendCaseEvent } from './server/events/log'
      const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL || undefined, dataDir: process.env.SVC_DATA_DIR })
      await db.sql.begin((tx) => appendCaseEvent(tx, { tenantId: process.env.T, scenarioId: process.env.C, type: 'from.elsewhere', data: { pid: process.pid, at: Date.now() } }))
      await db.sql.end({ timeout: 5 })
      console.log('committed', Date.now())`
    const child = Bun.spawn(['bun', '-e', script], {
      cwd: `${import.meta.dir}/../..`,
      env: { ...process.env, DATABASE_URL: app.config.databaseUrl ?? '', SVC_DATA_DIR: app.config.dataDir, T: tenantId, C: c },
      stdout: 'pipe', stderr: 'pipe',
    })
    expect(await child.exited).toBe(0)
    const out = await new Response(child.stdout).text()
    const committedAt = Number(/committed (\d+)/.exec(out)![1])
    await s.until(() => s.events.length === 1, 5_000)
    const delay = Date.now() - committedAt
    expect(s.events[0]!.event).toBe('from.elsewhere')
    expect(s.events[0]!.data.pid).not.toBe(process.pid)
    expect(delay).toBeLessThan(2_000)
    s.close()
  })

  test('keep-alive comments arrive on a quiet stream', async () => {
    const c = await newCase()
    app.deps.events.streams.keepAliveMs = 100
    try {
      const s = await open(c)
      await s.until(() => s.comments.filter((x) => x === 'keep-alive').length >= 2, 5_000)
      expect(s.events).toEqual([])
      s.close()
    } finally {
      app.deps.events.streams.keepAliveMs = 15_000
    }
  })

  test('a client that goes away is forgotten', async () => {
    const c = await newCase()
    const before = app.deps.events.streams.size
    const s = await open(c)
    await s.until(() => s.retry !== undefined)
    expect(app.deps.events.streams.size).toBe(before + 1)
    s.close()
    const deadline = Date.now() + 5_000
    while (app.deps.events.streams.size > before && Date.now() < deadline) await Bun.sleep(20)
    expect(app.deps.events.streams.size).toBe(before)
  })
})

describe('refusals', () => {
  test('no tenant-wide stream exists: GET /v1/events is 404', async () => {
    for (const path of ['/v1/events', '/v1/tenants/me/events', '/v1/scenarios/events']) {
      const r = await call(app.url, 'GET', path, { token: readKey })
      expect(r.status).toBe(path === '/v1/scenarios/events' ? 400 : 404)
      problemOf(r)
    }
  })

  test('no credential is 401, another workspace or an unknown case is 404, a bad Last-Event-ID is 400', async () => {
    const c = await newCase()
    const anon = await call(app.url, 'GET', `/v1/scenarios/${c}/events`)
    expect(problemOf(anon)).toMatchObject({ status: 401, instance: `/v1/scenarios/${c}/events` })
    expect(anon.headers.get('www-authenticate')).toBe('Bearer')
    expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${c}/events`, { token: otherKey })).status).toBe(404)
    expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${crypto.randomUUID()}/events`, { token: readKey })).status).toBe(404)
    const bad = await call(app.url, 'GET', `/v1/scenarios/${c}/events`, { token: readKey, headers: { 'last-event-id': 'abc' } })
    expect(problemOf(bad)).toMatchObject({ type: 'urn:svc:error:malformed', status: 400 })
  })
})

describe('server drain', () => {
  test.skipIf(!process.env.DATABASE_URL)(skipTitle('SIGTERM to a running server ends its open streams cleanly and the process exits 0', NEEDS_POSTGRES), async () => {
    const c = await newCase()
    const child = Bun.spawn(['bun', 'server/main.ts'], {
      cwd: `${import.meta.dir}/../..`,
      env: {
        ...process.env, PORT: '0', HOST: '127.0.0.1', SVC_DATA_DIR: app.config.dataDir,
        DATABASE_URL: app.config.databaseUrl ?? '', SVC_SECRET_KEY: Buffer.from(app.deps.secretKey).toString('base64'),
      },
      stdout: 'pipe', stderr: 'pipe',
    })
    try {
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader()
      let out = ''
      let url: string | undefined
      const deadline = Date.now() + 30_000
      while (!url && Date.now() < deadline) {
        const { value, done } = await reader.read()
        if (done) break
        out += value
        url = /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1]
      }
      expect(url).toBeString()
      const abort = new AbortController()
      const res = await fetch(`${url!.replace('0.0.0.0', '127.0.0.1')}/v1/scenarios/${c}/events`, { headers: { authorization: `Bearer ${readKey}` }, signal: abort.signal })
      const s = new Stream(res, abort)
      await s.until(() => s.retry !== undefined)
      child.kill('SIGTERM')
      await s.done
      expect(s.ended).toBe(true)
      expect(s.error).toBeUndefined()
      expect(await child.exited).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  })
})

describe('drain (last: it ends this app\'s streams for good)', () => {
  test('open streams end cleanly on drain and new ones are refused with 503', async () => {
    const c = await newCase()
    const streams = await Promise.all([open(c), open(c), open(c)])
    for (const s of streams) await s.until(() => s.retry !== undefined)
    await app.deps.events.streams.drain()
    for (const s of streams) {
      await s.done
      expect(s.ended).toBe(true)
      expect(s.error).toBeUndefined()
    }
    const refused = await call(app.url, 'GET', `/v1/scenarios/${c}/events`, { token: readKey })
    const p = problemOf(refused)
    expect(p).toMatchObject({ type: 'urn:svc:error:unavailable', status: 503 })
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(app.deps.events.streams.size).toBe(0)
  })
})
