import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { join } from 'node:path'
import { call, problemOf, startApp, type Reply, type TestApp } from '../helpers/app'
import { emptyRateBucket } from '../helpers/rate-buckets'
import { filesUnder, pngSample, putBytes, settled, startUpload, textSample, uploadTarget, type SampleFile } from '../helpers/samples'
import { deriveKey } from '../../server/secret-key'
import { uploadUrl } from '../../server/storage/upload-url'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const LIMIT = 4096
let app: TestApp
let key: string
let scenarioId: string
let blobDir: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_MAX_UPLOAD_BYTES: String(LIMIT) } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Uploads' } })).body.id
  blobDir = join(app.config.dataDir, 'blobs')
}, 60_000)
afterAll(() => app?.stop(), 60_000)

const text: SampleFile = { filename: 'letter.txt', contentType: 'text/plain', bytes: textSample() }
const documentCount = async () => (await app.sql`select count(*)::int as n from documents`)[0]!.n as number
const row = async (id: string) => (await app.sql`select status, blob_key, bytes_verified, uploaded_at from documents where id = ${id}`)[0]!

/** The one 403 of a bad upload URL. */
const expectRefusedUrl = (r: Reply) => {
  const p = problemOf(r)
  expect(p).toMatchObject({ type: 'urn:svc:error:forbidden', status: 403, detail: 'The upload URL is not valid: it was altered, has expired, does not match this request, or was already used.' })
  expect(r.headers.get('www-authenticate')).toBeNull()
}

/** Nothing stored after a refused PUT: no bytes on disk, the document still awaiting its upload. */
const expectNothingStored = async (documentId: string) => {
  expect((await filesUnder(blobDir)).filter((f) => f.includes(documentId))).toEqual([])
  expect(await row(documentId)).toMatchObject({ status: 'awaiting_upload', blob_key: null, bytes_verified: false, uploaded_at: null })
}

/** A fresh upload of `file`; returns the start reply body. */
const fresh = async (file = text, extra: Record<string, unknown> = {}) => {
  const r = await startUpload(app, key, scenarioId, file, extra)
  expect(r.status).toBe(201)
  return r.body
}

/** A chunked (length-less) body out of parts. */
const chunked = (...parts: Uint8Array<ArrayBuffer>[]) => new ReadableStream<Uint8Array>({
  start(c) { for (const p of parts) c.enqueue(p); c.close() },
})

describe('upload start refusals store nothing', () => {
  test('over the upload limit is 413', async () => {
    const before = await documentCount()
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, { token: key, body: { filename: 'big.pdf', content_type: 'application/pdf', size_bytes: LIMIT + 1 } })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:payload_too_large', status: 413 })
    const at = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, { token: key, body: { filename: 'ok.pdf', content_type: 'application/pdf', size_bytes: LIMIT } })
    expect(at.status).toBe(201)
    expect(await documentCount()).toBe(before + 1)
  })

  test('a content type outside the registry is 415', async () => {
    const before = await documentCount()
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, { token: key, body: { filename: 'run.exe', content_type: 'application/x-msdownload', size_bytes: 10 } })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:unsupported_media_type', status: 415 })
    expect(problemOf(r).detail).toContain('application/x-msdownload')
    expect(await documentCount()).toBe(before)
  })

  test('schema and rule violations are 422; an unknown case is 404', async () => {
    const bad = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, { token: key, body: { filename: 'a.txt', content_type: 'text/plain', size_bytes: 0, checksum_sha256: 'xyz' } })
    expect(problemOf(bad).errors!.map((e) => e.pointer).sort()).toEqual(['/checksum_sha256', '/size_bytes'])
    const slash = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, { token: key, body: { filename: '../etc/passwd', content_type: 'text/plain', size_bytes: 5 } })
    // A file name's refusal points at it (tests/http/filenames.test.ts has every refused character).
    expect(problemOf(slash)).toMatchObject({ status: 422, errors: [{ pointer: '/filename', message: 'must not contain path separators (/ or \\)' }] })
    const none = await call(app.url, 'POST', `/v1/scenarios/${crypto.randomUUID()}/documents`, { token: key, body: { filename: 'a.txt', content_type: 'text/plain', size_bytes: 5 } })
    expect(problemOf(none).status).toBe(404)
  })

  test('a content type with parameters is matched by its media type; a text type keeps only its charset', async () => {
    const doc = await fresh({ ...text, contentType: 'Text/Plain; charset=utf-8; format=flowed' })
    expect(doc.content_type).toBe('text/plain; charset=utf-8')
    expect(doc.upload.headers).toEqual({ 'content-type': 'text/plain' }) // the PUT is matched by media type
  })
})

