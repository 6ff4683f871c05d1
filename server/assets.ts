/**
 * Assets the compiled binary carries as files (`import x from '...' with { type: 'file' }`). The
 * build stores the large ones gzip-compressed inside `dist/svc` (scripts/build.ts); from source they
 * are the package's own files. Readers call readAsset, which inflates a compressed asset and passes
 * any other through, so the same code runs from source and from the binary.
 */
import { gunzipSync } from 'node:zlib'

/** Whether bytes are gzip (the build's compressed form of an asset). */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
}

/** The bytes of an asset, inflated when the build stored it compressed. */
export async function readAsset(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = await Bun.file(path).bytes()
  return isGzip(bytes) ? new Uint8Array(gunzipSync(bytes)) : bytes
}
