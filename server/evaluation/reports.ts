/**
 * Findings reports: the `report_generated` task. The route inserts a queued report and enqueues the
 * job; the job gathers the case, the evaluation's answers, evidence and decision (with the human
 * override in force) and the workspace's time zone, writes the PDF outside any transaction (in the
 * job's prepare step), then stores it, ends the report `succeeded` and notifies, in one transaction.
 * Reports that cannot be written end `failed` (report_failed). Owns `reports`.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import type { AppDeps } from '../deps'
import { Type } from '@sinclair/typebox'
import { defineJobKind, jobType } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import { recordUsageEvents } from '../billing/ledger'
import { appendCaseEvent } from '../events'
import { findScenario } from '../scenarios/store'
import { findUser } from '../workspaces/users-store'
import { readTenantSettings } from '../workspaces/settings-store'
import { findDocumentById } from '../documents/store'
import { caseCoverage } from '../documents/coverage'
import { findQuestionSet, findVersionById } from '../question-sets/store'
import { findDecision, findEvaluation, listAnswers, listEvidence } from './store'
import { latestReview } from './reviews'
import { writeFindingsReport, type ReportInput } from './report-pdf'
import { caseFindings } from './document-findings'

/** The job kind name (also the task kind). */
export const REPORT_GENERATED = 'report_generated'

/** A row of `reports` (without the bytes). */
export interface ReportRow {
  id: string; scenario_id: string; evaluation_id: string; status: 'queued' | 'running' | 'succeeded' | 'failed'
  size_bytes: number | null; page_count: number | null; error_detail: string | null
  completed_at: Date | null; created_at: Date; updated_at: Date
}

/** The resource path of a report. */
export const reportPath = (scenarioId: string, reportId: string) => `/v1/scenarios/${scenarioId}/reports/${reportId}`

/** The API shape of a report. */
export function renderReport(r: ReportRow) {
  return {
    id: r.id,
    scenario_id: r.scenario_id,
    evaluation_id: r.evaluation_id,
    status: r.status,
    content_type: 'application/pdf' as const,
    ...(r.size_bytes !== null ? { size_bytes: r.size_bytes } : {}),
    ...(r.page_count !== null ? { page_count: r.page_count } : {}),
    ...(r.status === 'succeeded' ? { download: `${reportPath(r.scenario_id, r.id)}/download` } : {}),
    ...(r.error_detail !== null ? { error: r.error_detail } : {}),
    created_at: r.created_at.toISOString(),
    ...(r.completed_at !== null ? { completed_at: r.completed_at.toISOString() } : {}),
    updated_at: r.updated_at.toISOString(),
  }
}

const COLUMNS = (sql: Tx) => sql`id, scenario_id, evaluation_id, status, size_bytes, page_count, error_detail, completed_at, created_at, updated_at`

/** Inserts a queued report. */
export async function insertReport(tx: Tx, tenantId: string, scenarioId: string, evaluationId: string): Promise<ReportRow> {
  const [row] = await tx<ReportRow[]>`
    insert into reports (tenant_id, id, scenario_id, evaluation_id) values (${tenantId}, ${Bun.randomUUIDv7()}, ${scenarioId}, ${evaluationId})
    returning ${COLUMNS(tx)}`
  return row!
}

