/**
 * Picks the blob driver the configuration names: S3 when every SVC_S3_* variable is set,
 * otherwise the local directory under $SVC_DATA_DIR/blobs.
 */
import { join } from 'node:path'
import type { Config } from '../config'
import { deriveKey } from '../secret-key'
import type { BlobStore } from './blob-store'
import { localBlobStore } from './local'
import { s3BlobStore } from './s3'

export * from './blob-store'

/** The blob store of this deployment. */
export function createBlobStore(config: Config, secretKey: Uint8Array): BlobStore {
  if (config.s3) return s3BlobStore(config.s3)
  return localBlobStore({ root: join(config.dataDir, 'blobs'), baseUrl: config.baseUrl, signingKey: deriveKey(secretKey, 'upload-url') })
}
