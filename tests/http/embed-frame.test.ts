// The frame document GET /embed/{tenant_slug}: served from the app's host, no handoff in the URL,
// no CORS headers, frame-ancestors = the requesting origin when the allow-list holds it, plus a
// tight script/style policy; a plain 404 with frame-ancestors 'none' when the request states no
// origin or embedding is not enabled for it (the same as for an unknown workspace); the
// hashed assets; the bundle budget; the example host only with SVC_EXAMPLE_HOST=1.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { call, problemOf, startApp, type Reply, type TestApp } from '../helpers/app'
import { FRAME_CSS, FRAME_JS } from '../../server/embed/bundle'

// The preload's default does not reach every file of a multi-file run: set it here too.
setDefaultTimeout(60_000)

const HOST = 'https://host.example'
const OTHER = 'https://other.example:8443'

let app: TestApp
let on: { id: string; slug: string }
let off: { id: string; slug: string }

const setOrigins = async (tenantId: string, origins: string[]) => {
  const key = await app.apiKey(tenantId, ['settings:write'])
  expect((await call(app.url, 'PUT', '/v1/tenant-settings', { token: key, body: { embed_allowed_origins: origins } })).status).toBe(200)
}
const get = (path: string, headers: Record<string, string> = {}) => call(app.url, 'GET', path, { headers })
const directives = (csp: string | null) => Object.fromEntries((csp ?? '').split(';').map((d) => d.trim()).filter(Boolean).map((d) => {
  const [name, ...values] = d.split(/\s+/)
  return [name, values.join(' ')]
}))
const expectNotEmbeddable = (r: Reply) => {
  expect(r.status).toBe(404)
  expect(problemOf(r).type).toBe('urn:svc:error:not_found')
  expect(r.headers.get('content-security-policy')).toBe("frame-ancestors 'none'")
}
const noCors = (r: Reply) => expect([...r.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([])

beforeAll(async () => {
  app = await startApp()
  on = await app.tenant()
  off = await app.tenant()
  await setOrigins(on.id, [HOST, OTHER])
})
afterAll(() => app.stop())

describe('GET /embed/{tenant_slug}', () => {
  test('serves the frame document to an allowed origin with frame-ancestors = that origin and a tight policy', async () => {
    const r = await get(`/embed/${on.slug}`, { referer: `${HOST}/cases/1` })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(directives(r.headers.get('content-security-policy'))).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'img-src': "'self' data: blob:",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': HOST, // the origin that asked, never the allow-list
    })
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.headers.get('x-frame-options')).toBeNull()
    noCors(r)
    // Same-origin assets only, no inline script or style, nothing secret.
    expect(r.text).toContain(`<script src="static/${FRAME_JS.name}"></script>`)
    expect(r.text).toContain(`<link rel="stylesheet" href="static/${FRAME_CSS.name}">`)
    expect(r.text).not.toMatch(/<script>|<style|style="|\son[a-z]+="/)
    expect(r.text).not.toMatch(/handoff|session|Bearer/i)
  })

  test('an Origin or Referer inside the list is served; outside it, 404 with frame-ancestors none', async () => {
    const other = await get(`/embed/${on.slug}`, { origin: OTHER })
    expect(other.status).toBe(200)
    expect(directives(other.headers.get('content-security-policy'))['frame-ancestors']).toBe(OTHER)
    expect((await get(`/embed/${on.slug}`, { referer: `${HOST}/cases/1?tab=x` })).status).toBe(200)
    expectNotEmbeddable(await get(`/embed/${on.slug}`, { origin: 'https://evil.example' }))
    expectNotEmbeddable(await get(`/embed/${on.slug}`, { referer: 'https://evil.example/page' }))
    expectNotEmbeddable(await get(`/embed/${on.slug}`, { referer: 'http://host.example/page' }))
  })

  test('no stated origin: the same 404 as an unknown slug, and nothing of the allow-list', async () => {
    // Anyone can fetch the document; what it answers must not tell whether the workspace embeds, or where.
    const bare = await get(`/embed/${on.slug}`)
    const unknown = await get('/embed/no-such-workspace')
    expectNotEmbeddable(bare)
    const strip = (r: Reply) => ({ ...problemOf(r), request_id: undefined, instance: undefined })
    expect(strip(bare)).toEqual(strip(unknown))
    expect([...bare.headers.keys()].sort()).toEqual([...unknown.headers.keys()].sort())
    for (const r of [bare, await get(`/embed/${on.slug}`, { referer: 'https://evil.example/' })]) {
      expect(r.text).not.toContain('host.example')
      expect([...r.headers.values()].join('\n')).not.toMatch(/host\.example|other\.example/)
    }
  })

  test('an empty list, an unknown slug and a suspended workspace: the same 404 with frame-ancestors none', async () => {
    const empty = await get(`/embed/${off.slug}`)
    const unknown = await get('/embed/no-such-workspace')
    expectNotEmbeddable(empty)
    expectNotEmbeddable(unknown)
    noCors(empty)
    const strip = (r: Reply) => ({ ...problemOf(r), request_id: undefined, instance: undefined })
    expect(strip(empty)).toEqual(strip(unknown))
    expect([...empty.headers.keys()].sort()).toEqual([...unknown.headers.keys()].sort())
    const s = await app.tenant()
    await setOrigins(s.id, [HOST])
    expect((await get(`/embed/${s.slug}`, { referer: `${HOST}/` })).status).toBe(200)
    await app.sql`update tenants set status = 'suspended' where id = ${s.id}`
    expectNotEmbeddable(await get(`/embed/${s.slug}`, { referer: `${HOST}/` }))
  })

  test('a path segment that cannot be a slug is the same 404 as an unknown workspace (a frame address is not an API call), never a 400 or a 5xx', async () => {
    const unknown = await get('/embed/no-such-workspace', { referer: `${HOST}/` })
    const strip = (r: Reply) => ({ ...problemOf(r), request_id: undefined, instance: undefined })
    // The upper-case spelling of a workspace that embeds for HOST included: slugs are compared exactly.
    for (const slug of [on.slug.toUpperCase(), '-edge', 'a_b', 'x'.repeat(64), '%00', 'caf%C3%A9', 'a%20b']) {
      const r = await get(`/embed/${slug}`, { referer: `${HOST}/` })
      expectNotEmbeddable(r)
      expect(strip(r), slug).toEqual(strip(unknown))
      expect([...r.headers.keys()].sort(), slug).toEqual([...unknown.headers.keys()].sort())
    }
  })

  test('turning embedding off takes effect at once', async () => {
    const t = await app.tenant()
    await setOrigins(t.id, [HOST])
    expect((await get(`/embed/${t.slug}`, { referer: `${HOST}/` })).status).toBe(200)
    await setOrigins(t.id, [])
    expectNotEmbeddable(await get(`/embed/${t.slug}`, { referer: `${HOST}/` }))
  })
})

