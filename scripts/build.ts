export {}
/**
 * `bun run build`: one self-contained executable (dist/svc) with the service, the operator CLI,
 * the migrations and static assets inside. `dist/svc` serves; `dist/svc --worker` runs jobs only;
 * `dist/svc migrate|tenant|user|api-key ...` is the CLI.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { BunPlugin } from 'bun'

/**
 * The embedded database's data directory as initdb makes it, a zstd-compressed tar (1.7 MB) that
 * the binary unpacks into a fresh data directory instead of running initdb at start
 * (server/db/pgdata-template.ts). Made once per PGlite version (about 15 s) and kept under
 * node_modules/.cache, so a rebuild reuses it and a PGlite upgrade makes a new one.
 */
async function pgdataTemplate(): Promise<string> {
  const version = (JSON.parse(readFileSync('node_modules/@electric-sql/pglite/package.json', 'utf8')) as { version: string }).version
  const path = resolve(`node_modules/.cache/svc-build/pgdata-${version}.tar.zst`)
  if (existsSync(path)) return path
  const { PGlite } = await import('@electric-sql/pglite')
  const db = await PGlite.create()
  await db.exec('checkpoint')
  const tar = new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer())
  await db.close()
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(`${path}.${process.pid}`, Bun.zstdCompressSync(tar, { level: 19 }))
  renameSync(`${path}.${process.pid}`, path)
  return path
}
const template = await pgdataTemplate()

/**
 * The large assets go into the binary gzip-compressed (readAsset and prepareCanvasBinding inflate
 * them): PGlite's WebAssembly and file bundle (15 MB to 5 MB), Skia (35 MB to 14 MB) and the one
 * Tesseract core's WebAssembly (2.9 MB to 1.1 MB, inflated by the OCR thread on its first page)
 * and libheif's (1.4 MB to 0.5 MB, inflated on a parser process's first HEIF file).
 * The canvas package's own requires of its native module become a stub, so Skia is not carried twice.
 */
const compressedAssets: BunPlugin = {
  name: 'compressed-assets',
  setup(build) {
    build.onResolve({ filter: /(skia\.linux-x64-gnu\.node|@napi-rs\/canvas-linux-x64-gnu)$/ }, (args) =>
      args.importer.endsWith('js-binding.js') ? { path: resolve('scripts/native-stub.cjs') } : undefined)
    // The binary's initialised embedded database (pgdata-template.ts), an embedded file too.
    build.onLoad({ filter: /pgdata-template\.ts$/ }, () => ({
      contents: `import template from ${JSON.stringify(template)} with { type: 'file' }\nexport const PGDATA_TEMPLATE: string | undefined = template\n`,
      loader: 'ts',
    }))
    // The binary's Skia: the module that names it imports the library as an embedded file.
    build.onLoad({ filter: /skia-asset\.ts$/ }, () => ({
      contents: `import skia from ${JSON.stringify(resolve('node_modules/@napi-rs/canvas-linux-x64-gnu/skia.linux-x64-gnu.node'))} with { type: 'file' }\nexport const SKIA_ASSET: string | undefined = skia\n`,
      loader: 'ts',
    }))
    build.onLoad({ filter: /(pglite\.wasm|initdb\.wasm|pglite\.data|skia\.linux-x64-gnu\.node|tesseract-core-simd-lstm\.wasm|libheif\.wasm)$/ }, async (args) =>
      ({ contents: Bun.gzipSync(await Bun.file(args.path).bytes(), { level: 9 }), loader: 'file' }))
  },
}

const result = await Bun.build({
  plugins: [compressedAssets],
  // binary.ts (first: the executable's entry) loads main.ts or, for a CLI command, cli-main.ts, so
  // a command does not parse the service's bundle. The OCR thread is its own entry point too:
  // worker threads of a compiled binary load embedded entries.
  entrypoints: ['server/binary.ts', 'server/main.ts', 'server/cli-main.ts', 'server/documents/ocr/tesseract-thread.ts'],
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
