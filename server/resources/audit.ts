/**
 * GET /v1/audit-events: a workspace's audit chain, newest first (admins). The chain itself is the
 * store's (server/workspaces/audit-store.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, tenantOf } from '../auth/access'
import { readQuery, withQuery } from '../http/query'
import { LIST_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import { AuditEvent, AuditListQuery } from '../../schemas/audit'
import { listAuditEvents, renderAuditEvent } from '../workspaces/audit-store'

/** GET /v1/audit-events: the chain, newest first (admins). */
export function auditRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  return new Elysia({ name: 'audit' })
    .use(accessControl(deps.authenticate))
    .get('/v1/audit-events', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(AuditListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, `audit|${q.kind ?? ''}`))
      return list.page(await listAuditEvents(sql, tenantId, q.kind, list), (r) => String(r.seq), renderAuditEvent)
    }, {
      access: { roles: ['admin'] },
      detail: withQuery(AuditListQuery, { summary: "The workspace's audit chain, newest first", tags: ['Audit'], responses: responses({ 200: PageOf(AuditEvent) }, LIST_PROBLEMS) }),
    })
}
