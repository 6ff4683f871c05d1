// The S3 driver against a real S3-compatible server (s3rver, in process): presigned PUT straight to
// the bucket, checks at complete (the bytes never pass through the service), streamed download.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type Socket } from 'node:net'
import { once } from 'node:events'
// @ts-expect-error s3rver ships no type declarations (a test-only peer)
import S3rver from 's3rver'
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { allBlocks, csvSample, filesUnder, pdfSample, settled, startUpload, textSample, type Bytes, type SampleFile } from '../helpers/samples'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let s3: { run(): Promise<unknown>; close(): Promise<void> }
let s3Dir: string
let endpoint: string
let app: TestApp
let key: string
let scenarioId: string
let client: S3Client

beforeAll(async () => {
  s3Dir = mkdtempSync(join(tmpdir(), 'svc-s3-'))
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'documents', configs: [] }] } as never)
  const addr = await s3.run() as unknown as { port: number }
  endpoint = `http://127.0.0.1:${addr.port}`
  const creds = { SVC_S3_ENDPOINT: endpoint, SVC_S3_BUCKET: 'documents', SVC_S3_REGION: 'us-east-1', SVC_S3_ACCESS_KEY_ID: 'S3RVER', SVC_S3_SECRET_ACCESS_KEY: 'S3RVER' }
  app = await startApp({ env: creds })
  client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'S3 case' } })).body.id
}, 60_000)
afterAll(async () => {
  await app?.stop()
  await s3?.close()
  rmSync(s3Dir, { recursive: true, force: true })
}, 60_000)

/** PUTs bytes to a presigned S3 URL the way a client would (the headers the start reply names). */
const putToS3 = (upload: { url: string; headers: Record<string, string> }, bytes: Bytes) =>
  fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes })

