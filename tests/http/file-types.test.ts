import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let readKey: string

beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  readKey = await app.apiKey(t.id, ['scenarios:read'])
}, 60_000)
afterAll(() => app?.stop(), 60_000)

describe('file-type registry', () => {
  test('lists every recognised content type with extensions and whether an adapter reads it', async () => {
    const r = await call(app.url, 'GET', '/v1/file-types', { token: readKey })
    expect(r.status).toBe(200)
    expect(r.body.next_cursor).toBeNull()
    const byType = Object.fromEntries(r.body.items.map((f: { content_type: string }) => [f.content_type, f]))
    const adapters = r.body.items.filter((f: { has_ingestion_adapter: boolean }) => f.has_ingestion_adapter).map((f: { content_type: string }) => f.content_type).sort()
    expect(adapters).toEqual([
      'application/msword', 'application/pdf', 'application/rtf', 'application/vnd.ms-excel', 'application/vnd.ms-excel.sheet.macroenabled.12', 'application/vnd.ms-outlook',
      'application/vnd.oasis.opendocument.spreadsheet', 'application/vnd.oasis.opendocument.text',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/zip', 'image/heic', 'image/jpeg', 'image/png', 'image/tiff', 'image/webp', 'message/rfc822', 'text/csv', 'text/html', 'text/markdown', 'text/plain', 'text/rtf', 'text/tab-separated-values',
    ])
    for (const t of ['application/vnd.ms-powerpoint']) {
      expect(byType[t]).toMatchObject({ id: t, content_type: t, has_ingestion_adapter: false })
    }
    expect(byType['application/pdf']).toEqual({ id: 'application/pdf', content_type: 'application/pdf', label: 'PDF', extensions: ['pdf'], has_ingestion_adapter: true })
    expect(byType['image/jpeg'].extensions).toEqual(['jpg', 'jpeg'])
    expect(byType['application/vnd.ms-outlook'].extensions).toEqual(['msg'])
  })

  test('every listed type is accepted at upload start, and an unlisted one is 415', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write'])
    const c = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'types' } })).body.id
    const { body } = await call(app.url, 'GET', '/v1/file-types', { token: key })
    for (const f of body.items as Array<{ content_type: string; extensions: string[] }>) {
      const r = await call(app.url, 'POST', `/v1/scenarios/${c}/documents`, { token: key, body: { filename: `f.${f.extensions[0]}`, content_type: f.content_type, size_bytes: 10 } })
      expect(r.status).toBe(201)
    }
    const r = await call(app.url, 'POST', `/v1/scenarios/${c}/documents`, { token: key, body: { filename: 'f.7z', content_type: 'application/x-7z-compressed', size_bytes: 10 } })
    expect(problemOf(r).status).toBe(415)
  })

  test('needs a credential', async () => {
    expect(problemOf(await call(app.url, 'GET', '/v1/file-types')).status).toBe(401)
  })
})
