/**
 * The OCR thread: tesseract.js's own job dispatcher, with the Tesseract core loaded from its
 * single-file builds (the WebAssembly inside the JavaScript), so the core travels inside
 * `dist/svc` instead of being read from node_modules at run time. It replaces tesseract.js's node
 * worker script, which reads the core's `.wasm` from disk (and picks the larger non-LSTM core).
 */
import { parentPort } from 'node:worker_threads'
import { gunzipSync } from 'node:zlib'
import { access, readFile, unlink, writeFile } from 'node:fs/promises'
import { relaxedSimd, simd } from 'wasm-feature-detect'
// @ts-expect-error tesseract.js ships no types for its worker internals
import dispatcher from 'tesseract.js/src/worker-script/index.js'

let core: unknown

/** The fastest LSTM-only core this CPU runs (relaxed SIMD, SIMD, or plain WebAssembly). */
async function getCore(): Promise<unknown> {
  if (!core) {
    if (await relaxedSimd()) core = require('tesseract.js-core/tesseract-core-relaxedsimd-lstm.wasm.js')
    else if (await simd()) core = require('tesseract.js-core/tesseract-core-simd-lstm.wasm.js')
    else core = require('tesseract.js-core/tesseract-core-lstm.wasm.js')
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
