/**
 * HTTPS for the browser tests. Chromium blocks an http frame inside an https page (mixed content),
 * so both sides run over TLS with one self-signed certificate (made by `selfsigned`, accepted by
 * Chromium through --ignore-certificate-errors):
 * - `httpsProxy`: the app behind https://127.0.0.1:<port>, forwarding every request (SSE streams
 *   included) to the app's http listener unchanged;
 * - `hostSite`: the embedding host on https://localhost:<port>, another origin and another site.
 *   Its page holds one iframe, records every message from the frame after checking origin and
 *   source, and exposes `post(message)` and `openFrame(url, handoff?)` to the test.
 */
import { generate } from 'selfsigned'

let certificate: Promise<{ cert: string; key: string }> | undefined

/** One self-signed certificate for localhost and 127.0.0.1, made once per process. */
export function testCertificate(): Promise<{ cert: string; key: string }> {
  certificate ??= generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] }],
  } as never).then((r: { cert: string; private: string }) => ({ cert: r.cert, key: r.private }))
  return certificate
}

/** A running TLS server. */
export interface HttpsServer { origin: string; stop(): Promise<void> }

/** Starts an HTTPS reverse proxy to `target()` (read per request, so it may be set after start). */
export async function httpsProxy(target: () => string): Promise<HttpsServer> {
  const tls = await testCertificate()
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const headers = new Headers(request.headers)
      headers.delete('host')
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      // An upstream request whose response headers have not come within 5 s is abandoned and, when
      // it is a GET (safe to repeat), sent once more on a fresh connection: an in-process client
      // connection to the app has been seen to stall now and then under a long suite, which made
      // the browser tests time out for reasons that lie in this proxy, not in the frame.
      // The whole response, headers and body, must come within 5 s (an event stream only its
      // headers): a body that stalls after its headers would leave the frame without its script.
      const forward = async (): Promise<Response> => {
        const abort = new AbortController()
        const timer = setTimeout(() => abort.abort(), 5_000)
        try {
          const response = await fetch(target() + url.pathname + url.search, {
            method: request.method,
            headers,
            body,
            redirect: 'manual',
            decompress: false,
            // A fresh upstream connection per request: a reused one the app has already closed can stall.
            keepalive: false,
            signal: abort.signal,
          } as RequestInit)
          if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response
          const bytes = await response.arrayBuffer()
          return new Response(bytes, { status: response.status, headers: response.headers })
        } finally {
          clearTimeout(timer)
        }
      }
      let upstream: Response | undefined
      for (let attempt = 1; !upstream; attempt++) {
        try {
          upstream = await forward()
        } catch (e) {
          if ((request.method !== 'GET' && request.method !== 'HEAD') || attempt === 3) throw e
          console.warn(`https proxy: ${url.pathname} stalled upstream; retrying (attempt ${attempt + 1})`)
        }
      }
      return new Response(upstream.body, { status: upstream.status, headers: upstream.headers })
    },
  })
  return { origin: `https://127.0.0.1:${server.port}`, stop: async () => { await server.stop(true) } }
}

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host platform</title>
<link rel="stylesheet" href="/host.css"></head>
<body><h1>Host platform</h1><iframe id="case" title="Case view"></iframe><script src="/host.js"></script></body></html>`

const HOST_CSS = 'body{margin:0;font-family:sans-serif}h1{font-size:16px;margin:8px}iframe{display:block;width:100%;height:200px;border:0}'

// The host's side of the protocol: post only to the frame's origin, and accept a message only
// when it comes from that origin and from the iframe's own window.
const HOST_JS = `
const frame = document.getElementById('case');
let frameOrigin = null;
window.received = [];
window.autoResize = true;
addEventListener('message', (event) => {
  if (event.origin !== frameOrigin || event.source !== frame.contentWindow) return;
  window.received.push({ at: performance.now(), data: event.data });
  if (event.data && event.data.type === 'svc:resize' && window.autoResize) frame.style.height = event.data.height + 'px';
});
window.post = (message) => frame.contentWindow.postMessage(message, frameOrigin);
window.openFrame = (url, handoff) => new Promise((resolve) => {
  frameOrigin = new URL(url).origin;
  frame.addEventListener('load', () => {
    if (handoff) window.post({ svc: 1, type: 'svc:init', handoff });
    resolve();
  }, { once: true });
  frame.src = url;
});
`

/** Starts the host site on https://localhost:<port>. */
export async function hostSite(): Promise<HttpsServer> {
  const tls = await testCertificate()
  const files: Record<string, [string, string]> = {
    '/': [HOST_PAGE, 'text/html; charset=utf-8'],
    '/host.js': [HOST_JS, 'text/javascript'],
    '/host.css': [HOST_CSS, 'text/css'],
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls,
    fetch(request) {
      const file = files[new URL(request.url).pathname]
      if (!file) return new Response('not found', { status: 404 })
      return new Response(file[0], { headers: { 'content-type': file[1], 'cache-control': 'no-store' } })
    },
  })
  return { origin: `https://localhost:${server.port}`, stop: async () => { await server.stop(true) } }
}
