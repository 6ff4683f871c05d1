/**
 * A test underwriting pack, generated in the run: an application form PDF (pdf-lib), a bank
 * statement CSV and a DOCX letter (docx), a 6-question set with fact rules, and the HTTP flow that
 * puts them into a case (real uploads, real ingestion) and publishes the set. Shared by the
 * evaluation, decision-review and report tests.
 */
import { Document, Packer, Paragraph } from 'docx'
import { call, type TestApp } from './app'
import { pdfSample, settled, uploadAndComplete, type SampleFile } from './samples'

/** The facts of the pack that tests vary. */
export interface PackFacts {
  annualRevenue: string
  minBalanceRow: string
}

export const DEFAULT_FACTS: PackFacts = { annualRevenue: '1,250,000.00', minBalanceRow: '2024-01-28,Payroll,-31000.00,29700.50' }

/** The application form: two pages of "Label: value" lines. */
export async function applicationForm(facts: PackFacts = DEFAULT_FACTS): Promise<SampleFile> {
  const bytes = await pdfSample([
    ['Business Loan Application', 'Applicant: Acme Holdings LLC', `Annual revenue: ${facts.annualRevenue}`, 'Years in business: 12 years'],
    ['Section B: history', 'Prior bankruptcy: No', 'Requested amount: 400,000.00'],
  ])
  return { filename: 'application_form.pdf', contentType: 'application/pdf', bytes }
}

/** The bank statement: a CSV of dated transactions with a running balance. */
export function bankStatement(facts: PackFacts = DEFAULT_FACTS): SampleFile {
  const csv = ['Date,Description,Amount,Balance', '2024-01-02,Opening balance,0.00,48200.00', '2024-01-15,Customer payment,12500.50,60700.50', facts.minBalanceRow, '2024-01-31,Customer payment,8000.00,37700.50'].join('\n') + '\n'
  return { filename: 'bank_statement.csv', contentType: 'text/csv', bytes: new TextEncoder().encode(csv) }
}

