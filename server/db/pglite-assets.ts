/**
 * PGlite's WebAssembly and file-system bundle, imported as files so that `bun build --compile`
 * embeds them in the single executable (PGlite would otherwise look for them next to its module);
 * the build stores them compressed (about 15 MB to 5 MB), readAsset inflates them once at start.
 */
import { readFileSync } from 'node:fs'
import pgliteWasm from '../../node_modules/@electric-sql/pglite/dist/pglite.wasm' with { type: 'file' }
import initdbWasm from '../../node_modules/@electric-sql/pglite/dist/initdb.wasm' with { type: 'file' }
import fsBundle from '../../node_modules/@electric-sql/pglite/dist/pglite.data' with { type: 'file' }
import { readAsset } from '../assets'
import { PGDATA_TEMPLATE } from './pgdata-template'

/**
 * The PGlite options that load its assets from this build. `fresh`: the data directory holds no
 * database yet. The binary then unpacks its initialised data directory (pgdata-template.ts);
 * otherwise initdb's WebAssembly is compiled only when initdb will run (a fresh directory, from source).
 */
export async function pgliteAssetOptions(fresh = true) {
  const template = fresh && PGDATA_TEMPLATE !== undefined ? new Blob([Bun.zstdDecompressSync(readFileSync(PGDATA_TEMPLATE)) as Uint8Array<ArrayBuffer>]) : undefined
  const [pglite, initdb, bundle] = await Promise.all([
    readAsset(pgliteWasm).then((b) => WebAssembly.compile(b)),
    fresh && !template ? readAsset(initdbWasm).then((b) => WebAssembly.compile(b)) : undefined,
    readAsset(fsBundle),
  ])
  return { pgliteWasmModule: pglite, fsBundle: new Blob([bundle]), ...(initdb ? { initdbWasmModule: initdb } : {}), ...(template ? { loadDataDir: template } : {}) }
}
