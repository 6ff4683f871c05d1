/**
 * PDF findings reports of a case: request and response shapes.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, OneOf, named, pageQuery } from './common'
import { InlineNotifications } from './notifications'

/** POST /v1/scenarios/{id}/reports body (optional). */
export const ReportCreate = t.Object({
  evaluation_id: t.Optional(t.String({ format: 'uuid', description: "Default: the case's latest succeeded evaluation" })),
  notifications: InlineNotifications,
})

/** A report as every endpoint returns it. */
export const Report = named('Report', t.Object({
  id: Uuid,
  scenario_id: Uuid,
  evaluation_id: Uuid,
  status: OneOf(['queued', 'running', 'succeeded', 'failed']),
  content_type: t.Literal('application/pdf'),
  size_bytes: t.Optional(Int()),
  page_count: t.Optional(Int()),
  download: t.Optional(t.String({ description: 'The path of the PDF, once succeeded' })),
  error: t.Optional(t.String()),
  created_at: Timestamp,
  completed_at: t.Optional(Timestamp),
  updated_at: Timestamp,
}))

/** GET /v1/scenarios/{id}/reports query. */
export const ReportListQuery = Type.Object({
  ...pageQuery,
})

/** Path parameters naming a report of a case. */
export const ReportParams = t.Object({ scenarioId: Uuid, reportId: Uuid })