/** The letter: a DOCX with a litigation statement and the debt service coverage ratio. */
export async function letter(): Promise<SampleFile> {
  const doc = new Document({
    sections: [{
      children: [
        new Paragraph('Dear underwriter,'),
        new Paragraph('We confirm that there is no outstanding litigation against Acme Holdings LLC or its directors.'),
        new Paragraph('Debt service coverage ratio: 1.45'),
        new Paragraph('Yours faithfully, the accountants'),
      ],
    }],
  })
  return { filename: 'letter.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: new Uint8Array(await Packer.toBuffer(doc)) as SampleFile['bytes'] }
}

/** The 6 questions of the pack. */
export const PACK_QUESTIONS = [
  { key: 'annual_revenue', text: 'What is the annual revenue?', criticality: 'critical', answer_type: 'number', fact_path: 'annual_revenue', accept: 'value >= 1000000' },
  { key: 'years_in_business', text: 'How many years has the business operated?', criticality: 'major', answer_type: 'number', fact_path: 'years_in_business', accept: 'value >= 2' },
  { key: 'prior_bankruptcy', text: 'Has the applicant had a prior bankruptcy?', criticality: 'critical', answer_type: 'boolean', fact_path: 'prior_bankruptcy', accept: 'value = false' },
  { key: 'min_balance', text: 'What is the lowest bank balance in the statement?', criticality: 'major', answer_type: 'number', fact_path: 'bank_statement.balance.min', accept: 'value >= 10000' },
  { key: 'dscr', text: 'What is the debt service coverage ratio?', criticality: 'major', answer_type: 'number', fact_path: 'debt_service_coverage_ratio', accept: 'value between 1.25 and 10' },
  { key: 'litigation', text: 'Is there any outstanding litigation against the applicant?', criticality: 'minor', answer_type: 'text' },
] as const

/** Creates a question set with the given questions and publishes its first version; returns both. */
export async function publishedSet(app: TestApp, token: string, questions: readonly object[] = PACK_QUESTIONS, body: Record<string, unknown> = { name: 'Commercial lending' }) {
  const set = await call(app.url, 'POST', '/v1/question-sets', { token, body })
  if (set.status !== 201) throw new Error(`question set: ${set.status} ${set.text}`)
  const version = await publishVersion(app, token, set.body.id, questions)
  return { set: set.body, version }
}

/** Creates and publishes a version of a set; waits until it is published. */
export async function publishVersion(app: TestApp, token: string, setId: string, questions: readonly object[]) {
  const v = await call(app.url, 'POST', `/v1/question-sets/${setId}/versions`, { token, body: { questions } })
  if (v.status !== 201) throw new Error(`version: ${v.status} ${v.text}`)
  const p = await call(app.url, 'POST', `/v1/question-sets/${setId}/versions/${v.body.id}/publish`, { token })
  if (p.status !== 202) throw new Error(`publish: ${p.status} ${p.text}`)
  const end = Date.now() + 20_000
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/question-sets/${setId}/versions/${v.body.id}`, { token })
    if (r.body.status === 'published') return r.body
    if (r.body.status === 'failed' || Date.now() > end) throw new Error(`version ${r.body.status}`)
    await Bun.sleep(20)
  }
}

/** Creates a case and uploads files into it; waits for each to be processed. Returns the case and documents by filename. */
export async function caseWith(app: TestApp, token: string, files: SampleFile[], body: Record<string, unknown> = { name: 'Acme Holdings LLC' }) {
  const sc = await call(app.url, 'POST', '/v1/scenarios', { token, body })
  if (sc.status !== 201) throw new Error(`scenario: ${sc.status} ${sc.text}`)
  const docs: Record<string, any> = {}
  for (const f of files) {
    const { doc, complete } = await uploadAndComplete(app, token, sc.body.id, f)
    if (complete.status !== 202) throw new Error(`complete: ${complete.status} ${complete.text}`)
    const done = await settled(app, token, sc.body.id, doc.id)
    if (done.status !== 'ready') throw new Error(`document ${f.filename}: ${done.status}`)
    docs[f.filename] = done
  }
  return { scenario: sc.body, docs }
}

/** The whole pack as files. */
export async function packFiles(facts: PackFacts = DEFAULT_FACTS): Promise<SampleFile[]> {
  return [await applicationForm(facts), bankStatement(facts), await letter()]
}

/** Polls an evaluation until it ends; returns it. */
export async function evaluationEnded(app: TestApp, token: string, scenarioId: string, evaluationId: string, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/evaluations/${evaluationId}`, { token })
    if (r.status !== 200) throw new Error(`evaluation: ${r.status} ${r.text}`)
    if (!['queued', 'running'].includes(r.body.status)) return r.body
    if (Date.now() > end) throw new Error(`evaluation still ${r.body.status}`)
    await Bun.sleep(25)
  }
}

/** Polls an evaluation until it reaches `status` (e.g. running). */
export async function evaluationReaches(app: TestApp, token: string, scenarioId: string, evaluationId: string, status: string, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/evaluations/${evaluationId}`, { token })
    if (r.body.status === status) return r.body
    if (Date.now() > end) throw new Error(`evaluation is ${r.body.status}, never ${status}`)
    await Bun.sleep(20)
  }
}

/** The envelopes delivered for a task through the notification path (its subscriptions' deliveries). */
export async function envelopesOf(app: TestApp, token: string, taskKind: string, taskId: string, timeoutMs = 20_000): Promise<any[]> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const subs = await call(app.url, 'GET', `/v1/task-notification-subscriptions?task_kind=${taskKind}&task_id=${taskId}`, { token })
    const out: any[] = []
    for (const s of subs.body.items ?? []) {
      const d = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${s.id}/deliveries`, { token })
      out.push(...d.body.items.map((x: any) => x.payload))
    }
    if (out.length > 0) return out
    if (Date.now() > end) throw new Error(`no delivery for ${taskKind} ${taskId}`)
    await Bun.sleep(25)
  }
}

/** Inline notifications of one email subscriber. */
export const EMAIL_ME = [{ channel: 'email', email: { address: 'underwriting@example.test' } }]
