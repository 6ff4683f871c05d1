import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { PDFDocument } from 'pdf-lib'
import { extractText, getDocumentProxy } from 'unpdf'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { caseWith, DEFAULT_FACTS, EMAIL_ME, envelopesOf, evaluationEnded, PACK_QUESTIONS, packFiles, publishedSet } from '../helpers/underwriting-pack'

// The preload's default timeout reaches only the first file of a multi-file run (bun 1.4): set it here too.
setDefaultTimeout(60_000)

let app: TestApp
let issuer: TestIssuer
let key: string
let reviewerToken: string
let scenarioId: string
let evaluationId: string

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write', 'notifications:write', 'settings:write'])
  await app.member(t.id, 'report-reviewer', 'reviewer', 'reviewer@example.test')
  reviewerToken = await issuer.token('report-reviewer')
  const settings = await call(app.url, 'PUT', '/v1/tenant-settings', { token: key, body: { embed_allowed_origins: [], time_zone: 'Asia/Kolkata' } })
  expect(settings.status).toBe(200)
  await publishedSet(app, key)
  const { scenario } = await caseWith(app, key, await packFiles({ ...DEFAULT_FACTS, annualRevenue: '950,000.00' }), { name: 'Acme Holdings LLC', external_ref: 'LN-2024-0042' })
  scenarioId = scenario.id
  const e = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key })
  evaluationId = e.body.id
  await evaluationEnded(app, key, scenarioId, evaluationId)
  const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/decision/review`, { token: reviewerToken, body: { outcome: 'refer', reason: 'Seasonal revenue; refer to credit committee.' } })
  expect(r.status).toBe(200)
})
afterAll(async () => { await app.stop(); issuer.stop() })

async function reportEnded(reportId: string, token = key) {
  const end = Date.now() + 30_000
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports/${reportId}`, { token })
    if (r.body.status !== 'queued' && r.body.status !== 'running') return r.body
    if (Date.now() > end) throw new Error(`report still ${r.body.status}`)
    await Bun.sleep(25)
  }
}