/** Reads one report of a case, or null. */
export async function findReport(sql: Tx, tenantId: string, scenarioId: string, reportId: string, lock = false): Promise<ReportRow | null> {
  const [row] = await sql<ReportRow[]>`
    select ${COLUMNS(sql)} from reports where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and id = ${reportId}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** A page of a case's reports, newest first (fetch limit + 1). */
export function listReports(sql: Tx, tenantId: string, scenarioId: string, after: string | null, limit: number) {
  return sql<ReportRow[]>`
    select ${COLUMNS(sql)} from reports where tenant_id = ${tenantId} and scenario_id = ${scenarioId}
      ${after !== null ? sql`and id < ${after}` : sql``}
    order by id desc limit ${limit + 1}`
}

/** The PDF bytes of a succeeded report, or null. */
export async function reportBytes(sql: Tx, tenantId: string, reportId: string): Promise<Uint8Array<ArrayBuffer> | null> {
  const [row] = await sql<{ pdf: Uint8Array | null }[]>`select pdf from reports where tenant_id = ${tenantId} and id = ${reportId} and status = 'succeeded'`
  return row?.pdf ? new Uint8Array(row.pdf) : null
}

/** Gathers what a report shows (see report-pdf.ts). */
export async function reportInput(sql: Tx, tenantId: string, report: ReportRow, now = new Date()): Promise<ReportInput> {
  const scenario = (await findScenario(sql, tenantId, report.scenario_id))!
  const evaluation = (await findEvaluation(sql, tenantId, report.scenario_id, report.evaluation_id))!
  const version = (await findVersionById(sql, tenantId, evaluation.question_set_version_id))!
  const set = await findQuestionSet(sql, tenantId, evaluation.question_set_id)
  const answers = await listAnswers(sql, tenantId, evaluation.id)
  const evidence = await listEvidence(sql, tenantId, evaluation.id)
  const filenames = new Map<string, string>()
  for (const id of new Set(evidence.map((e) => e.document_id))) filenames.set(id, (await findDocumentById(sql, tenantId, id))?.filename ?? id)
  const computed = (await findDecision(sql, tenantId, evaluation.id))!
  const review = await latestReview(sql, tenantId, evaluation.id)
  const reviewer = review ? await findUser(sql, tenantId, review.reviewer_user_id) : null
  const settings = await readTenantSettings(sql, tenantId)
  const coverage = await caseCoverage(sql, tenantId, scenario.id)
  const findings = await caseFindings(sql, tenantId, scenario.id)
  return {
    generatedAt: now,
    timeZone: settings.time_zone ?? 'UTC',
    amounts: { locale: settings.number_locale ?? 'en-US', ...(settings.currency ? { currency: settings.currency } : {}) },
    scenario: { id: scenario.id, name: scenario.name, status: scenario.status, ...(scenario.external_ref ? { externalRef: scenario.external_ref } : {}), ...(scenario.vertical ? { vertical: scenario.vertical } : {}) },
    evaluation: {
      id: evaluation.id, engine: evaluation.engine, questionSetName: set?.name ?? evaluation.question_set_id, versionNumber: version.number,
      ...(evaluation.started_at ? { startedAt: evaluation.started_at } : {}), ...(evaluation.finished_at ? { finishedAt: evaluation.finished_at } : {}),
    },
    decision: {
      outcome: computed.outcome,
      reasons: computed.reasons,
      computedAt: computed.created_at,
      ...(review ? { override: { outcome: review.outcome, reason: review.reason, reviewer: reviewer?.email ?? `user ${review.reviewer_user_id}`, reviewedAt: review.created_at } } : {}),
      finalOutcome: review?.outcome ?? computed.outcome,
    },
    documents: coverage.map((c, i) => {
      const f = findings[i]?.filename === c.filename ? findings[i] : undefined
      return { ...c, ...(f?.type ? { type: f.type, typeConfidence: f.confidence ?? 0 } : {}), checks: f?.checks ?? [] }
    }),
    questions: version.questions.map((q) => {
      const a = answers.find((x) => x.question_key === q.key)
      return {
        key: q.key, text: q.text, criticality: q.criticality, answerType: q.answer_type, ...(q.accept ? { accept: q.accept } : {}),
        status: a?.status ?? 'not_found', value: a?.value ?? null, confidence: a?.confidence ?? 0,
        ...(a?.accepted !== null && a?.accepted !== undefined ? { accepted: a.accepted } : {}),
        ...(a?.note ? { note: a.note } : {}),
        evidence: evidence.filter((e) => e.answer_id === a?.id).map((e) => ({ filename: filenames.get(e.document_id)!, page: e.page, quote: e.quote })),
      }
    }),
  }
}

async function end(tx: Tx, links: LinkBases, tenantId: string, report: ReportRow, result: { bytes: Uint8Array; pageCount: number } | { error: string }) {
  const ok = 'bytes' in result
  const [row] = await tx<ReportRow[]>`
    update reports set
      status = ${ok ? 'succeeded' : 'failed'},
      pdf = ${ok ? result.bytes : null},
      size_bytes = ${ok ? result.bytes.byteLength : null},
      page_count = ${ok ? result.pageCount : null},
      error_detail = ${ok ? null : result.error},
      completed_at = now(), updated_at = now()
    where tenant_id = ${tenantId} and id = ${report.id}
    returning ${COLUMNS(tx)}`
  await appendCaseEvent(tx, { tenantId, scenarioId: report.scenario_id, type: 'report.status', data: { report_id: report.id, evaluation_id: report.evaluation_id, status: row!.status } })
  if (ok) await recordUsageEvents(tx, tenantId, [{ meter: 'reports_generated', quantity: 1, sourceKind: 'report_generated', sourceId: report.id }])
  await finishTask(tx, { links, tenantId, taskKind: 'report_generated', taskId: report.id, resourcePath: reportPath(report.scenario_id, report.id), result: ok ? 'succeeded' : 'failed' })
}

/** The report_generated job's type: the report (and its case) to write. */
export const ReportGeneratedJob = jobType({
  name: REPORT_GENERATED,
  payload: Type.Object({ scenarioId: Type.String(), reportId: Type.String() }),
  tenantScoped: true,
})

/** The job kind: writes the PDF in `prepare`, stores it in the handler. */
export function reportGeneratedJobKind() {
  return defineJobKind({
    ...ReportGeneratedJob,
    maxAttempts: 3,
    async prepare(job, deps: AppDeps) {
      const p = job.payload
      const report = await findReport(deps.sql, job.tenantId, p.scenarioId, p.reportId)
      if (!report || report.status !== 'queued') return null
      return writeFindingsReport(await reportInput(deps.sql, job.tenantId, report))
    },
    async handler(tx, job, deps) {
      const p = job.payload
      const report = await findReport(tx, job.tenantId, p.scenarioId, p.reportId, true)
      if (!report || report.status !== 'queued' || !job.prepared) return
      await end(tx, deps.links, job.tenantId, report, job.prepared)
    },
    async onGiveUp(tx, job, deps) {
      const p = job.payload
      const report = await findReport(tx, job.tenantId, p.scenarioId, p.reportId, true)
      if (!report || report.status !== 'queued') return
      await end(tx, deps.links, job.tenantId, report, { error: 'the report could not be written' })
    },
  })
}
