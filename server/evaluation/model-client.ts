/**
 * The client of an OpenAI-compatible chat-completions endpoint (SVC_MODEL_URL, SVC_MODEL_NAME,
 * SVC_MODEL_API_KEY), asking for a JSON object reply. Vendor errors (HTTP 5xx, 429, 408, a timeout,
 * a connection error) are retried with exponential back-off (honouring Retry-After); when the
 * retries are spent the call throws ModelOutageError. Other refusals (a 4xx) and replies that are
 * not a JSON object throw ModelResponseError at once. The evaluation engine uses it per question;
 * generation runs reuse it. The API key travels only in the Authorization header and is never logged.
 */

/** Where and how to call the model. */
export interface ModelSettings {
  modelUrl: string
  modelName?: string
  modelApiKey?: string
  /** One attempt's time limit (default 60 s). */
  modelTimeoutMs?: number
  /** Retries after a vendor error (default 3, so 4 attempts). */
  modelMaxRetries?: number
}

/** One chat message. */
export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

/** Options of one call. */
export interface ChatOptions {
  /** Retries after a vendor error; overrides settings.modelMaxRetries. */
  retries?: number
  /** Aborts the call (and its back-off waits); the AbortSignal's reason is thrown. */
  signal?: AbortSignal
  /** One attempt's time limit; overrides settings.modelTimeoutMs. */
  timeoutMs?: number
  /** The wait before retry `n` (1-based); default 250 ms doubling with ±20 % jitter, at most 8 s. */
  backoffMs?: (retry: number) => number
  temperature?: number
  maxTokens?: number
}

/** Token counts the endpoint reported, when it did. */
export interface ModelUsage { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number }

/** A successful call: the parsed JSON object, the raw content, usage and the attempts it took. */
export interface ChatResult<T> { json: T; content: string; usage?: ModelUsage; attempts: number; model?: string }

/** The model endpoint stayed unavailable through every retry (a vendor outage). */
export class ModelOutageError extends Error {
  constructor(
    /** Attempts made. */
    readonly attempts: number,
    /** The last failure: an HTTP status or `timeout` / `connection_error`. */
    readonly lastFailure: string,
  ) { super(`the model endpoint is unavailable after ${attempts} attempt${attempts === 1 ? '' : 's'} (last: ${lastFailure})`) }
}

/** The endpoint refused the request (a 4xx other than 408/429) or replied with no JSON object. */
export class ModelResponseError extends Error {
  constructor(message: string, readonly status?: number) { super(message) }
}

const RETRYABLE_STATUS = (s: number) => s >= 500 || s === 429 || s === 408
const MAX_BACKOFF_MS = 8_000

/** The default wait before retry `n`: 250 ms, 500 ms, 1 s, ... at most 8 s, ±20 % jitter. */
export function defaultBackoffMs(retry: number, random: () => number = Math.random): number {
  return Math.round(Math.min(MAX_BACKOFF_MS, 250 * 2 ** (retry - 1)) * (0.8 + random() * 0.4))
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason)
  const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
  const onAbort = () => { clearTimeout(timer); reject(signal!.reason) }
  signal?.addEventListener('abort', onAbort, { once: true })
})

/** Reads a JSON object out of a reply's content (a ```json fence around it is tolerated). */
export function parseJsonObject(content: string): Record<string, unknown> | null {
  const text = content.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '')
  try {
    const v = JSON.parse(text)
    return v && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : null
  } catch {
    return null
  }
}

/**
 * Calls `${modelUrl}/chat/completions` with `response_format: {type: "json_object"}` and returns the
 * reply's JSON object. Retries vendor errors with back-off, then throws ModelOutageError; throws
 * ModelResponseError for a refused request or a reply that is not a JSON object; rethrows the
 * signal's reason when aborted.
 */
export async function chatJson<T = Record<string, unknown>>(settings: ModelSettings, messages: ChatMessage[], options: ChatOptions = {}): Promise<ChatResult<T>> {
  const retries = options.retries ?? settings.modelMaxRetries ?? 3
  const timeoutMs = options.timeoutMs ?? settings.modelTimeoutMs ?? 60_000
  const backoff = options.backoffMs ?? ((n: number) => defaultBackoffMs(n))
  const url = `${settings.modelUrl.replace(/\/+$/, '')}/chat/completions`
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (settings.modelApiKey) headers.authorization = `Bearer ${settings.modelApiKey}`
  const body = JSON.stringify({
    model: settings.modelName ?? 'default',
    messages,
    response_format: { type: 'json_object' },
    temperature: options.temperature ?? 0,
    ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
  })
  let lastFailure = 'unknown'
  for (let attempt = 1; attempt <= retries + 1; attempt++) {
    if (options.signal?.aborted) throw options.signal.reason
    let retryAfterMs: number | undefined
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
    try {
      const res = await fetch(url, { method: 'POST', headers, body, signal, redirect: 'manual' })
      const text = await res.text()
      if (res.ok) {
        let reply: { choices?: { message?: { content?: unknown } }[]; usage?: ModelUsage; model?: string }
        try { reply = JSON.parse(text) } catch { throw new ModelResponseError('the model endpoint replied with a body that is not JSON', res.status) }
        const content = reply.choices?.[0]?.message?.content
        if (typeof content !== 'string') throw new ModelResponseError('the model reply has no message content', res.status)
        const json = parseJsonObject(content)
        if (!json) throw new ModelResponseError('the model reply is not a JSON object', res.status)
        return { json: json as T, content, usage: reply.usage, attempts: attempt, model: reply.model }
      }
      if (!RETRYABLE_STATUS(res.status)) throw new ModelResponseError(`the model endpoint refused the request with HTTP ${res.status}`, res.status)
      lastFailure = `HTTP ${res.status}`
      const ra = res.headers.get('retry-after')
      if (ra && /^\d+$/.test(ra.trim())) retryAfterMs = Math.min(MAX_BACKOFF_MS, Number(ra.trim()) * 1000)
    } catch (e) {
      if (e instanceof ModelResponseError) throw e
      if (options.signal?.aborted) throw options.signal.reason
      lastFailure = timeout.aborted ? 'timeout' : 'connection_error'
    }
    if (attempt <= retries) await sleep(retryAfterMs ?? backoff(attempt), options.signal)
  }
  throw new ModelOutageError(retries + 1, lastFailure)
}
