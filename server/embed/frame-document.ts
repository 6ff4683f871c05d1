/**
 * The frame document: GET /embed/{tenant_slug}, served from the same host as /v1 with no CORS
 * headers and no credential in the URL. The request must state the embedding page's origin: the
 * Referer a browser sends with an iframe's navigation (the host page's origin under every default
 * referrer policy) or an Origin header. Only an active workspace whose allow-list holds that origin
 * is served, and its Content-Security-Policy names that one origin as the only frame ancestor (never
 * the list: the policy of a document anyone can fetch would publish which partners embed the
 * workspace). Everything else (no stated origin, one outside the list, an empty list, an unknown or
 * suspended workspace, a path segment that cannot be a slug) is the same ordinary 404 with
 * `frame-ancestors 'none'`, so the answer tells
 * nobody whether a workspace exists or embeds. A host page with `Referrer-Policy: no-referrer` gets
 * the 404: it must send at least its origin (`strict-origin`, the default). Also serves the frame's
 * hashed assets and, with SVC_EXAMPLE_HOST=1, the example host page.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl } from '../auth/access'
import { ProblemError } from '../http/problem'
import { responses } from '../http/docs'
import { allowedOrigins } from './origins'
import { SLUG_PATTERN } from '../../schemas/patterns'
import { STATED_PATTERN } from '../../schemas/common'
import { EXAMPLE_HOST, FRAME_CSS, FRAME_JS, type FrameAsset } from './bundle'

/** The policy of a frame document embeddable by `origins` (the one origin that asked for it). */
export function frameCsp(origins: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data: blob:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${origins.length ? origins.join(' ') : "'none'"}`,
  ].join('; ')
}

/** The policy of the 404 answer: nobody may frame it. */
export const NOT_EMBEDDABLE_CSP = "frame-ancestors 'none'"

/** The origin a request says it comes from: its Origin header, else the origin of its Referer; null when it states none. */
export function statedOrigin(request: Request): string | null {
  const origin = request.headers.get('origin')
  if (origin && origin !== 'null') return origin
  const referer = request.headers.get('referer')
  if (!referer) return null
  try { return new URL(referer).origin } catch { return null }
}

const SLUG = new RegExp(SLUG_PATTERN)

const notEmbeddable = () =>
  new ProblemError('not_found', 'No embeddable view exists at this address.', { headers: { 'content-security-policy': NOT_EMBEDDABLE_CSP } })

/**
 * The HTML of the frame document: a root element, the stylesheet and the script; nothing else. The
 * script is a classic one in <head> so its message listener exists before the body is parsed; the
 * UI mounts once the body is there, and messages that came meanwhile are buffered.
 */
export function frameHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>Case view</title>
<link rel="stylesheet" href="static/${FRAME_CSS.name}">
<script src="static/${FRAME_JS.name}"></script>
</head>
<body>
<div id="svc-root"></div>
</body>
</html>
`
}

const ASSETS = new Map<string, FrameAsset>([[FRAME_JS.name, FRAME_JS], [FRAME_CSS.name, FRAME_CSS]])

/** The frame document, asset and example host routes. */
export function frameDocumentRoutes(deps: AppDeps) {
  const { sql } = deps
  const app = new Elysia({ name: 'embed-frame' })
    .use(accessControl(deps.authenticate))
    .get('/embed/:slug', async ({ params, request, set }) => {
      // A frame address is not an API call: a value that cannot be a slug (too long, another
      // alphabet, a NUL) names no workspace that embeds, so it gets the same 404 (spec: Embed frame address).
      if (!SLUG.test(params.slug)) throw notEmbeddable()
      const [tenant] = await sql<{ id: string; status: string }[]>`select id, status from tenants where slug = ${params.slug}`
      if (!tenant || tenant.status !== 'active') throw notEmbeddable()
      const origins = await allowedOrigins(sql, tenant.id)
      const stated = statedOrigin(request)
      if (stated === null || !origins.includes(stated)) throw notEmbeddable()
      set.headers['content-type'] = 'text/html; charset=utf-8'
      set.headers['content-security-policy'] = frameCsp([stated])
      set.headers['cache-control'] = 'no-store'
      set.headers['x-content-type-options'] = 'nosniff'
      set.headers['referrer-policy'] = 'no-referrer'
      return frameHtml()
    }, {
      access: { public: true },
      // The document states the slug's pattern; the route checks it itself, so that another shape is the same 404, never a 400.
      params: t.Object({ slug: t.String({ [STATED_PATTERN]: SLUG_PATTERN, description: 'The workspace slug (lower-case letters, digits and inner hyphens, at most 63). Any other value is the same 404 as a workspace that does not embed.' }) }),
      detail: {
        summary: 'The embedded read-only case view (an HTML document for an iframe)',
        description: 'No credential in the URL; the host hands a handoff to the frame in svc:init. The request states the embedding page\'s origin (its Referer, as browsers send it for an iframe, or Origin); 404 with frame-ancestors \'none\' when it states none or embedding is not enabled for it, the same as for an unknown workspace. The policy names only that origin as frame ancestor. A value that cannot be a slug is the same 404 (the listed 400 is never answered: it stays for the frozen surface).',
        tags: ['Embed'],
        // 400 stays listed only because the frozen /v1 surface (Versioning 2) had it while a malformed
        // slug was refused as malformed; the route now answers every slug it cannot serve with the 404.
        responses: { ...responses({}, ['malformed', 'not_found']), 200: { description: 'The frame document', content: { 'text/html': { schema: { type: 'string' } } } } },
      },
    })
    .get('/embed/static/:file', ({ params, set }) => {
      const asset = ASSETS.get(params.file)
      if (!asset) throw new ProblemError('not_found', 'No resource exists at this path.')
      set.headers['content-type'] = asset.type
      set.headers['cache-control'] = 'public, max-age=31536000, immutable'
      set.headers['x-content-type-options'] = 'nosniff'
      return asset.body
    }, {
      access: { public: true },
      params: t.Object({ file: t.String({ maxLength: 64 }) }),
      detail: { hide: true },
    })
  if (!deps.config.exampleHost) return app
  const hostFile = (name: string, set: { headers: Record<string, string | number> }) => {
    const file = EXAMPLE_HOST[name]
    if (!file) throw new ProblemError('not_found', 'No resource exists at this path.')
    set.headers['content-type'] = file.type
    set.headers['cache-control'] = 'no-cache'
    set.headers['x-content-type-options'] = 'nosniff'
    set.headers['content-security-policy'] = "default-src 'none'; script-src 'self'; style-src 'self'; frame-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    return file.body
  }
  return app
    .get('/example-host/', ({ set }) => hostFile('index.html', set), { access: { public: true }, detail: { hide: true } })
    .get('/example-host/:file', ({ params, set }) => hostFile(params.file, set), {
      access: { public: true },
      params: t.Object({ file: t.String({ maxLength: 64 }) }),
      detail: { hide: true },
    })
}
