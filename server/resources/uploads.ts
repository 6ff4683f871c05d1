/**
 * The local blob driver's upload URL: `PUT /v1/uploads/{tenantId}/{documentId}?expires&signature`
 * with the raw bytes. No Authorization header: the URL's signature is the credential. It binds the
 * method, workspace, document, announced size, content type and expiry; one PUT succeeds per
 * document. The bytes are counted, hashed and sniffed while they stream to the store; a refused PUT
 * leaves nothing stored and the document still awaiting its upload.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl } from '../auth/access'
import { ProblemError } from '../http/problem'
import { responses } from '../http/docs'
import { Uuid } from '../../schemas/common'
import { essenceOf } from '../documents/registry'
import { checkMeasured, measure, tooLarge } from '../documents/intake'
import { findUploadTarget } from '../documents/upload-targets'
import { documentKeyPrefix } from '../storage/blob-store'
import { UPLOAD_PATH_PREFIX, verifyUpload } from '../storage/upload-url'
import { deriveKey } from '../secret-key'

/** The one refusal of a bad upload URL: altered, lapsed, of another content type, or used up. */
const refused = () => new ProblemError('forbidden', 'The upload URL is not valid: it was altered, has expired, does not match this request, or was already used.')

/** Upload routes. */
export function uploadRoutes(deps: AppDeps) {
  const { sql, blobs, config } = deps
  // URLs signed with an earlier service key (SVC_SECRET_KEY_PREVIOUS) stay valid until they expire.
  const signingKeys = [deps.secretKey, ...deps.previousSecretKeys].map((k) => deriveKey(k, 'upload-url'))

  return new Elysia({ name: 'uploads' })
    .use(accessControl(deps.authenticate))
    .put(`${UPLOAD_PATH_PREFIX}/:tenantId/:documentId`, async ({ params, query, request, set }) => {
      const target = await findUploadTarget(sql, deps.uploadTargets, params.tenantId, params.documentId)
      const doc = target?.row ?? null
      const expires = Number(query.expires)
      const signed = doc === null ? undefined : {
        method: request.method,
        tenantId: params.tenantId,
        documentId: params.documentId,
        size: Number(doc.size_bytes),
        contentType: essenceOf(request.headers.get('content-type') ?? ''),
        expires,
      }
      const good = signed !== undefined && typeof query.signature === 'string' && signingKeys.some((key) => verifyUpload(key, signed, query.signature!))
      if (!good || doc === null || doc.status !== 'awaiting_upload' || doc.blob_key !== null) throw refused()

      const size = Number(doc.size_bytes)
      const declared = request.headers.get('content-length')
      if (declared !== null && Number(declared) > config.maxUploadBytes) throw tooLarge(config.maxUploadBytes)
      if (declared !== null && Number(declared) !== size) {
        throw new ProblemError('validation', `The uploaded length differs from size_bytes announced at upload start (${size}).`)
      }

      // A key of this PUT's own: concurrent PUTs never write over each other, and the loser's bytes go.
      const key = `${documentKeyPrefix(doc.tenant_id, doc.id)}/${crypto.randomUUID()}`
      const m = measure(request.body, config.maxUploadBytes, size)
      try {
        await blobs.put(key, m.stream, { contentType: doc.content_type, size })
      } catch (e) {
        await blobs.delete(key)
        throw m.failure ?? e
      }
      try {
        await checkMeasured({ size, sha256: doc.checksum_sha256, contentType: doc.content_type }, m.result())
        if (!(await target!.kind.claim(sql, doc, key))) throw refused()
      } catch (e) {
        await blobs.delete(key)
        throw e
      }
      set.status = 204
      set.headers['cache-control'] = 'no-store'
      return null
    }, {
      access: { public: true },
      params: t.Object({ tenantId: Uuid, documentId: Uuid }),
      // Raw bytes: no body parser may read them (the route streams request.body itself).
      parse: () => null,
      detail: {
        summary: 'Upload the bytes of a document to its presigned URL (no Authorization header)',
        tags: ['Documents'],
        description: 'The URL comes from the `upload` member of the document (or guideline source) creation, query included; send its `headers` and exactly `size_bytes` bytes.',
        parameters: [
          { name: 'expires', in: 'query', required: true, description: 'Unix time in seconds after which the URL is refused.', schema: { type: 'integer' } },
          { name: 'signature', in: 'query', required: true, description: 'The URL signature (the credential of this request).', schema: { type: 'string' } },
        ],
        requestBody: { required: true, description: 'The raw bytes of the file, of the content type and size declared at creation.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        responses: responses({ 204: null }, ['forbidden', 'payload_too_large', 'validation', 'malformed']),
      },
    })
}
