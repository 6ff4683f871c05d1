/**
 * PGlite's WebAssembly and file-system bundle, imported as files so that `bun build --compile`
 * embeds them in the single executable (PGlite would otherwise look for them next to its module).
 */
import pgliteWasm from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }
import initdbWasm from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import fsBundle from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }

/** The PGlite options that load its assets from this build. */
export async function pgliteAssetOptions() {
  const [pglite, initdb] = await Promise.all([
    WebAssembly.compile(await Bun.file(pgliteWasm).arrayBuffer()),
    WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()),
  ])
  return { pgliteWasmModule: pglite, initdbWasmModule: initdb, fsBundle: Bun.file(fsBundle) }
}
