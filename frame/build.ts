/**
 * Builds the embed frame with Bun.build: one IIFE script and one stylesheet, minified for the
 * browser. `bun frame/build.ts` prints `{js, css}` as JSON (the server's bundle macro runs it
 * this way at transpile/compile time); `bun frame/build.ts --out DIR` writes frame.js and frame.css.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** The built frame: script and stylesheet text. */
export interface FrameBuild { js: string; css: string }

/** Bundles frame/src/main.tsx (and the CSS it imports) for the browser. */
export async function buildFrame(): Promise<FrameBuild> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, 'src/main.tsx')],
    target: 'browser',
    format: 'iife',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  if (!result.success) throw new AggregateError(result.logs, 'frame build failed')
  const js = result.outputs.find((o) => o.kind === 'entry-point')
  const css = result.outputs.find((o) => o.path.endsWith('.css'))
  if (!js || !css) throw new Error('frame build produced no script or no stylesheet')
  return { js: await js.text(), css: await css.text() }
}

if (import.meta.main) {
  const built = await buildFrame()
  const at = process.argv.indexOf('--out')
  if (at > 0 && process.argv[at + 1]) {
    const dir = process.argv[at + 1]!
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'frame.js'), built.js)
    writeFileSync(join(dir, 'frame.css'), built.css)
    console.error(JSON.stringify({ built: dir, js_bytes: built.js.length, css_bytes: built.css.length }))
  } else {
    process.stdout.write(JSON.stringify(built))
  }
}
