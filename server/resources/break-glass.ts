/**
 * Break-glass routes: the operator side per workspace (raise, list, read) and the workspace admins'
 * side (list, read, approve, deny, revoke). What a request is, and the `break_glass_requests`
 * table, are the store's (server/workspaces/break-glass-store.ts).
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import { TenantParams } from '../../schemas/user'
import {
  BreakGlassCreate, BreakGlassDecision, BreakGlassListQuery, BreakGlassParams, BreakGlassRequest, TenantBreakGlassParams,
} from '../../schemas/break-glass'
import { actorOf } from '../workspaces/audit-store'
import { findTenant } from '../workspaces/tenants-store'
import {
  decideBreakGlass, findBreakGlassRequest, listBreakGlassRequests, raiseBreakGlass, renderBreakGlass, revokeBreakGlass,
} from '../workspaces/break-glass-store'

/** A page of a workspace's requests, newest first, optionally of one status. */
async function listRequests(deps: AppDeps, tenantId: string, raw: Record<string, string | undefined>) {
  const { sql, cursors } = deps
  const q = readQuery(BreakGlassListQuery, raw)
  const list = cursors.open(q, cursorScope(tenantId, `break-glass|${tenantId}|${q.status ?? ''}`))
  return list.page(await listBreakGlassRequests(sql, tenantId, q.status, list), (r) => r.id, renderBreakGlass)
}

/** Break-glass routes: the operator side per workspace, and the workspace admins' side. */
export function breakGlassRoutes(deps: AppDeps) {
  const { sql } = deps
  const operators = { operator: true } as const
  const admins = { roles: ['admin'], humanOnly: true } as const

  const decide = (status: 'approved' | 'denied') => async ({ principal, params, body }: {
    principal: Parameters<typeof actorOf>[0]; params: { requestId: string }; body: { note?: string } | null | undefined
  }) => {
    const tenantId = tenantOf(principal)
    const userId = principal.kind === 'user' ? principal.userId : null
    return renderBreakGlass(await decideBreakGlass(sql, tenantId, params.requestId, status, { userId, note: body?.note }, actorOf(principal)))
  }

  return new Elysia({ name: 'break-glass' })
    .use(accessControl(deps.authenticate))
    .post('/v1/tenants/:tenantId/break-glass/requests', async ({ principal, params, body, set }) => {
      const tenant = await findTenant(sql, params.tenantId)
      if (!tenant) throw problems.notFound('workspace')
      const sub = principal.kind === 'operator' || principal.kind === 'user' ? principal.sub : ''
      const row = await raiseBreakGlass(sql, tenant.id, { operatorSub: sub, reason: body.reason, durationMinutes: body.duration_minutes ?? 60 }, actorOf(principal))
      set.status = 201
      set.headers.location = `/v1/tenants/${tenant.id}/break-glass/requests/${row.id}`
      return renderBreakGlass(row)
    }, {
      access: operators,
      params: TenantParams,
      body: BreakGlassCreate,
      detail: {
        summary: 'Raise a break-glass request for a workspace (operators)',
        description: 'Starts requested when the workspace requires its own approval (break_glass_require_tenant_approval), approved otherwise. No notification is sent: the workspace polls.',
        tags: ['Break-glass'],
        responses: responses({ 201: BreakGlassRequest }, [...PATH_PROBLEMS, ...BODY_PROBLEMS]),
      },
    })
    .get('/v1/tenants/:tenantId/break-glass/requests', async ({ params, query }) => {
      const tenant = await findTenant(sql, params.tenantId)
      if (!tenant) throw problems.notFound('workspace')
      return listRequests(deps, tenant.id, query)
    }, {
      access: operators,
      params: TenantParams,
      detail: withQuery(BreakGlassListQuery, { summary: "A workspace's break-glass requests (operators)", tags: ['Break-glass'], responses: responses({ 200: PageOf(BreakGlassRequest) }, [...PATH_PROBLEMS, ...LIST_PROBLEMS]) }),
    })
    .get('/v1/tenants/:tenantId/break-glass/requests/:requestId', async ({ params }) => renderBreakGlass(await findBreakGlassRequest(sql, params.tenantId, params.requestId)), {
      access: operators,
      params: TenantBreakGlassParams,
      detail: { summary: 'One break-glass request (operators)', tags: ['Break-glass'], responses: responses({ 200: BreakGlassRequest }, PATH_PROBLEMS) },
    })
    .get('/v1/break-glass/requests', ({ principal, query }) => listRequests(deps, tenantOf(principal), query), {
      access: admins,
      detail: withQuery(BreakGlassListQuery, {
        summary: "Operator access requests for the workspace (poll-only; filter status=requested)",
        tags: ['Break-glass'],
        responses: responses({ 200: PageOf(BreakGlassRequest) }, LIST_PROBLEMS),
      }),
    })
    .get('/v1/break-glass/requests/:requestId', async ({ principal, params }) => renderBreakGlass(await findBreakGlassRequest(sql, tenantOf(principal), params.requestId)), {
      access: admins,
      params: BreakGlassParams,
      detail: { summary: 'One operator access request', tags: ['Break-glass'], responses: responses({ 200: BreakGlassRequest }, PATH_PROBLEMS) },
    })
    .post('/v1/break-glass/requests/:requestId/approve', decide('approved'), {
      access: admins,
      params: BreakGlassParams,
      body: t.Optional(BreakGlassDecision),
      detail: { summary: 'Approve a requested operator access (admins, human-only)', tags: ['Break-glass'], responses: responses({ 200: BreakGlassRequest }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
    .post('/v1/break-glass/requests/:requestId/deny', decide('denied'), {
      access: admins,
      params: BreakGlassParams,
      body: t.Optional(BreakGlassDecision),
      detail: { summary: 'Deny a requested operator access (admins, human-only)', tags: ['Break-glass'], responses: responses({ 200: BreakGlassRequest }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
    .post('/v1/break-glass/requests/:requestId/revoke', async ({ principal, params }) => {
      const row = await revokeBreakGlass(sql, tenantOf(principal), params.requestId, actorOf(principal), principal.kind === 'user' ? principal.userId : null)
      return renderBreakGlass(row)
    }, {
      access: admins,
      params: BreakGlassParams,
      detail: {
        summary: "Revoke an operator's open access window (admins, human-only)",
        description: 'Ends the window at once: the operator\'s next read, in any process, is 403. 409 unless the window is open.',
        tags: ['Break-glass'],
        responses: responses({ 200: BreakGlassRequest }, [...PATH_PROBLEMS, 'conflict']),
      },
    })
}
