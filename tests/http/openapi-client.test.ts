/**
 * A client generated from the live document, as an integrator would make it: openapi-typescript
 * types + openapi-fetch. The typical flow (create case, upload, complete, poll, question set,
 * version, publish, evaluate, answers, decision, evidence, report, download) is written naturally,
 * with no casts, type-checked strictly, then run against the service.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { call, startApp, type TestApp } from '../helpers/app'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const dir = join(import.meta.dir, '..', '.generated', `client-${crypto.randomUUID().slice(0, 8)}`)
let app: TestApp
beforeAll(async () => {
  // The service's public base must be its real address: the upload URL is used exactly as given.
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  app = await startApp({ env: { PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}` } })
  mkdirSync(dir, { recursive: true })
})
afterAll(async () => {
  await app.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** The integrator's code: no `as`, no `any`, no non-null assertions. */
const FLOW = `
import createClient from 'openapi-fetch'
import type { components, paths } from './api'

type Evaluation = components['schemas']['Evaluation']

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const end = Date.now() + 60_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export async function run(baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${apiKey}\` } })

  const created = await client.POST('/v1/scenarios', { body: { name: 'Acme Holdings LLC', external_ref: 'LN-42' }, headers: { 'Idempotency-Key': crypto.randomUUID() } })
  if (!created.data) throw new Error(\`create case: \${created.error?.detail}\`)
  const scenarioId: string = created.data.id

  const text = 'Borrower: Acme Holdings LLC\\nAnnual revenue: 1,250,000.00\\nYears in business: 7\\n'
  const bytes = new TextEncoder().encode(text)
  const started = await client.POST('/v1/scenarios/{scenarioId}/documents', {
    params: { path: { scenarioId } },
    body: { filename: 'financials.txt', content_type: 'text/plain', size_bytes: bytes.byteLength },
  })
  if (!started.data) throw new Error(\`start upload: \${started.error?.detail}\`)
  const { upload, id: documentId } = started.data
  const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: bytes })
  if (put.status !== 204) throw new Error(\`upload: \${put.status}\`)
  const completed = await client.POST('/v1/scenarios/{scenarioId}/documents/{documentId}/complete', { params: { path: { scenarioId, documentId } } })
  if (!completed.data) throw new Error(\`complete: \${completed.error?.detail}\`)
  const document = await until(
    () => client.GET('/v1/scenarios/{scenarioId}/documents/{documentId}', { params: { path: { scenarioId, documentId } } }),
    (r) => r.data?.status !== 'processing',
  )
  if (document.data?.status !== 'ready') throw new Error(\`document \${document.data?.status}\`)

  const set = await client.POST('/v1/question-sets', { body: { name: 'Small business lending' } })
  if (!set.data) throw new Error(\`question set: \${set.error?.detail}\`)
  const questionSetId = set.data.id
  const version = await client.POST('/v1/question-sets/{questionSetId}/versions', {
    params: { path: { questionSetId } },
    body: {
      questions: [
        { key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000' },
        { key: 'years_in_business', text: 'How many years has the borrower been in business?', criticality: 'major', answer_type: 'number', fact_path: 'years_in_business', accept: 'value >= 3' },
      ],
    },
  })
  if (!version.data) throw new Error(\`version: \${version.error?.detail}\`)
  const versionId = version.data.id
  const publishing = await client.POST('/v1/question-sets/{questionSetId}/versions/{versionId}/publish', {
    params: { path: { questionSetId, versionId }, header: { 'If-Match': version.data.etag } },
  })
  if (!publishing.data) throw new Error(\`publish: \${publishing.error?.detail}\`)
  const published = await until(
    () => client.GET('/v1/question-sets/{questionSetId}/versions/{versionId}', { params: { path: { questionSetId, versionId } } }),
    (r) => r.data?.status === 'published' || r.data?.status === 'failed',
  )
  if (published.data?.status !== 'published') throw new Error('not published')

  const started2 = await client.POST('/v1/scenarios/{scenarioId}/evaluate', { params: { path: { scenarioId } }, body: { question_set_id: questionSetId } })
  if (!started2.data) throw new Error(\`evaluate: \${started2.error?.detail}\`)
  const evaluationId = started2.data.id
  const finished = await until(
    () => client.GET('/v1/scenarios/{scenarioId}/evaluations/{evaluationId}', { params: { path: { scenarioId, evaluationId } } }),
    (r) => r.data?.status === 'succeeded' || r.data?.status === 'failed' || r.data?.status === 'canceled',
  )
  const evaluation: Evaluation | undefined = finished.data
  if (evaluation?.status !== 'succeeded') throw new Error(\`evaluation \${evaluation?.status}\`)

  const answers = await client.GET('/v1/scenarios/{scenarioId}/answers', { params: { path: { scenarioId }, query: { evaluation_id: evaluationId } } })
  const decision = await client.GET('/v1/scenarios/{scenarioId}/decision', { params: { path: { scenarioId } } })
  const evidence = await client.GET('/v1/scenarios/{scenarioId}/evidence', { params: { path: { scenarioId } } })
  if (!answers.data || !decision.data || !evidence.data) throw new Error('results')
  const revenue = answers.data.items.find((a) => a.question_key === 'annual_revenue')

  const report = await client.POST('/v1/scenarios/{scenarioId}/reports', { params: { path: { scenarioId } }, body: { evaluation_id: evaluationId } })
  if (!report.data) throw new Error(\`report: \${report.error?.detail}\`)
  const reportId = report.data.id
  const ready = await until(
    () => client.GET('/v1/scenarios/{scenarioId}/reports/{reportId}', { params: { path: { scenarioId, reportId } } }),
    (r) => r.data?.status === 'succeeded' || r.data?.status === 'failed',
  )
  if (ready.data?.status !== 'succeeded') throw new Error('report failed')
  const pdf = await client.GET('/v1/scenarios/{scenarioId}/reports/{reportId}/download', { params: { path: { scenarioId, reportId } }, parseAs: 'arrayBuffer' })
  if (!pdf.data) throw new Error('download')

  return {
    documentStatus: document.data.status,
    answers: answers.data.items.length,
    revenue: revenue?.value,
    revenueEvidence: revenue?.evidence_ids.length ?? 0,
    outcome: decision.data.outcome,
    evidence: evidence.data.items.map((e) => e.document_id),
    documentId,
    pdfHead: new TextDecoder().decode(new Uint8Array(pdf.data).slice(0, 5)),
  }
}
`

test('a client generated from the live document type-checks the typical flow with no casts, then runs it', async () => {
  const document = (await call(app.url, 'GET', '/v1/openapi.json')).body
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(document)))
  writeFileSync(join(dir, 'flow.ts'), FLOW)
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'], types: [], skipLibCheck: true, noUncheckedIndexedAccess: true },
    files: ['flow.ts'],
  }))
  expect(FLOW).not.toMatch(/\bas\b [A-Za-z{]|: any\b|\w!\./)

  const tsc = Bun.spawnSync(['bunx', 'tsc', '-p', join(dir, 'tsconfig.json')], { cwd: join(import.meta.dir, '..', '..') })
  expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('')
  expect(tsc.exitCode).toBe(0)

  const t = await app.tenant()
  const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  const { run } = await import(join(dir, 'flow.ts'))
  const result = await run(app.url, key)
  expect(result).toMatchObject({ documentStatus: 'ready', answers: 2, revenue: '1250000.00', outcome: 'approve', pdfHead: '%PDF-' })
  expect(result.revenueEvidence).toBeGreaterThan(0)
  expect(result.evidence).toContain(result.documentId)
})
