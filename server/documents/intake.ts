/**
 * Checking uploaded bytes against what was announced at upload start: the length (413 past the
 * service limit, 422 when it differs from the announced size), the SHA-256 checksum when one was
 * announced (422), and the sniffed type against the declared one (422). A refused upload leaves
 * no bytes behind.
 */
import { ProblemError } from '../http/problem'
import type { BlobStore } from '../storage/blob-store'
import { findFileType, sniffContradiction, SNIFF_BYTES } from './registry'
import type { DocumentRow } from './store'

/** What was announced for an upload. */
export interface Announced { size: number; sha256: string | null; contentType: string }

/** The facts gathered while the bytes streamed through. */
export interface Measured { bytes: number; sha256: string; head: Uint8Array }

/** The refusal for bytes longer than the service accepts. */
export const tooLarge = (max: number) => new ProblemError('payload_too_large', `The document is larger than the upload limit of ${max} bytes.`)

const lengthDiffers = (announced: number) =>
  problemRule(`The uploaded length differs from size_bytes announced at upload start (${announced}).`)
const problemRule = (detail: string) => new ProblemError('validation', detail)

/**
 * Wraps a request body so it counts, hashes and keeps the head of the bytes, and errors the
 * stream as soon as it passes the limit (413) or the announced size (422).
 */
export function measure(body: ReadableStream<Uint8Array> | null, max: number, announced: number) {
  const hasher = new Bun.CryptoHasher('sha256')
  const head = new Uint8Array(SNIFF_BYTES)
  let headLength = 0
  let bytes = 0
  let failure: ProblemError | undefined
  const reader = body?.getReader()
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!reader) { controller.close(); return }
      const { done, value } = await reader.read()
      if (done) { controller.close(); return }
      bytes += value.byteLength
      if (bytes > max || bytes > announced) {
        failure = bytes > max ? tooLarge(max) : lengthDiffers(announced)
        await reader.cancel().catch(() => {})
        controller.error(failure)
        return
      }
      if (headLength < SNIFF_BYTES) {
        const take = value.subarray(0, SNIFF_BYTES - headLength)
        head.set(take, headLength)
        headLength += take.byteLength
      }
      hasher.update(value)
      controller.enqueue(value)
    },
    async cancel(reason) { await reader?.cancel(reason).catch(() => {}) },
  })
  return {
    stream,
    /** The refusal that stopped the stream, if one did. */
    get failure() { return failure },
    /** The measurements once the stream has been read to its end. */
    result: (): Measured => ({ bytes, sha256: hasher.digest('hex'), head: head.subarray(0, headLength) }),
  }
}

/** Throws the 422 for measured bytes that differ from the announcement; returns normally when they agree. */
export async function checkMeasured(announced: Announced, m: Measured): Promise<void> {
  if (m.bytes !== announced.size) throw lengthDiffers(announced.size)
  if (announced.sha256 !== null && m.sha256 !== announced.sha256) {
    throw problemRule('The SHA-256 of the uploaded bytes differs from checksum_sha256 announced at upload start.')
  }
  const type = findFileType(announced.contentType)
  if (!type) throw new ProblemError('unsupported_media_type', 'The content type is not in the file-type registry.')
  const sniffed = await sniffContradiction(type, m.head, m.bytes)
  if (sniffed !== null) {
    throw problemRule(`The uploaded bytes look like ${sniffed}, which contradicts content_type ${announced.contentType}.`)
  }
}

/**
 * Checks bytes that reached the store without passing through this service (S3 presigned PUTs):
 * absent is 409; a wrong length, checksum or type is 422 and the bytes are deleted.
 */
export async function verifyStoredBytes(blobs: BlobStore, doc: Pick<DocumentRow, 'blob_key' | 'size_bytes' | 'checksum_sha256' | 'content_type'>, max: number): Promise<void> {
  const key = doc.blob_key
  const stat = key ? await blobs.head(key) : null
  if (!key || !stat) throw new ProblemError('conflict', 'The document bytes have not been uploaded yet; PUT them to the upload URL first.')
  const announced: Announced = { size: Number(doc.size_bytes), sha256: doc.checksum_sha256, contentType: doc.content_type }
  try {
    if (stat.size > max) throw tooLarge(max)
    if (stat.size !== announced.size) throw lengthDiffers(announced.size)
    const source = await blobs.get(key)
    const m = measure(source, max, announced.size)
    const reader = m.stream.getReader()
    try { while (!(await reader.read()).done) { /* measuring only */ } } catch { /* m.failure says why */ }
    if (m.failure) throw m.failure
    await checkMeasured(announced, m.result())
  } catch (e) {
    if (e instanceof ProblemError) await blobs.delete(key)
    throw e
  }
}
