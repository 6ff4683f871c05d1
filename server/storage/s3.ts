/**
 * The S3-compatible blob driver (AWS SDK v3): bytes in one bucket under tenant-first keys; uploads
 * go straight to the bucket with a presigned PUT whose signature covers the content type, the
 * length and (when announced) the SHA-256 checksum. Path-style addressing, so MinIO, Ceph and
 * other S3-compatible stores work with just an endpoint.
 */
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import type { S3Config } from '../config'
import { documentKeyPrefix, UPLOAD_URL_TTL_SECONDS, type BlobBody, type BlobStore, type ByteRange, type PresignedUpload, type UploadGrant } from './blob-store'

const notFound = (e: unknown) => {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } }
  return err?.name === 'NoSuchKey' || err?.name === 'NotFound' || err?.$metadata?.httpStatusCode === 404
}

/** Creates the S3 driver for the configured bucket. */
export function s3BlobStore(config: S3Config): BlobStore {
  const client = new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: true,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    // An unreachable store fails within seconds (the routes answer 503 unavailable), never hangs:
    // 2 s to connect, then 3 s without a byte either way (socketTimeout is an inactivity timeout, so
    // a long transfer that keeps moving is not cut), twice. Not requestTimeout: in this SDK it only
    // logs a warning unless told to throw, and then it bounds the whole upload before the reply's
    // headers. 30 s of requestTimeout here kept a complete waiting on a store that accepted
    // connections and never answered until the listener dropped the request.
    requestHandler: { connectionTimeout: 2_000, socketTimeout: 3_000 },
    maxAttempts: 2,
  })
  const Bucket = config.bucket
  return {
    driver: 's3',
    async put(key: string, body: BlobBody, opts: { contentType: string; size?: number }) {
      // The SDK needs a length for a streamed body; buffer a stream of unknown length.
      const data = body instanceof Uint8Array || opts.size !== undefined ? body : new Uint8Array(await new Response(body).arrayBuffer())
      const ContentLength = data instanceof Uint8Array ? data.byteLength : opts.size
      await client.send(new PutObjectCommand({ Bucket, Key: key, Body: data as never, ContentType: opts.contentType, ContentLength }))
    },
    async get(key: string, range?: ByteRange) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }))
        return out.Body ? out.Body.transformToWebStream() as ReadableStream<Uint8Array> : null
      } catch (e) {
        if (notFound(e)) return null
        throw e
      }
    },
    async head(key: string) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }))
        return { size: Number(out.ContentLength ?? 0) }
      } catch (e) {
        if (notFound(e)) return null
        throw e
      }
    },
    async delete(key: string) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }))
    },
    async presignUpload(grant: UploadGrant): Promise<PresignedUpload> {
      const key = documentKeyPrefix(grant.tenantId, grant.documentId)
      const checksum = grant.sha256 ? Buffer.from(grant.sha256, 'hex').toString('base64') : undefined
      const expiresIn = Math.max(1, Math.min(UPLOAD_URL_TTL_SECONDS, Math.ceil((grant.expiresAt.getTime() - Date.now()) / 1000)))
      const url = await getSignedUrl(client, new PutObjectCommand({
        Bucket, Key: key, ContentType: grant.contentType, ContentLength: grant.size, ...(checksum ? { ChecksumSHA256: checksum } : {}),
      }), { expiresIn, signableHeaders: new Set(['content-type', 'content-length']) })
      return { method: 'PUT', url, headers: { 'content-type': grant.contentType }, key }
    },
  }
}
