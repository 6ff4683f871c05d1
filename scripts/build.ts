export {}
/**
 * `bun run build`: one self-contained executable (dist/svc) with the service, the operator CLI,
 * the migrations and static assets inside. `dist/svc` serves; `dist/svc --worker` runs jobs only;
 * `dist/svc migrate|tenant|user|api-key ...` is the CLI.
 */
import { resolve } from 'node:path'
import type { BunPlugin } from 'bun'

/**
 * The large assets go into the binary gzip-compressed (readAsset and prepareCanvasBinding inflate
 * them): PGlite's WebAssembly and file bundle (15 MB to 5 MB), Skia (35 MB to 14 MB) and the one
 * Tesseract core's WebAssembly (2.9 MB to 1.1 MB, inflated by the OCR thread on its first page).
 * The canvas package's own requires of its native module become a stub, so Skia is not carried twice.
 */
const compressedAssets: BunPlugin = {
  name: 'compressed-assets',
  setup(build) {
    build.onResolve({ filter: /(skia\.linux-x64-gnu\.node|@napi-rs\/canvas-linux-x64-gnu)$/ }, (args) =>
      args.importer.endsWith('js-binding.js') ? { path: resolve('scripts/native-stub.cjs') } : undefined)
    // The binary's Skia: the module that names it imports the library as an embedded file.
    build.onLoad({ filter: /skia-asset\.ts$/ }, () => ({
      contents: `import skia from ${JSON.stringify(resolve('node_modules/@napi-rs/canvas-linux-x64-gnu/skia.linux-x64-gnu.node'))} with { type: 'file' }\nexport const SKIA_ASSET: string | undefined = skia\n`,
      loader: 'ts',
    }))
    build.onLoad({ filter: /(pglite\.wasm|initdb\.wasm|pglite\.data|skia\.linux-x64-gnu\.node|tesseract-core-simd-lstm\.wasm)$/ }, async (args) =>
      ({ contents: Bun.gzipSync(await Bun.file(args.path).bytes(), { level: 9 }), loader: 'file' }))
  },
}

const result = await Bun.build({
  plugins: [compressedAssets],
  // The OCR thread is its own entry point: worker threads of a compiled binary load embedded entries.
  entrypoints: ['server/main.ts', 'server/documents/ocr/tesseract-thread.ts'],
  compile: { outfile: 'dist/svc' },
  minify: true,
  // Source maps (about 31 MB beside the binary) only when asked: a deployment does not need them.
  sourcemap: process.env.SVC_BUILD_SOURCEMAP === '1' ? 'linked' : 'none',
  target: 'bun',
  // `SVC_BUILD_METAFILE=meta.json bun run build`: what each input adds to the binary's JavaScript.
  metafile: Boolean(process.env.SVC_BUILD_METAFILE),
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
if (process.env.SVC_BUILD_METAFILE) await Bun.write(process.env.SVC_BUILD_METAFILE, JSON.stringify(result.metafile))
console.log(JSON.stringify({ built: 'dist/svc' }))