describe('PUT refusals store nothing', () => {
  test('the URL carries a signature and expiry, and no credential of the caller', async () => {
    const doc = await fresh()
    const u = new URL(doc.upload.url)
    expect(u.pathname).toBe(`/v1/uploads/${(await app.sql`select tenant_id from documents where id = ${doc.id}`)[0]!.tenant_id}/${doc.id}`)
    expect([...u.searchParams.keys()].sort()).toEqual(['expires', 'signature'])
    expect(doc.upload.url).not.toContain(key)
    expect(Number(u.searchParams.get('expires')) * 1000).toBe(Date.parse(doc.upload.expires_at))
  })

  test('a length over the limit is 413, before and while streaming', async () => {
    const full = new Uint8Array(LIMIT).fill(97) // announced at exactly the limit
    const doc = await fresh({ filename: 'full.txt', contentType: 'text/plain', bytes: full })
    const declared = await putBytes(app, doc.upload, new Uint8Array(LIMIT + 10).fill(97))
    expect(problemOf(declared)).toMatchObject({ type: 'urn:svc:error:payload_too_large', status: 413 })
    const streamed = await putBytes(app, doc.upload, chunked(full, new Uint8Array(10).fill(97)))
    expect(problemOf(streamed)).toMatchObject({ type: 'urn:svc:error:payload_too_large', status: 413 })
    await expectNothingStored(doc.id)
  })

  test('a length other than announced is 422, declared or streamed', async () => {
    const doc = await fresh()
    const shorter = await putBytes(app, doc.upload, text.bytes.subarray(1))
    expect(problemOf(shorter)).toMatchObject({ type: 'urn:svc:error:validation', status: 422, detail: expect.stringContaining('size_bytes') })
    const longer = await putBytes(app, doc.upload, chunked(text.bytes, new Uint8Array([10])))
    expect(problemOf(longer).status).toBe(422)
    const shortStream = await putBytes(app, doc.upload, chunked(text.bytes.subarray(0, 10)))
    expect(problemOf(shortStream).status).toBe(422)
    await expectNothingStored(doc.id)
  })

  test('bytes whose checksum differs from the announced one are 422', async () => {
    const doc = await fresh({ ...text, checksum: true })
    const other = new Uint8Array(text.bytes)
    other[0] = other[0]! ^ 1
    const r = await putBytes(app, doc.upload, other)
    expect(problemOf(r)).toMatchObject({ status: 422, detail: expect.stringContaining('SHA-256') })
    await expectNothingStored(doc.id)
    expect((await putBytes(app, doc.upload, text.bytes)).status).toBe(204)
  })

  test('bytes whose sniffed type contradicts the declared one are 422', async () => {
    const png = pngSample()
    const doc = await fresh({ filename: 'notes.txt', contentType: 'text/plain', bytes: png })
    const r = await putBytes(app, doc.upload, png)
    expect(problemOf(r)).toMatchObject({ status: 422, detail: 'The uploaded bytes look like image/png, which contradicts content_type text/plain.' })
    await expectNothingStored(doc.id)
    const pdf = await fresh({ filename: 'scan.pdf', contentType: 'application/pdf', bytes: text.bytes })
    expect(problemOf(await putBytes(app, pdf.upload, text.bytes)).status).toBe(422)
    await expectNothingStored(pdf.id)
  })

  test('a tampered, re-aimed, expired or wrong-content-type URL is the same 403', async () => {
    const doc = await fresh()
    const other = await fresh()
    const target = new URL(uploadTarget(app, doc.upload))
    const tampered = new URL(target)
    tampered.searchParams.set('signature', tampered.searchParams.get('signature')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')))
    const later = new URL(target)
    later.searchParams.set('expires', String(Number(later.searchParams.get('expires')) + 3600))
    const reaimed = new URL(target.toString().replace(doc.id, other.id))
    const unsigned = new URL(target)
    unsigned.searchParams.delete('signature')
    for (const u of [tampered, later, reaimed, unsigned]) {
      const res = await fetch(u, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: text.bytes })
      const body = await res.json()
      expectRefusedUrl({ status: res.status, headers: res.headers, body, text: '' })
    }
    expectRefusedUrl(await putBytes(app, doc.upload, text.bytes, { 'content-type': 'text/html' }))
    // A correctly signed URL whose 15 minutes are over.
    const tenantId = (await app.sql`select tenant_id from documents where id = ${doc.id}`)[0]!.tenant_id
    const expired = uploadUrl(app.url, deriveKey(app.deps.secretKey, 'upload-url'), {
      method: 'PUT', tenantId, documentId: doc.id, size: text.bytes.byteLength, contentType: 'text/plain', expires: Math.floor(Date.now() / 1000) - 1,
    })
    const res = await fetch(expired, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: text.bytes })
    expectRefusedUrl({ status: res.status, headers: res.headers, body: await res.json(), text: '' })
    await expectNothingStored(doc.id)
    await expectNothingStored(other.id)
  })

  test('one successful PUT: a second one is the same 403, concurrent ones store one blob', async () => {
    const doc = await fresh()
    expect((await putBytes(app, doc.upload, text.bytes)).status).toBe(204)
    expectRefusedUrl(await putBytes(app, doc.upload, text.bytes))
    const race = await fresh()
    const replies = await Promise.all(Array.from({ length: 6 }, () => putBytes(app, race.upload, text.bytes)))
    expect(replies.map((r) => r.status).sort()).toEqual([204, 403, 403, 403, 403, 403])
    const files = await filesUnder(blobDir)
    expect(files.filter((f) => f.includes(race.id)).length).toBe(1)
    const stored = await row(race.id)
    expect(files).toContain(stored.blob_key)
  })

  test('a non-UUID path is 400; an unknown document is the same 403', async () => {
    const bad = await fetch(`${app.url}/v1/uploads/nope/${crypto.randomUUID()}?expires=1&signature=x`, { method: 'PUT', body: 'x' })
    expect(bad.status).toBe(400)
    const doc = await fresh()
    const unknown = uploadTarget(app, doc.upload).replace(doc.id, crypto.randomUUID())
    const res = await fetch(unknown, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: text.bytes })
    expectRefusedUrl({ status: res.status, headers: res.headers, body: await res.json(), text: '' })
  })
})

