/**
 * The API listener never runs in Bun's development mode (Bun's and Elysia's default unless
 * NODE_ENV=production), where an error escaping the app is answered with an HTML page carrying its
 * message and stack; and an error that escapes the app's own error path still leaves as a problem
 * whose detail reveals nothing. The metrics listener likewise answers a failing scrape with a bare 500.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { startApp, type TestApp } from '../helpers/app'
import { serveMetrics, type Metrics } from '../../server/observability/metrics'

setDefaultTimeout(60_000)

const SECRET = 'internal-detail-7f3a: /srv/svc/private.ts'
let app: TestApp
let server: { development: boolean } | undefined

beforeAll(async () => {
  app = await startApp({
    runner: false,
    extend: (a) => {
      // A fault in the error path itself: the thrown value's first read throws, inside the app's
      // error mapping, so the error escapes the app to the listener.
      a.get('/v1/__escape', () => {
        let tripped = false
        throw new Proxy(new Error('thrown'), {
          get(target, key) {
            if (!tripped) { tripped = true; throw new Error(SECRET) }
            return Reflect.get(target, key)
          },
        })
      })
      queueMicrotask(() => { server = (a as unknown as { server: { development: boolean } }).server })
    },
  })
}, 120_000)
afterAll(() => app.stop(), 120_000)

describe('the listener outside development mode', () => {
  test('the API server says it is not in development mode', async () => {
    await Bun.sleep(0)
    expect(server).toBeDefined()
    expect(server!.development).toBe(false)
  })

  test('an error that escapes the app leaves as a 500 problem that reveals nothing', async () => {
    const r = await fetch(`${app.url}/v1/__escape`)
    const text = await r.text()
    expect(r.status).toBe(500)
    expect(r.headers.get('content-type')).toContain('application/problem+json')
    expect(text).not.toContain('internal-detail-7f3a')
    expect(text).not.toContain('private.ts')
    expect(JSON.parse(text)).toMatchObject({ status: 500, type: 'urn:svc:error:internal' })
  })

  test('a failing metrics scrape answers a bare 500 without the error', async () => {
    const failing = { registry: { contentType: 'text/plain', metrics: () => Promise.reject(new Error(SECRET)) } } as unknown as Metrics
    const metrics = serveMetrics(failing, 0, '127.0.0.1')
    try {
      const r = await fetch(`http://127.0.0.1:${metrics.port}/metrics`)
      const text = await r.text()
      expect(r.status).toBe(500)
      expect(text).toBe('metrics unavailable\n')
    } finally {
      metrics.stop()
    }
  })
})
