/**
 * Health: /healthz answers while the process is up; /readyz only when the database answers, the
 * migrations are applied and the process is not draining.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl } from '../auth/access'
import { ProblemError } from '../http/problem'
import { responses } from '../http/docs'

const Health = t.Object({ status: t.Literal('ok') })

/** GET /healthz and GET /readyz (outside /v1, no credential). */
export function healthRoutes(deps: AppDeps) {
  return new Elysia({ name: 'health' })
    .use(accessControl(deps.authenticate))
    .get('/healthz', () => ({ status: 'ok' as const }), {
      access: { public: true },
      detail: { summary: 'Process is up', tags: ['Health'], responses: responses({ 200: Health }) },
    })
    .get('/readyz', async () => {
      let ok = false
      if (!deps.draining()) {
        try { ok = await deps.ready() } catch { ok = false }
      }
      if (!ok) throw new ProblemError('unavailable', 'The service is not ready to take requests.', { retryAfterSeconds: 5 })
      return { status: 'ok' as const }
    }, {
      access: { public: true },
      detail: { summary: 'Database reachable and migrations applied', tags: ['Health'], responses: responses({ 200: Health }, ['unavailable']) },
    })
}