describe('complete', () => {
  test('complete before the bytes arrived is 409 and changes nothing', async () => {
    const doc = await fresh()
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${doc.id}/complete`, { token: key })
    expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    expect((await row(doc.id)).status).toBe('awaiting_upload')
    expect((await app.sql`select count(*)::int as n from jobs where payload->>'documentId' = ${doc.id}`)[0]!.n).toBe(0)
  })

  test('after a good PUT, complete works without a body and the document is read', async () => {
    const doc = await fresh()
    expect((await putBytes(app, doc.upload, text.bytes)).status).toBe(204)
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${doc.id}/complete`, { token: key })
    expect(r.status).toBe(202)
    expect((await settled(app, key, scenarioId, doc.id)).status).toBe('ready')
  })

  test('complete and reingest use the unit-of-work rate class: 429 with Retry-After once the bucket is empty', async () => {
    const t = await app.tenant()
    const k = await app.apiKey(t.id, ['scenarios:write'])
    const c = (await call(app.url, 'POST', '/v1/scenarios', { token: k, body: { name: 'rate' } })).body.id
    const first = await startUpload(app, k, c, text)
    await putBytes(app, first.body.upload, text.bytes)
    expect((await call(app.url, 'POST', `/v1/scenarios/${c}/documents/${first.body.id}/complete`, { token: k })).status).toBe(202)
    await settled(app, k, c, first.body.id)
    const second = await startUpload(app, k, c, text)
    await putBytes(app, second.body.upload, text.bytes)
    // Spend what is left of the workspace's unit-of-work bucket (burst 120 by default).
    await emptyRateBucket(app, t.id, 'unit')
    const complete = await call(app.url, 'POST', `/v1/scenarios/${c}/documents/${second.body.id}/complete`, { token: k })
    const p = problemOf(complete)
    expect(p).toMatchObject({ type: 'urn:svc:error:rate_limited', status: 429 })
    expect(complete.headers.get('retry-after')).toBe(String(p.retry_after_seconds))
    expect((await row(second.body.id)).status).toBe('awaiting_upload')
    const reingest = await call(app.url, 'POST', `/v1/scenarios/${c}/documents/${first.body.id}/reingest`, { token: k })
    expect(problemOf(reingest).status).toBe(429)
    expect((await row(first.body.id)).status).toBe('ready')
  })
})
