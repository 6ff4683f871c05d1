import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { brokenUtf8TextSample, corruptPdfSample, pptSample, pngSample, putBytes, type SampleFile } from '../helpers/samples'
import { createGroup, deliveriesOf, EMAIL, guidelineDocx, guidelinePdf, guidelineSettled, OBLIGATIONS, uploadGuideline } from '../helpers/authoring'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let key: string
let readKey: string
let other: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_RATE_UNIT: '1000/1' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['question_sets:write', 'notifications:write'])
  readKey = await app.apiKey(t.id, ['question_sets:read'])
  other = await app.apiKey((await app.tenant()).id, ['question_sets:write'])
})
afterAll(() => app.stop())

describe('question groups', () => {
  test('create (Idempotency-Key), read, list with cursor; whitespace name 422; another workspace 404', async () => {
    const a = await call(app.url, 'POST', '/v1/question-groups', { token: key, body: { name: 'Commercial', description: 'Loans over 1M' }, headers: { 'idempotency-key': 'g-1' } })
    expect(a.status).toBe(201)
    expect(a.body).toMatchObject({ name: 'Commercial', description: 'Loans over 1M', guideline_count: 0 })
    expect(a.headers.get('location')).toBe(`/v1/question-groups/${a.body.id}`)
    const again = await call(app.url, 'POST', '/v1/question-groups', { token: key, body: { name: 'Commercial', description: 'Loans over 1M' }, headers: { 'idempotency-key': 'g-1' } })
    expect(again.body.id).toBe(a.body.id)
    const b = await createGroup(app, key, 'Second')
    const page1 = await call(app.url, 'GET', '/v1/question-groups?limit=1', { token: readKey })
    expect(page1.body.items.map((g: any) => g.id)).toEqual([b.id])
    const page2 = await call(app.url, 'GET', `/v1/question-groups?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`, { token: readKey })
    expect(page2.body.items[0]).toEqual((await call(app.url, 'GET', `/v1/question-groups/${a.body.id}`, { token: readKey })).body)
    const blank = problemOf(await call(app.url, 'POST', '/v1/question-groups', { token: key, body: { name: '   ' } }))
    expect(blank.type).toBe('urn:svc:error:validation')
    expect(blank.errors).toBeUndefined()
    expect((await call(app.url, 'GET', `/v1/question-groups/${a.body.id}`, { token: other })).status).toBe(404)
    expect(problemOf(await call(app.url, 'POST', '/v1/question-groups', { token: readKey, body: { name: 'x' } })).type).toBe('urn:svc:error:forbidden')
  })
})