const objectExists = async (documentId: string) => {
  const [{ tenant_id }] = await app.sql`select tenant_id from documents where id = ${documentId}` as unknown as [{ tenant_id: string }]
  try { await client.send(new HeadObjectCommand({ Bucket: 'documents', Key: `${tenant_id}/${documentId}` })); return true } catch { return false }
}
const status = async (id: string) => (await app.sql`select status from documents where id = ${id}`)[0]!.status
const complete = (id: string) => call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents/${id}/complete`, { token: key })

describe('S3 blob driver', () => {
  test('start returns an AWS SigV4 presigned PUT to the bucket; bytes go there, ingestion reads them back', async () => {
    const pdf = await pdfSample([['Stored in object storage']])
    const start = await startUpload(app, key, scenarioId, { filename: 'in-s3.pdf', contentType: 'application/pdf', bytes: pdf, checksum: true })
    expect(start.status).toBe(201)
    const url = new URL(start.body.upload.url)
    expect(url.origin).toBe(endpoint)
    expect(url.pathname).toMatch(/^\/documents\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/)
    expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256')
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900')
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toContain('content-type')
    expect(start.body.upload.headers).toEqual({ 'content-type': 'application/pdf' })
    expect((await putToS3(start.body.upload, pdf)).status).toBe(200)
    expect((await complete(start.body.id)).status).toBe(202)
    expect((await settled(app, key, scenarioId, start.body.id)).status).toBe('ready')
    expect((await allBlocks(app, key, scenarioId, start.body.id)).map((b) => b.text)).toEqual(['Stored in object storage'])
    const dl = await fetch(`${app.url}/v1/scenarios/${scenarioId}/documents/${start.body.id}/download`, { headers: { authorization: `Bearer ${key}` } })
    expect(dl.headers.get('content-type')).toBe('application/pdf')
    expect(new Uint8Array(await dl.arrayBuffer())).toEqual(pdf)
    expect(await filesUnder(join(app.config.dataDir, 'blobs'))).toEqual([])
  })

  test('complete before the bytes reached the bucket is 409', async () => {
    const start = await startUpload(app, key, scenarioId, { filename: 'late.csv', contentType: 'text/csv', bytes: csvSample() })
    expect(problemOf(await complete(start.body.id))).toMatchObject({ type: 'urn:svc:error:conflict', status: 409 })
    expect(await status(start.body.id)).toBe('awaiting_upload')
  })

  const refusedAtComplete: Array<[string, SampleFile, Bytes, string]> = [
    ['a length other than announced', { filename: 'a.txt', contentType: 'text/plain', bytes: textSample() }, textSample().subarray(2), 'size_bytes'],
    ['a checksum other than announced', { filename: 'b.txt', contentType: 'text/plain', bytes: textSample(), checksum: true }, textSample().map((b) => b ^ 1), 'SHA-256'],
    ['bytes whose sniffed type contradicts the declared one', { filename: 'c.pdf', contentType: 'application/pdf', bytes: textSample() }, textSample(), 'contradicts'],
  ]
  for (const [what, file, sent, detail] of refusedAtComplete) {
    test(`${what} is 422 at complete, the object is deleted and the upload may be retried`, async () => {
      const start = await startUpload(app, key, scenarioId, file)
      expect((await putToS3(start.body.upload, sent)).status).toBe(200)
      expect(await objectExists(start.body.id)).toBe(true)
      const r = await complete(start.body.id)
      expect(problemOf(r)).toMatchObject({ type: 'urn:svc:error:validation', status: 422, detail: expect.stringContaining(detail) })
      expect(await objectExists(start.body.id)).toBe(false)
      expect(await status(start.body.id)).toBe('awaiting_upload')
      if (file.contentType === 'text/plain') {
        expect((await putToS3(start.body.upload, file.bytes)).status).toBe(200)
        expect((await complete(start.body.id)).status).toBe(202)
        expect((await settled(app, key, scenarioId, start.body.id)).status).toBe('ready')
      }
    })
  }
})

describe('the object store unreachable', () => {
  test('complete and download answer 503 unavailable with Retry-After while it is down; once it is back, complete works and nothing was lost', async () => {
    const text = textSample()
    const ready = await startUpload(app, key, scenarioId, { filename: 'before.txt', contentType: 'text/plain', bytes: text })
    expect((await putToS3(ready.body.upload, text)).status).toBe(200)
    expect((await complete(ready.body.id)).status).toBe(202)
    expect((await settled(app, key, scenarioId, ready.body.id)).status).toBe('ready')
    const pending = await startUpload(app, key, scenarioId, { filename: 'during.txt', contentType: 'text/plain', bytes: text })
    expect((await putToS3(pending.body.upload, text)).status).toBe(200)

    const port = Number(new URL(endpoint).port)
    await s3.close()
    const t0 = performance.now()
    const refused = await complete(pending.body.id)
    expect(problemOf(refused)).toMatchObject({ type: 'urn:svc:error:unavailable', status: 503 })
    expect(refused.headers.get('retry-after')).toBe('2')
    const dl = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/documents/${ready.body.id}/download`, { token: key })
    expect(problemOf(dl)).toMatchObject({ type: 'urn:svc:error:unavailable', status: 503 })
    expect(performance.now() - t0).toBeLessThan(10_000)
    expect(await status(pending.body.id)).toBe('awaiting_upload') // the refused complete changed nothing

    // A store that accepts connections and never answers (a hung proxy): 503 within seconds as well.
    const held: Socket[] = []
    const blackHole = createServer((s) => { held.push(s) }).listen(port, '127.0.0.1')
    await once(blackHole, 'listening')
    try {
      const t1 = performance.now()
      const hung = await complete(pending.body.id)
      expect(problemOf(hung)).toMatchObject({ type: 'urn:svc:error:unavailable', status: 503 })
      expect(hung.headers.get('retry-after')).toBe('2')
      expect(performance.now() - t1).toBeLessThan(8_000) // 3 s without a byte from the store, 2 attempts
      expect(held.length).toBeGreaterThan(0)
    } finally {
      held.forEach((s) => s.destroy())
      await new Promise((r) => blackHole.close(r))
    }
    expect(await status(pending.body.id)).toBe('awaiting_upload')

    s3 = new S3rver({ port, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'documents', configs: [] }] } as never)
    await s3.run()
    expect((await complete(pending.body.id)).status).toBe(202)
    expect((await settled(app, key, scenarioId, pending.body.id)).status).toBe('ready')
    const again = await fetch(`${app.url}/v1/scenarios/${scenarioId}/documents/${ready.body.id}/download`, { headers: { authorization: `Bearer ${key}` } })
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(text)
  })
})
