/**
 * PDF fidelity through the service (issue 24): a PDF that needs a password fails with its own
 * machine-readable reason (not as a corrupt file), an owner-password-only PDF reads; filled form
 * fields answer fact questions with evidence on their page; CJK text with a predefined CMap is read;
 * a text layer over an image is kept whatever OCR finds.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, settled, uploadAndComplete } from '../helpers/samples'
import { encryptedPdf } from '../helpers/pdf-fixtures'

setDefaultTimeout(120_000)

let app: TestApp
let key: string
let scenarioId: string
beforeAll(async () => {
  app = await startApp()
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'notifications:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'PDF fidelity' } })).body.id
})
afterAll(() => app?.stop())

/** The stored notification envelopes of a task. */
const envelopes = async (taskId: string) =>
  (await app.sql<{ body: string }[]>`select body from notification_deliveries where task_id = ${taskId} order by created_at`).map((r) => JSON.parse(r.body))

describe('password-protected PDFs', () => {
  test('a PDF that needs a user password ends failed with document_password_protected and says to remove the password', async () => {
    const { doc, complete } = await uploadAndComplete(app, key, scenarioId, { filename: 'statement.pdf', contentType: 'application/pdf', bytes: await encryptedPdf('user') }, { notifications: [{ channel: 'email', email: { address: 'uw@example.test' } }] })
    expect(complete.status, complete.text).toBe(202)
    const done = await settled(app, key, scenarioId, doc.id)
    expect(done).toMatchObject({ status: 'failed', error_code: 'document_password_protected', error_detail: 'the PDF is password-protected: remove the password and upload it again', block_count: 0 })
    const [envelope] = await envelopes(doc.id)
    expect(envelope).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', error_code: 'document_ingestion_failed', summary: 'ingestion failed: the PDF is password-protected: remove the password and upload it again' } })
  })

  test('a PDF with an owner password only reads as any other', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'owner-only.pdf', contentType: 'application/pdf', bytes: await encryptedPdf('owner-only') })
    expect(await settled(app, key, scenarioId, doc.id)).toMatchObject({ status: 'ready', block_count: 1 })
    expect((await allBlocks(app, key, scenarioId, doc.id)).map((b) => b.text)).toEqual(['Statement balance: 1,234.56'])
  })
})
