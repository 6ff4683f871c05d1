/**
 * X-Request-Id on every response: a fresh UUID, or the caller's value when it is a short safe token.
 */
import { Elysia } from 'elysia'

const ids = new WeakMap<Request, string>()
const SAFE = /^[A-Za-z0-9._:-]{1,64}$/

/** The request id assigned to a request (assigning one if the plugin has not run yet). */
export function requestIdOf(request: Request): string {
  let id = ids.get(request)
  if (!id) {
    const inbound = request.headers.get('x-request-id')
    id = inbound && SAFE.test(inbound) ? inbound : crypto.randomUUID()
    ids.set(request, id)
  }
  return id
}

/** Plugin: assigns the request id before routing and sets the response header. */
export const requestId = new Elysia({ name: 'request-id' }).onRequest(({ request, set }) => {
  set.headers['x-request-id'] = requestIdOf(request)
})
