/**
 * Skia (`@napi-rs/canvas`, the renderer of PDF pages and images for OCR) is a 35 MB native library.
 * The compiled binary carries it gzip-compressed (14 MB) instead of as a loadable addon, and a
 * parser process writes it out once, to a file named by its content's hash under the temporary
 * directory, then points the package's loader at it (`NAPI_RS_NATIVE_LIBRARY_PATH`). From source
 * nothing changes: the package's own file is used. Call before the first import of the canvas.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SKIA_ASSET } from './skia-asset'
import { isGzip } from '../assets'
import { gunzipSync } from 'node:zlib'

let prepared = false

/** Makes `import('@napi-rs/canvas')` load this build's Skia; idempotent. */
export function prepareCanvasBinding(): void {
  if (prepared || process.env.NAPI_RS_NATIVE_LIBRARY_PATH) return
  prepared = true
  if (SKIA_ASSET === undefined) return // from source: the package's loader finds its own file
  const packed = new Uint8Array(readFileSync(SKIA_ASSET))
  if (!isGzip(packed)) return
  const hash = new Bun.CryptoHasher('sha256').update(packed).digest('hex').slice(0, 16)
  // Not the parser's private TMPDIR (emptied after each parse): the shared temporary directory.
  const dir = join(process.env.SVC_SHARED_TMPDIR ?? tmpdir(), `svc-native-${process.getuid?.() ?? 0}`)
  const target = join(dir, `skia-${hash}.node`)
  if (!existsSync(target)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const partial = `${target}.${process.pid}.tmp`
    writeFileSync(partial, gunzipSync(packed), { mode: 0o500 })
    renameSync(partial, target) // atomic: a concurrent process sees the whole file or none
  }
  process.env.NAPI_RS_NATIVE_LIBRARY_PATH = target
}
