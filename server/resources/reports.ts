/**
 * PDF findings reports of a case: request one (202; a `report_generated` task; Idempotency-Key;
 * inline notifications), read and list them, download the PDF.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { subscribeInline } from '../notifications/inline'
import { appendCaseEvent } from '../events'
import { enqueue } from '../../jobs/define'
import { PageOf, ScenarioParams } from '../../schemas/common'
import { Report, ReportCreate, ReportListQuery, ReportParams } from '../../schemas/report'
import { findScenario } from '../scenarios/store'
import { EVALUATION_READ, EVALUATION_WRITE } from './evaluations'
import { resultEvaluation } from './answers'
import { findReport, insertReport, listReports, renderReport, reportBytes, ReportGeneratedJob, reportPath } from '../evaluation/reports'

/** Report routes. */
export function reportRoutes(deps: AppDeps) {
  const { sql, cursors } = deps

  return new Elysia({ name: 'reports' })
    .use(accessControl(deps.authenticate))
    .post('/v1/scenarios/:scenarioId/reports', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body: body ?? null, key: idempotencyKeyOf(request) }, async (tx) => {
        if (!(await findScenario(tx, tenantId, params.scenarioId))) throw problems.notFound('scenario')
        const evaluation = await resultEvaluation(tx, tenantId, params.scenarioId, body?.evaluation_id).catch((e) => {
          throw e?.code === 'not_found' && body?.evaluation_id === undefined ? problems.conflict('The case has no succeeded evaluation to report on.') : e
        })
        const row = await insertReport(tx, tenantId, params.scenarioId, evaluation.id)
        await subscribeInline(tx, principal, { tenantId, taskKind: 'report_generated', taskId: row.id, items: body?.notifications })
        await appendCaseEvent(tx, { tenantId, scenarioId: params.scenarioId, type: 'report.status', data: { report_id: row.id, evaluation_id: evaluation.id, status: row.status } })
        await enqueue(tx, ReportGeneratedJob, { tenantId, payload: { scenarioId: params.scenarioId, reportId: row.id } })
        return { status: 202, body: renderReport(row), location: reportPath(params.scenarioId, row.id) }
      })
      return replyWith(set, result) as ReturnType<typeof renderReport>
    }, {
      access: EVALUATION_WRITE,
      params: ScenarioParams,
      body: t.Optional(ReportCreate),
      detail: {
        summary: "Generate a PDF findings report of the case's latest succeeded evaluation (or the one named): 202 and a report_generated task",
        tags: ['Reports'],
        responses: responses({ 202: Report }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict', 'idempotency_conflict']),
      },
    })
    .get('/v1/scenarios/:scenarioId/reports', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(ReportListQuery, query)
      if (!(await findScenario(sql, tenantId, params.scenarioId))) throw problems.notFound('scenario')
      const list = cursors.open(q, cursorScope(tenantId, `reports|${params.scenarioId}`))
      return list.page(await listReports(sql, tenantId, params.scenarioId, list.after, list.limit), (r) => r.id, renderReport)
    }, {
      access: EVALUATION_READ,
      params: ScenarioParams,
      detail: withQuery(ReportListQuery, { summary: 'List the reports of a case, newest first', tags: ['Reports'], responses: responses({ 200: PageOf(Report) }, [...PATH_PROBLEMS, ...LIST_PROBLEMS]) }),
    })
    .get('/v1/scenarios/:scenarioId/reports/:reportId', async ({ principal, params }) => {
      const row = await findReport(sql, tenantOf(principal), params.scenarioId, params.reportId)
      if (!row) throw problems.notFound('report')
      return renderReport(row)
    }, {
      access: EVALUATION_READ,
      params: ReportParams,
      detail: { summary: 'Read a report', tags: ['Reports'], responses: responses({ 200: Report }, PATH_PROBLEMS) },
    })
    .get('/v1/scenarios/:scenarioId/reports/:reportId/download', async ({ principal, params }) => {
      const tenantId = tenantOf(principal)
      const row = await findReport(sql, tenantId, params.scenarioId, params.reportId)
      if (!row) throw problems.notFound('report')
      const bytes = row.status === 'succeeded' ? await reportBytes(sql, tenantId, row.id) : null
      if (!bytes) throw problems.conflict(`The report is ${row.status}; only a succeeded report can be downloaded.`)
      return new Response(bytes, {
        headers: {
          'content-type': 'application/pdf',
          'content-length': String(bytes.byteLength),
          'content-disposition': `attachment; filename="findings-report-${row.id}.pdf"`,
          'cache-control': 'private, no-store',
        },
      })
    }, {
      access: EVALUATION_READ,
      params: ReportParams,
      detail: {
        summary: 'Download the PDF of a succeeded report (application/pdf)',
        tags: ['Reports'],
        responses: { ...responses({}, [...PATH_PROBLEMS, 'conflict']), 200: { description: 'The PDF', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } } },
      },
    })
}
