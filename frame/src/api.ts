/**
 * The frame's calls to the service, on the same origin as the frame document. The session bearer
 * lives in this closure only (never a cookie, storage or URL). A 401 on any call ends the session.
 */

/** Base of the API relative to the frame document (/embed/{slug} -> /v1). */
export const API_BASE = new URL('../v1/', location.href).pathname

/** An API failure other than 401 (the caller shows the part as unavailable). */
export class ApiError extends Error {
  constructor(readonly status: number) { super(`HTTP ${status}`) }
}

/** Raised after a 401: the session is over and the controller has been told. */
export class SessionEnded extends Error {}

/** An exchange that has not answered by then counts as refused. */
export const EXCHANGE_TIMEOUT_MS = 20_000

/** Exchanges a handoff; null on refusal or failure (every refusal looks the same). */
export async function exchange(handoff: string, hostOrigin: string): Promise<{ session: string; scenario_id: string; expires_at: string; expires_in: number; time_zone?: string } | null> {
  try {
    const res = await fetch(`${API_BASE}embed/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ handoff, host_origin: hostOrigin }),
      credentials: 'omit',
      cache: 'no-store',
      signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
    })
    return res.status === 201 ? await res.json() : null
  } catch {
    return null
  }
}

/** A read-only client bound to one session. */
export interface Api {
  /** GET a JSON resource under /v1 (path without the /v1/ prefix). */
  get<T = any>(path: string): Promise<T>
  /** GET raw bytes (the document download). */
  blob(path: string): Promise<Blob>
  /** GET a streaming response (server-sent events), aborted by `signal`. */
  stream(path: string, signal: AbortSignal): Promise<Response>
  /** Forgets the bearer. */
  drop(): void
}

/** Builds the client; `onUnauthorized` runs once on the first 401. */
export function createApi(bearer: string, onUnauthorized: () => void): Api {
  let token: string | null = bearer
  const request = async (path: string, accept: string, signal?: AbortSignal) => {
    if (token === null) throw new SessionEnded()
    const res = await fetch(API_BASE + path, { headers: { authorization: `Bearer ${token}`, accept }, credentials: 'omit', cache: 'no-store', signal })
    if (res.status === 401) {
      token = null
      onUnauthorized()
      throw new SessionEnded()
    }
    if (!res.ok) throw new ApiError(res.status)
    return res
  }
  return {
    get: async (path) => (await request(path, 'application/json')).json(),
    blob: async (path) => (await request(path, '*/*')).blob(),
    stream: (path, signal) => request(path, 'text/event-stream', signal),
    drop: () => { token = null },
  }
}
