/**
 * The local blob driver: bytes under $SVC_DATA_DIR/blobs/<key>, written to a temporary file and
 * renamed into place so a reader never sees half a blob; uploads go to this service's own signed
 * URL (upload-url.ts).
 */
import { mkdir, rename, rm, rmdir, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { BlobBody, BlobStore, ByteRange, PresignedUpload, UploadGrant } from './blob-store'
import { uploadUrl } from './upload-url'

const SAFE_KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/

/** Options of the local driver. */
export interface LocalBlobOptions {
  /** The directory that holds every blob ($SVC_DATA_DIR/blobs). */
  root: string
  /** The public base URL upload URLs start with. */
  baseUrl: string
  /** The sub-key upload URLs are signed with. */
  signingKey: Uint8Array
}

/** Creates the local driver. */
export function localBlobStore(opts: LocalBlobOptions): BlobStore {
  const pathOf = (key: string) => {
    if (!SAFE_KEY.test(key) || key.split('/').includes('..')) throw new Error(`unsafe blob key ${JSON.stringify(key)}`)
    return join(opts.root, key)
  }
  const exists = async (path: string) => {
    try {
      const s = await stat(path)
      return s.isFile() ? s : null
    } catch { return null }
  }
  return {
    driver: 'local',
    async put(key: string, body: BlobBody) {
      const path = pathOf(key)
      await mkdir(dirname(path), { recursive: true })
      const part = `${path}.part-${crypto.randomUUID()}`
      try {
        if (body instanceof Uint8Array) await Bun.write(part, body)
        else await Bun.write(part, new Response(body))
        await rename(part, path)
      } catch (e) {
        await rm(part, { force: true })
        throw e
      }
    },
    async get(key: string, range?: ByteRange) {
      const path = pathOf(key)
      if (!(await exists(path))) return null
      const file = Bun.file(path)
      return (range ? file.slice(range.start, range.end + 1) : file).stream()
    },
    async localPath(key: string) {
      const path = pathOf(key)
      return (await exists(path)) ? path : null
    },
    async head(key: string) {
      const s = await exists(pathOf(key))
      return s ? { size: s.size } : null
    },
    async delete(key: string) {
      const path = pathOf(key)
      await rm(path, { force: true })
      // Tidy empty parent folders up to the root (a folder still in use stays: rmdir refuses).
      let dir = dirname(path)
      while (dir.startsWith(opts.root) && dir !== opts.root) {
        try { await rmdir(dir) } catch { break }
        dir = dirname(dir)
      }
    },
    async presignUpload(grant: UploadGrant): Promise<PresignedUpload> {
      const url = uploadUrl(opts.baseUrl, opts.signingKey, {
        method: 'PUT',
        tenantId: grant.tenantId,
        documentId: grant.documentId,
        size: grant.size,
        contentType: grant.contentType,
        expires: Math.floor(grant.expiresAt.getTime() / 1000),
      })
      return { method: 'PUT', url, headers: { 'content-type': grant.contentType } }
    },
  }
}
