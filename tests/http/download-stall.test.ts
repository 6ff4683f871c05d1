/**
 * A document download whose store answers and then stalls (an S3 endpoint that sent its headers
 * and no body) ends within SVC_DOWNLOAD_STALL_MS: a 503 with Retry-After when no byte came, a failed
 * transfer (never a complete-looking short body) when the bytes stopped half way. The store here is the app's own
 * local store presented as the network (S3) driver, its reads held up by the test as a stalled
 * network read would hold them (local files are read without the bound).
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { uploadAndComplete } from '../helpers/samples'

setDefaultTimeout(60_000)

let app: TestApp
let key: string
let scenarioId: string
let documentId: string
const bytes = new TextEncoder().encode('Employment letter.\nSalary is 5,000 EUR per month.\n'.repeat(2000))

beforeAll(async () => {
  app = await startApp({ env: { SVC_DOWNLOAD_STALL_MS: '500' }, runner: false })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Stall' } })).body.id
  documentId = (await uploadAndComplete(app, key, scenarioId, { filename: 'letter.txt', contentType: 'text/plain', bytes })).doc.id
})
afterAll(() => app?.stop())

/** Makes the store's reads send `before` bytes (all when undefined) and then nothing, for ever. */
function stallStore(before: number | undefined) {
  const real = app.deps.blobs.get.bind(app.deps.blobs)
  Object.defineProperty(app.deps.blobs, 'driver', { value: 's3', configurable: true })
  app.deps.blobs.get = async (k, range) => {
    const stream = await real(k, range)
    if (!stream || before === undefined) return stream
    const all = new Uint8Array(await new Response(stream).arrayBuffer())
    let sent = false
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!sent && before > 0) { sent = true; controller.enqueue(all.subarray(0, before)); return }
        await new Promise(() => {}) // the connection stays open and nothing more comes
      },
    })
  }
  return () => {
    app.deps.blobs.get = real
    Object.defineProperty(app.deps.blobs, 'driver', { value: 'local', configurable: true })
  }
}

const download = () => fetch(`${app.url}/v1/scenarios/${scenarioId}/documents/${documentId}/download`, { headers: { authorization: `Bearer ${key}` } })

test('the store sends nothing: 503 unavailable with Retry-After, within the bound', async () => {
  const restore = stallStore(0)
  try {
    const res = await download()
    const p = problemOf({ status: res.status, headers: res.headers, body: await res.json(), text: '' })
    expect(p).toMatchObject({ status: 503, type: 'urn:svc:error:unavailable' })
    expect(res.headers.get('retry-after')).toBe('5')
  } finally {
    restore()
  }
})

test('the store stops half way: the transfer fails within the bound, never ends as a short document', async () => {
  const restore = stallStore(1000)
  try {
    const res = await download()
    expect(res.status).toBe(200)
    // Never a whole, silently short document: the transfer itself fails.
    const outcome = await res.arrayBuffer().then((b) => `read ${b.byteLength} bytes`, () => 'failed')
    expect(outcome).toBe('failed')
  } finally {
    restore()
  }
})

test('a network store that answers in time downloads the whole document', async () => {
  const restore = stallStore(undefined)
  const res = await download().finally(restore)
  expect(res.status).toBe(200)
  expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes)
})
