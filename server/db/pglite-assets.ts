/**
 * PGlite's WebAssembly and file-system bundle, imported as files so that `bun build --compile`
 * embeds them in the single executable (PGlite would otherwise look for them next to its module);
 * the build stores them compressed (about 15 MB to 5 MB), readAsset inflates them once at start.
 */
import pgliteWasm from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }
import initdbWasm from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import fsBundle from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }
import { readAsset } from '../assets'

/** The PGlite options that load its assets from this build. */
export async function pgliteAssetOptions() {
  const [pglite, initdb, bundle] = await Promise.all([
    readAsset(pgliteWasm).then((b) => WebAssembly.compile(b)),
    readAsset(initdbWasm).then((b) => WebAssembly.compile(b)),
    readAsset(fsBundle),
  ])
  return { pgliteWasmModule: pglite, initdbWasmModule: initdb, fsBundle: new Blob([bundle]) }
}
