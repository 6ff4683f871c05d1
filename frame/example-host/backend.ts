/**
 * An example host backend: serves the example host page and its mint route, the way a host
 * platform's own server should mint embed handoffs (Authentication 11):
 * 1. authenticate the requester (here: the host's own session cookie),
 * 2. take the subject from the host session, never from the request body,
 * 3. authorise the case for that subject with the host's own rules,
 * 4. defend against CSRF (SameSite=Strict cookie, same-origin Origin check, a per-session token),
 * then call POST /v1/embed/handoffs with an API key holding only `embed:mint`, kept server-side,
 * and hand the handoff to the page (never in a URL, never in a log line).
 *
 * Try it (over HTTPS, since host origins must be https):
 *   SVC_URL=https://cases.example SVC_EMBED_MINT_KEY=svc_live_... HOST_TLS_CERT=cert.pem HOST_TLS_KEY=key.pem \
 *   DEMO_USER_EMAIL=reader@acme.example DEMO_CASES=<case uuid>,<case uuid> bun frame/example-host/backend.ts
 * (SVC_CA_FILE: an extra CA for the service), and add this server's origin to the workspace's embed_allowed_origins.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes, timingSafeEqual } from 'node:crypto'

const env = (name: string) => {
  const v = process.env[name]
  if (!v) throw new Error(`set ${name}`)
  return v
}

/** One signed-in person of the host platform (a real host has its own session store). */
interface HostSession { email: string; csrf: string; cases: ReadonlySet<string> }

/** Starts the example host; returns its origin. */
export function startExampleHost(opts: {
  serviceUrl: string
  mintKey: string
  tls: { cert: string; key: string }
  user: { email: string; cases: string[] }
  port?: number
  /** Extra PEM certificate authority trusted for the service (a test or private deployment). */
  serviceCa?: string
}) {
  const sessions = new Map<string, HostSession>()
  const files = Object.fromEntries(['index.html', 'host.js', 'host.css'].map((n) => [n, readFileSync(join(import.meta.dir, n), 'utf8')]))
  const server = Bun.serve({
    port: opts.port ?? 0,
    tls: opts.tls,
    async fetch(request) {
      const url = new URL(request.url)
      const origin = url.origin
      const cookie = /(?:^|;\s*)host_session=([A-Za-z0-9_-]+)/.exec(request.headers.get('cookie') ?? '')?.[1]
      let session = cookie ? sessions.get(cookie) : undefined
      const csp = `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-src ${new URL(opts.serviceUrl).origin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

      if (request.method === 'GET' && (url.pathname === '/' || url.pathname === '/index.html')) {
        const headers = new Headers({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp, 'cache-control': 'no-store' })
        if (!session) {
          // Demo sign-in: a real host authenticates its user here.
          const id = randomBytes(24).toString('base64url')
          session = { email: opts.user.email, csrf: randomBytes(24).toString('base64url'), cases: new Set(opts.user.cases) }
          sessions.set(id, session)
          headers.append('set-cookie', `host_session=${id}; Path=/; Secure; HttpOnly; SameSite=Strict`)
        }
        const html = files['index.html']!
          .replace('<head>', `<head>\n<meta name="csrf-token" content="${session.csrf}">`)
          .replace('placeholder="https://cases.example"', `value="${new URL(opts.serviceUrl).origin}"`)
        return new Response(html, { headers })
      }
      if (request.method === 'GET' && (url.pathname === '/host.js' || url.pathname === '/host.css')) {
        const type = url.pathname.endsWith('.js') ? 'text/javascript' : 'text/css'
        return new Response(files[url.pathname.slice(1)], { headers: { 'content-type': type, 'content-security-policy': csp } })
      }
      if (request.method === 'POST' && url.pathname === '/mint') {
        // 1. Authenticate the requester.
        if (!session) return new Response(null, { status: 401 })
        // 4. CSRF: same-origin request and the session's token (the cookie is also SameSite=Strict).
        const token = request.headers.get('x-csrf-token') ?? ''
        const sameToken = token.length === session.csrf.length && timingSafeEqual(Buffer.from(token), Buffer.from(session.csrf))
        if (request.headers.get('origin') !== origin || !sameToken) return new Response(null, { status: 403 })
        const body = (await request.json().catch(() => null)) as { case_id?: unknown } | null
        const caseId = typeof body?.case_id === 'string' ? body.case_id : ''
        // 3. Authorise the case for this subject with the host's own rules.
        if (!session.cases.has(caseId)) return new Response(null, { status: 403 })
        // 2. The subject comes from the host session, never from the request.
        const minted = await fetch(`${opts.serviceUrl}/v1/embed/handoffs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${opts.mintKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ scenario_id: caseId, host_origin: origin, subject_email: session.email }),
          ...(opts.serviceCa ? { tls: { ca: opts.serviceCa } } : {}),
        } as RequestInit)
        if (minted.status !== 201) return new Response(null, { status: 502 })
        const { handoff } = (await minted.json()) as { handoff: string }
        return Response.json({ handoff }, { headers: { 'cache-control': 'no-store' } })
      }
      return new Response('not found', { status: 404 })
    },
  })
  return { origin: `https://localhost:${server.port}`, stop: () => server.stop(true) }
}

if (import.meta.main) {
  const host = startExampleHost({
    serviceUrl: env('SVC_URL').replace(/\/+$/, ''),
    mintKey: env('SVC_EMBED_MINT_KEY'),
    tls: { cert: readFileSync(env('HOST_TLS_CERT'), 'utf8'), key: readFileSync(env('HOST_TLS_KEY'), 'utf8') },
    user: { email: env('DEMO_USER_EMAIL'), cases: env('DEMO_CASES').split(',').map((s) => s.trim()) },
    port: Number(process.env.PORT ?? 8443),
    serviceCa: process.env.SVC_CA_FILE ? readFileSync(process.env.SVC_CA_FILE, 'utf8') : undefined,
  })
  console.log(JSON.stringify({ example_host: host.origin }))
}
