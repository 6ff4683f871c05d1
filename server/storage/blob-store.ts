/**
 * The blob store: where document bytes live. One small interface with two drivers: the local
 * directory under $SVC_DATA_DIR/blobs (uploads go to this service's own signed URL) and an
 * S3-compatible bucket (uploads go straight to the bucket through an AWS SDK presigned URL).
 */

/** What a presigned upload is bound to. */
export interface UploadGrant {
  tenantId: string
  documentId: string
  contentType: string
  size: number
  /** Lower-case hex SHA-256 the bytes must have, when the client announced one. */
  sha256?: string
  expiresAt: Date
}

/** The upload instructions handed to the client. */
export interface PresignedUpload {
  method: 'PUT'
  url: string
  /** Headers the PUT must carry (the signature covers them). */
  headers: Record<string, string>
  /**
   * The key the bytes will land under when the store decides it up front (S3); undefined when the
   * service's own upload route picks a key as it receives them (local).
   */
  key?: string
}

/** Bytes to store. */
export type BlobBody = ReadableStream<Uint8Array> | Uint8Array

/** A byte range, both ends inclusive (as in an HTTP Range header). */
export interface ByteRange { start: number; end: number }

/** The blob store interface every driver implements. */
export interface BlobStore {
  readonly driver: 'local' | 's3'
  /** Stores bytes under a key; a failed or aborted body leaves nothing behind. */
  put(key: string, body: BlobBody, opts: { contentType: string; size?: number }): Promise<void>
  /** The bytes of a key as a stream (optionally a range), or null when the key holds nothing. */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>
  /** The size of a key, or null when it holds nothing. */
  head(key: string): Promise<{ size: number } | null>
  /**
   * The file that holds a key's bytes on this machine, or null when the key holds nothing (only
   * the local driver has one): a parse links it into its parser process's spool instead of reading
   * the bytes into the service and writing them out again.
   */
  localPath?(key: string): Promise<string | null>
  /** Removes a key; removing an absent key is not an error. */
  delete(key: string): Promise<void>
  /** A URL the client PUTs the bytes of one document to, without an Authorization header. */
  presignUpload(grant: UploadGrant): Promise<PresignedUpload>
}

/** How long a presigned upload URL stays valid. */
export const UPLOAD_URL_TTL_SECONDS = 15 * 60

/** The key prefix of a document's bytes: tenant first, like every other workspace key. */
export function documentKeyPrefix(tenantId: string, documentId: string): string {
  return `${tenantId}/${documentId}`
}

/** Reads a whole (small) blob into memory; null when absent. */
export async function readAll(store: BlobStore, key: string, range?: ByteRange): Promise<Uint8Array | null> {
  const stream = await store.get(key, range)
  if (!stream) return null
  return new Uint8Array(await new Response(stream).arrayBuffer())
}