describe('guideline sources', () => {
  test('DOCX through the shared presigned upload: guideline_ingestion ends ready with blocks and task.completed', async () => {
    const group = await createGroup(app, key)
    const file = await guidelineDocx()
    const { start, complete } = await uploadGuideline(app, key, group.id, file, { complete: { notifications: EMAIL } })
    expect(start).toMatchObject({ question_group_id: group.id, filename: 'guideline.docx', status: 'awaiting_upload', size_bytes: file.bytes.byteLength })
    expect(new URL(start.upload.url).pathname).toBe(`/v1/uploads/${start.upload.url.split('/')[5]}/${start.id}`)
    expect(complete.status).toBe(202)
    expect(complete.body.status).toBe('processing')
    const done = await guidelineSettled(app, key, group.id, start.id)
    expect(done).toMatchObject({ status: 'ready', page_count: 1 })
    const blocks = (await call(app.url, 'GET', `/v1/question-groups/${group.id}/guidelines/${start.id}/blocks?limit=200`, { token: readKey })).body.items
    expect(blocks.length).toBe(done.block_count)
    expect(blocks.map((b: any) => b.text)).toEqual(expect.arrayContaining(OBLIGATIONS))
    expect(blocks[0]).toMatchObject({ guideline_id: start.id, position: 0, page: 1, kind: 'heading', text: 'Commercial lending guideline' })
    const [d] = await deliveriesOf(app, key, 'guideline_ingestion', start.id)
    expect(d.payload).toMatchObject({
      event_type: 'task.completed', task_kind: 'guideline_ingestion', task_id: start.id,
      outcome: { status: 'succeeded', summary: 'processing completed', error_code: null },
    })
    expect(d.payload.links.resource).toEndWith(`/v1/question-groups/${group.id}/guidelines/${start.id}`)
    expect(JSON.stringify(d.payload)).not.toContain('bankruptcy')
    // The group counts it; the list shows it; another group's path to it is 404.
    expect((await call(app.url, 'GET', `/v1/question-groups/${group.id}`, { token: readKey })).body.guideline_count).toBe(1)
    const list = await call(app.url, 'GET', `/v1/question-groups/${group.id}/guidelines`, { token: readKey })
    expect(list.body.items).toEqual([done])
    const g2 = await createGroup(app, key, 'other group')
    expect((await call(app.url, 'GET', `/v1/question-groups/${g2.id}/guidelines/${start.id}`, { token: readKey })).status).toBe(404)
    // complete twice: 409; reingest: processing again, same block ids.
    expect(problemOf(await call(app.url, 'POST', `/v1/question-groups/${group.id}/guidelines/${start.id}/complete`, { token: key, body: {} })).type).toBe('urn:svc:error:conflict')
    expect((await call(app.url, 'POST', `/v1/question-groups/${group.id}/guidelines/${start.id}/reingest`, { token: key })).status).toBe(202)
    await guidelineSettled(app, key, group.id, start.id)
    const again = (await call(app.url, 'GET', `/v1/question-groups/${group.id}/guidelines/${start.id}/blocks?limit=200`, { token: readKey })).body.items
    expect(again.map((b: any) => b.id)).toEqual(blocks.map((b: any) => b.id))
  })

  test('PDF reads page by page', async () => {
    const group = await createGroup(app, key)
    const { start } = await uploadGuideline(app, key, group.id, await guidelinePdf())
    const done = await guidelineSettled(app, key, group.id, start.id)
    expect(done).toMatchObject({ status: 'ready', page_count: 2 })
    const blocks = (await call(app.url, 'GET', `/v1/question-groups/${group.id}/guidelines/${start.id}/blocks?page=2`, { token: readKey })).body.items
    expect(blocks.map((b: any) => b.text).join('\n')).toContain(OBLIGATIONS[0])
  })

  test('a recognised type without adapter is unsupported_pending (task.failed unsupported_pending); broken bytes fail; partly broken text is degraded', async () => {
    const group = await createGroup(app, key)
    const cases: [SampleFile, string, Record<string, unknown>][] = [
      [{ filename: 'deck.ppt', contentType: 'application/vnd.ms-powerpoint', bytes: pptSample() }, 'unsupported_pending',
        { event_type: 'task.failed', outcome: { status: 'failed', error_code: 'unsupported_pending', summary: 'format not yet supported for automatic processing' } }],
      [{ filename: 'broken.pdf', contentType: 'application/pdf', bytes: corruptPdfSample() }, 'failed',
        { event_type: 'task.failed', outcome: { status: 'failed', error_code: 'guideline_ingestion_failed', summary: 'processing failed: the PDF structure is invalid' } }],
      [{ filename: 'partly.txt', contentType: 'text/plain', bytes: brokenUtf8TextSample() }, 'ready_degraded',
        { event_type: 'task.completed', outcome: { status: 'succeeded', error_code: null, summary: 'processing completed with a degraded parse' } }],
    ]
    for (const [file, status, envelope] of cases) {
      const { start, complete } = await uploadGuideline(app, key, group.id, file, { complete: { notifications: EMAIL } })
      expect(complete.status).toBe(202)
      const done = await guidelineSettled(app, key, group.id, start.id)
      expect(done.status).toBe(status)
      if (status === 'unsupported_pending') expect(done.error_code).toBe('unsupported_pending')
      if (status === 'failed') expect(done.error_code).toBe('guideline_ingestion_failed')
      const [d] = await deliveriesOf(app, key, 'guideline_ingestion', start.id)
      expect(d.payload).toMatchObject({ task_kind: 'guideline_ingestion', task_id: start.id, ...envelope })
    }
  })

  test('upload refusals: unknown type 415, wrong bytes 422 (nothing kept), unknown group 404, replaces of another group 422, readers 403', async () => {
    const group = await createGroup(app, key)
    const start = (body: Record<string, unknown>, token = key) => call(app.url, 'POST', `/v1/question-groups/${group.id}/guidelines`, { token, body: { filename: 'g.txt', content_type: 'text/plain', size_bytes: 10, ...body } })
    expect(problemOf(await start({ content_type: 'application/x-nope' })).type).toBe('urn:svc:error:unsupported_media_type')
    expect(problemOf(await start({}, readKey)).type).toBe('urn:svc:error:forbidden')
    expect((await call(app.url, 'POST', `/v1/question-groups/${crypto.randomUUID()}/guidelines`, { token: key, body: { filename: 'g.txt', content_type: 'text/plain', size_bytes: 10 } })).status).toBe(404)
    const foreign = await createGroup(app, key, 'foreign')
    const { start: f } = await uploadGuideline(app, key, foreign.id, await guidelinePdf())
    expect(problemOf(await start({ replaces_guideline_id: f.id })).detail).toContain('replaces_guideline_id')
    const image = pngSample()
    const s = await start({ size_bytes: image.byteLength })
    const png = await putBytes(app, s.body.upload, image)
    expect(png.status).toBe(422)
    const complete = await call(app.url, 'POST', `/v1/question-groups/${group.id}/guidelines/${s.body.id}/complete`, { token: key, body: {} })
    expect(problemOf(complete).type).toBe('urn:svc:error:conflict')
    const [row] = await app.sql`select blob_key, status from guidelines where id = ${s.body.id}`
    expect(row).toEqual({ blob_key: null, status: 'awaiting_upload' })
  })
})
