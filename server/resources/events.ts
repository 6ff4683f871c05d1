/**
 * The case event stream: `GET /v1/scenarios/{scenarioId}/events`, server-sent events of one case,
 * resumable with `Last-Event-ID` (only later events are replayed). The only SSE endpoint: there
 * is no tenant-wide stream (`GET /v1/events` is 404 like any unknown path).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE, tenantOf } from '../auth/access'
import { ProblemError, problems } from '../http/problem'
import { PATH_PROBLEMS, problemResponses } from '../http/docs'
import { ScenarioParams } from '../../schemas/common'
import { findScenario } from '../scenarios/store'

/** The position a reconnecting client resumes after: 0 (everything) without Last-Event-ID. */
function lastEventIdOf(request: Request): number {
  const raw = request.headers.get('last-event-id')
  if (raw === null || raw.trim() === '') return 0
  if (!/^\d{1,15}$/.test(raw.trim())) throw problems.malformed('The Last-Event-ID header must be an event id of this stream (a whole number).')
  return Number(raw.trim())
}

/** Case event routes. */
export function eventRoutes(deps: AppDeps) {
  const { sql, events } = deps
  return new Elysia({ name: 'case-events' })
    .use(accessControl(deps.authenticate))
    .get('/v1/scenarios/:scenarioId/events', async ({ principal, params, request, set, server }) => {
      const tenantId = tenantOf(principal)
      const after = lastEventIdOf(request)
      if (!(await findScenario(sql, tenantId, params.scenarioId))) throw problems.notFound('scenario')
      if (deps.draining() || events.streams.draining) {
        throw new ProblemError('unavailable', 'The server is shutting down; reconnect with Last-Event-ID.', { retryAfterSeconds: 1 })
      }
      const stream = await events.streams.open(tenantId, params.scenarioId, after, request.signal)
      // The stream is quiet between keep-alives: no idle timeout for this request.
      server?.timeout(request, 0)
      return new Response(stream, {
        headers: {
          ...(set.headers as Record<string, string>),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        },
      })
    }, {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true },
      params: ScenarioParams,
      detail: {
        summary: 'Server-sent events of a case (resumable with Last-Event-ID)',
        description: 'Each event: `id` (the case event sequence number), `event` (document.status, evaluation.status, report.status, ...), `data` (JSON with occurred_at). A comment line every 15 seconds keeps the stream alive; the stream ends cleanly when the server drains (reconnect with Last-Event-ID).',
        tags: ['Events'],
        responses: {
          200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...problemResponses([...PATH_PROBLEMS, 'unavailable']),
        },
      },
    })
}
