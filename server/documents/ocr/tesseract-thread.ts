/**
 * The OCR thread: tesseract.js's own job dispatcher, with the Tesseract core loaded from its
 * loader script and its `.wasm` file handed over as bytes (`wasmBinary`), so the core travels
 * inside `dist/svc` instead of being read from node_modules at run time. It replaces tesseract.js's
 * node worker script, which reads the core's `.wasm` from disk (and picks the larger non-LSTM core).
 *
 * One core ships: the SIMD LSTM-only build. WebAssembly SIMD (fixed-width, 128-bit) is on in every
 * runtime that runs this service: Bun's JavaScriptCore enables it on x86-64 and ARM64, the only
 * CPUs Bun (and so `dist/svc`) runs on, without a switch to turn it off. The relaxed-SIMD core is a
 * few per cent faster where relaxed SIMD exists, and the plain core runs nowhere SIMD does not;
 * carrying all three cost 11.7 MB of the binary (each is WebAssembly encoded inside JavaScript).
 * The build stores this core's `.wasm` gzip-compressed (2.9 MB to 1.1 MB, scripts/build.ts); it is
 * inflated here, when the thread loads its core for the first recognition, never at start.
 */
import { parentPort } from 'node:worker_threads'
import { gunzipSync } from 'node:zlib'
import { access, readFile, unlink, writeFile } from 'node:fs/promises'
import { simd } from 'wasm-feature-detect'
import coreWasm from '../../../node_modules/tesseract.js-core/tesseract-core-simd-lstm.wasm' with { type: 'file' }
// @ts-expect-error tesseract.js-core ships no types for its Emscripten loader
import coreFactory from 'tesseract.js-core/tesseract-core-simd-lstm.js'
// @ts-expect-error tesseract.js ships no types for its worker internals
import dispatcher from 'tesseract.js/src/worker-script/index.js'
import { readAsset } from '../../assets'

type CoreFactory = (options: Record<string, unknown>) => Promise<unknown>

let core: CoreFactory | undefined

/**
 * The Tesseract core's factory, its WebAssembly bytes read (and inflated) on the first call only:
 * the dispatcher calls it when the thread's first job loads the engine.
 */
async function getCore(): Promise<CoreFactory> {
  if (!core) {
    if (!(await simd())) throw new Error('the built-in OCR engine needs WebAssembly SIMD, which this runtime lacks; install the tesseract command and set SVC_OCR_ENGINE=native')
    const wasmBinary = await readAsset(coreWasm)
    core = (options) => (coreFactory as CoreFactory)({ ...options, wasmBinary })
  }
  return core
}

parentPort!.on('message', (packet: unknown) => dispatcher.dispatchHandlers(packet, (reply: unknown) => parentPort!.postMessage(reply)))
dispatcher.setAdapter({
  getCore,
  gunzip: gunzipSync,
  fetch,
  readCache: readFile,
  writeCache: writeFile,
  deleteCache: (path: string) => unlink(path).catch(() => {}),
  checkCache: (path: string) => access(path).then(() => true, () => false),
})
