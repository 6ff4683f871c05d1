/**
 * The notification envelope: rendered once per delivery, in a fixed key order, and stored as the
 * exact bytes every attempt sends. Never carries document content: only identifiers, the outcome
 * row of the table and links.
 */
import type { EventType, TaskKind } from './outcomes'

/** Bases of the envelope's links (SVC_BASE_URL and SVC_UI_BASE_URL). */
export interface LinkBases { baseUrl: string | undefined; uiBaseUrl: string | undefined }

/** The link bases of a configuration, without trailing slashes (AppDeps.links). */
export function linkBases(config: { baseUrl?: string; uiBaseUrl?: string }): LinkBases {
  return { baseUrl: config.baseUrl?.replace(/\/+$/, ''), uiBaseUrl: config.uiBaseUrl?.replace(/\/+$/, '') }
}

/**
 * links.resource and links.ui of a task: the REST path under the public API base, and the same path
 * (without /v1) under the web application base. Either is empty when its base is not configured.
 */
export function taskLinks(resourcePath: string, bases: LinkBases): { resource: string; ui: string } {
  const base = bases.baseUrl
  const ui = bases.uiBaseUrl
  return {
    resource: base ? `${base}${resourcePath}` : '',
    ui: ui ? `${ui}${resourcePath.replace(/^\/v1(?=\/)/, '')}` : '',
  }
}

/** The fields of one envelope. */
export interface EnvelopeFields {
  deliveryId: string
  eventType: EventType
  taskKind: TaskKind
  taskId: string
  tenantId: string
  occurredAt: Date
  outcome: { status: 'succeeded' | 'failed'; summary: string; errorCode: string | null }
  links: { resource: string; ui: string }
}

/** The envelope as the JSON text every attempt sends; sent_at equals occurred_at (spec). */
export function renderEnvelope(f: EnvelopeFields): string {
  const at = f.occurredAt.toISOString()
  return JSON.stringify({
    schema_version: 1,
    delivery_id: f.deliveryId,
    event_type: f.eventType,
    task_kind: f.taskKind,
    task_id: f.taskId,
    tenant_id: f.tenantId,
    occurred_at: at,
    sent_at: at,
    outcome: { status: f.outcome.status, summary: f.outcome.summary, error_code: f.outcome.errorCode },
    links: { resource: f.links.resource, ui: f.links.ui },
  })
}
