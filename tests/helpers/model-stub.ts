/**
 * A local OpenAI-compatible chat-completions server for tests: `POST {url}/chat/completions` answers
 * with whatever the test's responder returns, can fail on demand (an HTTP status, a hang) for the
 * next n calls or until told otherwise, can hold replies until released, and counts and keeps every
 * request. Any engine pointed at SVC_MODEL_URL={url} talks to it as to a real vendor.
 *
 * Document typing requests (ingestion asks a configured model to type a document the rules are
 * unsure of: server/evaluation/model-typing.ts) are kept apart: answered by `respondTyping`
 * (default `{"type": "other"}`), kept in `typing`, never counted in `calls` nor `requests`, and
 * never failed or held by failNext / failAll / hold (the typing responder returns its own failures).
 */

/** A request the stub received. */
export interface StubRequest {
  body: { model?: string; messages: { role: string; content: string }[]; response_format?: unknown; [k: string]: unknown }
  headers: Headers
  /** The user message's passages: `[block_id: X] document "F", page N` followed by the block text. */
  passages: { blockId: string; filename: string; page: number; text: string }[]
  /** The question key named in the user message ("Question (key K, ..."), if any. */
  questionKey: string | undefined
}

/** What the responder returns: a JSON object sent as the message content, raw content, or a raw HTTP reply. */
export type StubReply = { json: unknown } | { content: string } | { status: number; body?: string; headers?: Record<string, string> }

/** A failure mode: an HTTP status (with optional Retry-After), or a hang (never answers). */
export type StubFailure = { status: number; retryAfter?: number } | 'hang'

/** A running stub. */
export interface ModelStub {
  /** The base URL to put in SVC_MODEL_URL (the stub serves `${url}/chat/completions`). */
  url: string
  /** Requests received (failed ones included). */
  readonly calls: number
  readonly requests: StubRequest[]
  /** Document typing requests received (not in `calls` nor `requests`). */
  readonly typing: StubRequest[]
  /** Sets how document typing requests are answered (a raw HTTP reply or a promise that never settles to fail them). */
  respondTyping(fn: (req: StubRequest) => StubReply | Promise<StubReply>): void
  /** Sets how successful calls are answered. */
  respond(fn: (req: StubRequest) => StubReply | Promise<StubReply>): void
  /** Fails the next `n` calls (then answers normally again). */
  failNext(n: number, how?: StubFailure): void
  /** Fails every call until healthy() is called. */
  failAll(how?: StubFailure): void
  healthy(): void
  /** Holds every reply until the returned function is called (calls still count on arrival). */
  hold(): () => void
  /** Resolves once `n` calls in all have arrived. */
  waitForCalls(n: number, timeoutMs?: number): Promise<void>
  /** Forgets counted calls and kept requests (typing requests included). */
  reset(): void
  stop(): void
}

/** Reads the passages and question key the engine put in the user message. */
export function parseUserMessage(content: string): Pick<StubRequest, 'passages' | 'questionKey'> {
  const passages: StubRequest['passages'] = []
  const parts = content.split('\n')
  for (let i = 0; i < parts.length; i++) {
    const m = /^\[block_id: ([0-9a-f-]+)\] document "(.*)", page (\d+)$/.exec(parts[i]!)
    if (!m) continue
    const lines: string[] = []
    for (i++; i < parts.length && parts[i] !== '---'; i++) lines.push(parts[i]!)
    passages.push({ blockId: m[1]!, filename: m[2]!, page: Number(m[3]), text: lines.join('\n') })
  }
  const key = /^Question \(key ([^,]+),/m.exec(content)?.[1]
  return { passages, questionKey: key }
}

/** Starts a stub on a random loopback port. Default responder: not_found for everything. */
export function startModelStub(): ModelStub {
  let responder: (req: StubRequest) => StubReply | Promise<StubReply> = () => ({ json: { status: 'not_found', value: null, confidence: 0, citations: [] } })
  let typingResponder: (req: StubRequest) => StubReply | Promise<StubReply> = () => ({ json: { type: 'other' } })
  const typing: StubRequest[] = []
  let failures = 0
  let failForever = false
  let failure: StubFailure = { status: 503 }
  let held: Promise<void> | null = null
  let release: () => void = () => {}
  let calls = 0
  const requests: StubRequest[] = []
  const waiters: { n: number; resolve: () => void }[] = []

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (req.method !== 'POST' || path !== '/v1/chat/completions') return new Response('not found', { status: 404 })
      const body = await req.json() as StubRequest['body']
      const user = body.messages?.find((m) => m.role === 'user')?.content ?? ''
      const request: StubRequest = { body, headers: req.headers, ...parseUserMessage(user) }
      const reply = (r: StubReply): Response => {
        if ('status' in r) return new Response(r.body ?? '', { status: r.status, headers: r.headers })
        const content = 'json' in r ? JSON.stringify(r.json) : r.content
        return Response.json({
          id: `chatcmpl-${calls}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? 'stub',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: user.length, completion_tokens: content.length, total_tokens: user.length + content.length },
        })
      }
      const isTyping = (body.messages?.find((m) => m.role === 'system')?.content ?? '').startsWith('You classify one document')
      if (isTyping) {
        typing.push(request)
        return reply(await typingResponder(request))
      }
      calls++
      requests.push(request)
      for (const w of [...waiters]) if (calls >= w.n) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
      if (held) await held
      if (failForever || failures > 0) {
        if (failures > 0) failures--
        if (failure === 'hang') return new Promise<Response>(() => {})
        return new Response(JSON.stringify({ error: { message: 'stub outage' } }), {
          status: failure.status,
          headers: { 'content-type': 'application/json', ...(failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {}) },
        })
      }
      return reply(await responder(request))
    },
  })

  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    get calls() { return calls },
    requests,
    typing,
    respondTyping(fn) { typingResponder = fn },
    respond(fn) { responder = fn },
    failNext(n, how = { status: 503 }) { failures = n; failure = how },
    failAll(how = { status: 503 }) { failForever = true; failure = how },
    healthy() { failForever = false; failures = 0 },
    hold() {
      held = new Promise<void>((resolve) => { release = resolve })
      return () => { held = null; release() }
    },
    waitForCalls(n, timeoutMs = 20_000) {
      if (calls >= n) return Promise.resolve()
      return new Promise<void>((resolve, reject) => {
        const w = { n, resolve: () => { clearTimeout(timer); resolve() } }
        const timer = setTimeout(() => { waiters.splice(waiters.indexOf(w), 1); reject(new Error(`only ${calls} of ${n} model calls arrived`)) }, timeoutMs)
        waiters.push(w)
      })
    },
    reset() { calls = 0; requests.length = 0; typing.length = 0 },
    stop() { release(); server.stop(true) },
  }
}