describe('frame assets', () => {
  test('script and stylesheet are served by content-hashed names, immutable, no CORS', async () => {
    const js = await get(`/embed/static/${FRAME_JS.name}`)
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(js.headers.get('cache-control')).toContain('immutable')
    expect(js.text).toBe(FRAME_JS.body)
    noCors(js)
    const css = await get(`/embed/static/${FRAME_CSS.name}`)
    expect(css.status).toBe(200)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await get('/embed/static/frame.0000.js')).status).toBe(404)
  })

  test('the frame script is under 30 KB gzipped', () => {
    const gz = gzipSync(FRAME_JS.body, { level: 9 }).byteLength
    console.log(`frame.js: ${FRAME_JS.body.length} bytes, ${gz} gzipped; frame.css: ${FRAME_CSS.body.length} bytes`)
    expect(gz).toBeLessThan(30 * 1024)
  })

  test('the script keeps the bearer in memory: no cookie or storage API is touched', () => {
    expect(FRAME_JS.body).not.toMatch(/document\.cookie|localStorage|sessionStorage|indexedDB/)
  })

  test('the example host page is not served without SVC_EXAMPLE_HOST=1', async () => {
    expect((await get('/example-host/')).status).toBe(404)
    expect((await get('/example-host/host.js')).status).toBe(404)
  })
})