describe('PDF findings report', () => {
  test('generate (idempotent, notified), read, download: a PDF with the decision, the override, every question key, evidence and local times', async () => {
    const headers = { 'idempotency-key': `report-${scenarioId}` }
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/reports`, { token: key, headers, body: { notifications: EMAIL_ME } })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ scenario_id: scenarioId, evaluation_id: evaluationId, status: 'queued', content_type: 'application/pdf' })
    expect(r.headers.get('location')).toBe(`/v1/scenarios/${scenarioId}/reports/${r.body.id}`)
    const replay = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/reports`, { token: key, headers, body: { notifications: EMAIL_ME } })
    expect(replay.body.id).toBe(r.body.id)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')

    const done = await reportEnded(r.body.id)
    const pristine = structuredClone(done) // (toMatchObject may write its matchers into the object)
    expect(done).toMatchObject({ status: 'succeeded', download: `/v1/scenarios/${scenarioId}/reports/${r.body.id}/download`, completed_at: expect.any(String) })
    expect(done.size_bytes).toBeGreaterThan(1000)
    const [env] = await envelopesOf(app, key, 'report_generated', r.body.id)
    expect(env).toMatchObject({ event_type: 'task.completed', task_kind: 'report_generated', task_id: r.body.id, outcome: { status: 'succeeded', summary: 'findings report is ready to download', error_code: null } })
    expect(env.links.resource).toEndWith(`/v1/scenarios/${scenarioId}/reports/${r.body.id}`)

    const res = await fetch(`${app.url}${done.download}`, { headers: { authorization: `Bearer ${key}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/pdf')
    const bytes = new Uint8Array(await res.arrayBuffer())
    expect(bytes.byteLength).toBe(done.size_bytes)
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-')

    const doc = await PDFDocument.load(bytes)
    expect(doc.getPageCount()).toBe(done.page_count)
    expect(doc.getTitle()).toBe('Findings report: Acme Holdings LLC')
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true })
    const flat = text.replace(/\s+/g, ' ')
    expect(flat).toContain('Findings report')
    expect(flat).toContain('Case: Acme Holdings LLC')
    expect(flat).toContain('External reference: LN-2024-0042')
    expect(flat).toContain('Final outcome: REFER')
    expect(flat).toContain('Computed outcome: decline')
    expect(flat).toContain('- annual_revenue (decline): found 950,000.00; rule value >= 1000000 not met')
    expect(flat).toContain('Override: refer by reviewer@example.test')
    expect(flat).toContain('Reason: Seasonal revenue; refer to credit committee.')
    for (const q of PACK_QUESTIONS) expect(flat).toContain(`${q.key} [${q.criticality}, ${q.answer_type}]`)
    expect(flat).toContain('Answer: 950,000.00 (answered, confidence 1.00) - rule FAILED')
    expect(flat).toContain('Evidence: application_form.pdf, page 1: "Annual revenue: 950,000.00"')
    expect(flat).toContain('Evidence: application_form.pdf, page 2: "Prior bankruptcy: No"')
    expect(flat).toContain('Evidence: letter.docx, page 1: "Debt service coverage ratio: 1.45"')
    // Timestamps in the workspace's time zone (Asia/Kolkata is UTC+05:30 all year).
    expect(flat).toMatch(/Generated: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} GMT\+05:30 \(Asia\/Kolkata\)/)
    const generatedLocal = /Generated: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}):\d{2}/.exec(flat)![1]!
    const expectedLocal = new Date(new Date(pristine.completed_at).getTime() + 5.5 * 3600_000).toISOString().slice(0, 16).replace('T', ' ')
    const before = new Date(new Date(pristine.completed_at).getTime() + 5.5 * 3600_000 - 60_000).toISOString().slice(0, 16).replace('T', ' ')
    expect([expectedLocal, before]).toContain(generatedLocal)

    const events = await app.sql<{ data: any }[]>`select data from case_events where scenario_id = ${scenarioId} and type = 'report.status' order by seq`
    expect(events.map((e) => e.data)).toEqual([
      { report_id: r.body.id, evaluation_id: evaluationId, status: 'queued' },
      { report_id: r.body.id, evaluation_id: evaluationId, status: 'succeeded' },
    ])
    const list = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports`, { token: key })
    expect(list.body.items).toEqual([pristine])
  })

  test('409 without a succeeded evaluation; 404 for another workspace; a read key may read but not request', async () => {
    const fresh = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'empty' } })
    expect(problemOf(await call(app.url, 'POST', `/v1/scenarios/${fresh.body.id}/reports`, { token: key })).type).toBe('urn:svc:error:conflict')
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['scenarios:write'])
    expect((await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/reports`, { token: otherKey })).status).toBe(404)
    const list = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports`, { token: key })
    const reportId = list.body.items[0].id
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports/${reportId}`, { token: otherKey })).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports/${reportId}/download`, { token: otherKey })).status).toBe(404)
    const [{ id: tenantId }] = await app.sql`select tenant_id as id from scenarios where id = ${scenarioId}` as any
    const reader = await app.apiKey(tenantId, ['scenarios:read'])
    expect((await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports/${reportId}/download`, { token: reader })).status).toBe(200)
    expect((await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/reports`, { token: reader })).status).toBe(403)
  })

  test('a report that cannot be written ends failed, delivered as report_failed', async () => {
    // A second evaluation whose stored decision is then lost: the writer cannot build the report.
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token: key })
    await evaluationEnded(app, key, scenarioId, e.body.id)
    await app.sql`delete from evaluation_decisions where evaluation_id = ${e.body.id}`
    const r = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/reports`, { token: key, body: { evaluation_id: e.body.id, notifications: EMAIL_ME } })
    expect(r.status).toBe(202)
    const done = await reportEnded(r.body.id)
    expect(done).toMatchObject({ status: 'failed', error: 'the report could not be written' })
    expect('download' in done).toBe(false)
    expect(problemOf(await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/reports/${r.body.id}/download`, { token: key })).type).toBe('urn:svc:error:conflict')
    const [env] = await envelopesOf(app, key, 'report_generated', r.body.id)
    expect(env).toMatchObject({ event_type: 'task.failed', outcome: { status: 'failed', summary: 'report could not be generated', error_code: 'report_failed' } })
  })
})
