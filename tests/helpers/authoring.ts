/**
 * Question-authoring test steps: guideline files generated in the run (DOCX with docx, PDF with
 * pdf-lib), the guideline upload flow over HTTP (start, PUT, complete, wait), and waiting for runs.
 */
import { Document, HeadingLevel, Packer, Paragraph } from 'docx'
import { call, type Reply, type TestApp } from './app'
import { pdfSample, putBytes, type SampleFile } from './samples'

/** Five obligations: two critical thresholds, a critical prohibition, a major threshold, a minor requirement. */
export const OBLIGATIONS = [
  'Annual revenue must be at least USD 1,000,000.',
  'The applicant must not have a prior bankruptcy.',
  'Years in business should be at least 2.',
  'The debt service coverage ratio shall be between 1.25 and 10.',
  'Where available, a copy of the business plan is required.',
]

/** Lines around the obligations that state none. */
export const PROSE = ['This guideline describes how commercial loans are reviewed.', 'It applies to every branch.']

/** A DOCX guideline: a heading, prose, and one paragraph per line. */
export async function guidelineDocx(lines: string[] = OBLIGATIONS, filename = 'guideline.docx'): Promise<SampleFile> {
  const doc = new Document({ sections: [{ children: [
    new Paragraph({ text: 'Commercial lending guideline', heading: HeadingLevel.HEADING_1 }),
    ...PROSE.map((p) => new Paragraph(p)),
    ...lines.map((l) => new Paragraph(l)),
  ] }] })
  return { filename, contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: new Uint8Array(await Packer.toBuffer(doc)) as SampleFile['bytes'] }
}

/** A PDF guideline: a title and prose on page 1, the lines on page 2. */
export async function guidelinePdf(lines: string[] = OBLIGATIONS, filename = 'guideline.pdf'): Promise<SampleFile> {
  return { filename, contentType: 'application/pdf', bytes: await pdfSample([['Commercial lending guideline', ...PROSE], ['Minimum requirements', ...lines]]) }
}

/** A plain-text guideline. */
export const guidelineText = (text: string, filename = 'guideline.txt'): SampleFile =>
  ({ filename, contentType: 'text/plain', bytes: new TextEncoder().encode(text) as SampleFile['bytes'] })

/** Creates a question group. */
export async function createGroup(app: TestApp, token: string, name = 'Lending guidelines'): Promise<any> {
  const r = await call(app.url, 'POST', '/v1/question-groups', { token, body: { name } })
  if (r.status !== 201) throw new Error(`group: ${r.status} ${r.text}`)
  return r.body
}

/** Start, PUT, complete a guideline upload; returns the start body and the complete reply. */
export async function uploadGuideline(app: TestApp, token: string, groupId: string, file: SampleFile, opts: { extra?: Record<string, unknown>; complete?: unknown } = {}): Promise<{ start: any; complete: Reply }> {
  const start = await call(app.url, 'POST', `/v1/question-groups/${groupId}/guidelines`, {
    token, body: { filename: file.filename, content_type: file.contentType, size_bytes: file.bytes.byteLength, ...opts.extra },
  })
  if (start.status !== 201) throw new Error(`guideline start: ${start.status} ${start.text}`)
  const put = await putBytes(app, start.body.upload, file.bytes)
  if (put.status !== 204) throw new Error(`PUT: ${put.status} ${put.text}`)
  const complete = await call(app.url, 'POST', `/v1/question-groups/${groupId}/guidelines/${start.body.id}/complete`, { token, body: opts.complete ?? {} })
  return { start: start.body, complete }
}

/** Polls a guideline until it leaves processing. */
export async function guidelineSettled(app: TestApp, token: string, groupId: string, id: string, timeoutMs = 30_000): Promise<any> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/question-groups/${groupId}/guidelines/${id}`, { token })
    if (r.status !== 200) throw new Error(`guideline: ${r.status} ${r.text}`)
    if (r.body.status !== 'processing' && r.body.status !== 'awaiting_upload') return r.body
    if (Date.now() > end) throw new Error(`guideline still ${r.body.status}`)
    await Bun.sleep(20)
  }
}

/** Uploads a file into a group and waits until it is processed; returns the guideline. */
export async function readyGuideline(app: TestApp, token: string, groupId: string, file: SampleFile, extra?: Record<string, unknown>): Promise<any> {
  const { start, complete } = await uploadGuideline(app, token, groupId, file, { extra })
  if (complete.status !== 202) throw new Error(`complete: ${complete.status} ${complete.text}`)
  const g = await guidelineSettled(app, token, groupId, start.id)
  if (g.status !== 'ready' && g.status !== 'ready_degraded') throw new Error(`guideline ${g.status}`)
  return g
}

/** Creates a question set. */
export async function createSet(app: TestApp, token: string, name = 'Generated set'): Promise<any> {
  const r = await call(app.url, 'POST', '/v1/question-sets', { token, body: { name } })
  if (r.status !== 201) throw new Error(`set: ${r.status} ${r.text}`)
  return r.body
}

/** Polls a run until its status is one of `statuses` (default: any but queued/running). */
export async function runReaches(app: TestApp, token: string, setId: string, runId: string, statuses?: string[], timeoutMs = 30_000): Promise<any> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const r = await call(app.url, 'GET', `/v1/question-sets/${setId}/generation-runs/${runId}`, { token })
    if (r.status !== 200) throw new Error(`run: ${r.status} ${r.text}`)
    if (statuses ? statuses.includes(r.body.status) : !['queued', 'running'].includes(r.body.status)) return r.body
    if (Date.now() > end) throw new Error(`run is ${r.body.status}`)
    await Bun.sleep(20)
  }
}

/** The deliveries of a task (via its subscriptions), with payloads, oldest first; waits for `n`. */
export async function deliveriesOf(app: TestApp, token: string, taskKind: string, taskId: string, n = 1, timeoutMs = 20_000): Promise<any[]> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const subs = await call(app.url, 'GET', `/v1/task-notification-subscriptions?task_kind=${taskKind}&task_id=${taskId}`, { token })
    const out: any[] = []
    for (const s of subs.body.items ?? []) {
      const d = await call(app.url, 'GET', `/v1/task-notification-subscriptions/${s.id}/deliveries`, { token })
      out.push(...d.body.items.map((x: any) => ({ ...x, subscription: s })))
    }
    if (out.length >= n) return out.sort((a, b) => (a.payload.occurred_at < b.payload.occurred_at ? -1 : a.payload.occurred_at > b.payload.occurred_at ? 1 : 0))
    if (Date.now() > end) throw new Error(`only ${out.length} of ${n} deliveries for ${taskKind} ${taskId}`)
    await Bun.sleep(25)
  }
}

/** Inline notifications of one email subscriber. */
export const EMAIL = [{ channel: 'email', email: { address: 'authoring@example.test' } }]
