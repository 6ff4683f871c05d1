/**
 * The frame's built assets, inlined at transpile time by the bundle macro (see bundle-macro.ts),
 * with content hashes for immutable, cache-busting asset names.
 */
import { frameBundle, exampleHostFiles } from './bundle-macro' with { type: 'macro' }

const built = frameBundle()

const hashOf = (text: string) => new Bun.CryptoHasher('sha256').update(text).digest('hex').slice(0, 16)

/** A served asset: its name under /embed/static/, type and bytes. */
export interface FrameAsset { name: string; type: string; body: string }

/** The frame script. */
export const FRAME_JS: FrameAsset = { name: `frame.${hashOf(built.js)}.js`, type: 'text/javascript; charset=utf-8', body: built.js }
/** The frame stylesheet. */
export const FRAME_CSS: FrameAsset = { name: `frame.${hashOf(built.css)}.css`, type: 'text/css; charset=utf-8', body: built.css }

/** The example host page's files (served only with SVC_EXAMPLE_HOST=1). */
export const EXAMPLE_HOST: Record<string, FrameAsset> = Object.fromEntries(
  Object.entries(exampleHostFiles()).map(([name, body]) => [name, {
    name,
    type: name.endsWith('.html') ? 'text/html; charset=utf-8' : name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    body,
  }]),
)
