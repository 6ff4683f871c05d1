/**
 * Break-glass: a platform operator's request for access to a workspace. Owns the
 * `break_glass_requests` table. When the workspace's `break_glass_require_tenant_approval` is true
 * a request starts `requested` and waits for one of its admins to approve or deny it; otherwise it
 * is approved when raised. Approval opens an access window of `duration_minutes`, during which the
 * operator reads the workspace's cases, documents, answers and reports through the normal GET
 * routes (server/auth/break-glass-access.ts); an admin (or `svc break-glass revoke`) may revoke the
 * window, which ends it at once. Poll-only: no notification is sent; the workspace discovers
 * requests with GET /v1/break-glass/requests?status=requested. Every step, and every read under a
 * window, is recorded on the workspace's audit chain.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import type { Sql, Tx } from '../db/connect'
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
import { actorOf, appendAudit, type AuditActor } from '../workspaces/audit-store'
import { findTenant } from '../workspaces/tenants-store'
import { readTenantSettings } from './tenant-settings'

/** A row of `break_glass_requests`. */
export interface BreakGlassRow {
  tenant_id: string
  id: string
  operator_sub: string
  reason: string
  duration_minutes: number
  approval_required: boolean
  status: 'requested' | 'approved' | 'denied' | 'revoked'
  decided_by_user_id: string | null
  decided_at: Date | null
  decision_note: string | null
  access_expires_at: Date | null
  revoked_at: Date | null
  revoked_by_user_id: string | null
  created_at: Date
}

/** The API shape of a request. */
export function renderBreakGlass(row: BreakGlassRow) {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    operator_sub: row.operator_sub,
    reason: row.reason,
    duration_minutes: row.duration_minutes,
    approval_required: row.approval_required,
    status: row.status,
    access_active: row.status === 'approved' && row.access_expires_at !== null && row.access_expires_at.getTime() > Date.now(),
    ...(row.access_expires_at ? { access_expires_at: row.access_expires_at.toISOString() } : {}),
    ...(row.decided_at ? { decided_at: row.decided_at.toISOString() } : {}),
    ...(row.decided_by_user_id ? { decided_by_user_id: row.decided_by_user_id } : {}),
    ...(row.decision_note !== null ? { decision_note: row.decision_note } : {}),
    ...(row.revoked_at ? { revoked_at: row.revoked_at.toISOString() } : {}),
    ...(row.revoked_by_user_id ? { revoked_by_user_id: row.revoked_by_user_id } : {}),
    created_at: row.created_at.toISOString(),
  }
}

/**
 * Raises a request for `operatorSub` (routes and `svc break-glass request`). Approved at once
 * unless the workspace requires its own approval.
 */
export async function raiseBreakGlass(sql: Sql, tenantId: string, input: { operatorSub: string; reason: string; durationMinutes: number }, actor: AuditActor): Promise<BreakGlassRow> {
  if (input.reason.trim() === '') throw problems.rule('reason must contain a non-whitespace character.')
  return sql.begin(async (tx) => {
    const { break_glass_require_tenant_approval: required } = await readTenantSettings(tx, tenantId)
    const [row] = await tx<BreakGlassRow[]>`
      insert into break_glass_requests (tenant_id, id, operator_sub, reason, duration_minutes, approval_required, status, decided_at, access_expires_at)
      values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.operatorSub}, ${input.reason}, ${input.durationMinutes}, ${required},
              ${required ? 'requested' : 'approved'},
              ${required ? null : tx`now()`}, ${required ? null : tx`now() + make_interval(mins => ${input.durationMinutes})`})
      returning *`
    await appendAudit(tx, tenantId, 'break_glass.requested', actor, {
      request_id: row!.id, operator_sub: input.operatorSub, reason: input.reason, duration_minutes: input.durationMinutes,
      approval_required: required, status: row!.status,
    })
    return row!
  })
}

/** True while `operatorSub` holds approved, unexpired break-glass access to the workspace. */
export async function hasBreakGlassAccess(sql: Tx, tenantId: string, operatorSub: string): Promise<boolean> {
  const [row] = await sql`
    select 1 from break_glass_requests
    where tenant_id = ${tenantId} and operator_sub = ${operatorSub} and status = 'approved' and access_expires_at > now()
    limit 1`
  return row !== undefined
}

/**
 * Ends an open access window at once (status `revoked`): the next read under it, in any process,
 * finds no grant. 404 for another workspace's request, 409 unless the window is open.
 */
export async function revokeBreakGlass(sql: Sql, tenantId: string, requestId: string, actor: AuditActor, userId: string | null): Promise<BreakGlassRow> {
  return sql.begin(async (tx) => {
    const [current] = await tx<(BreakGlassRow & { open: boolean })[]>`
      select *, (status = 'approved' and access_expires_at > now()) as open
      from break_glass_requests where tenant_id = ${tenantId} and id = ${requestId} for update`
    if (!current) throw problems.notFound('break-glass request')
    if (!current.open) {
      throw problems.conflict(current.status === 'approved'
        ? 'The access window has already lapsed.'
        : `The request is ${current.status}; only an open access window can be revoked.`)
    }
    const [row] = await tx<BreakGlassRow[]>`
      update break_glass_requests set status = 'revoked', revoked_at = now(), revoked_by_user_id = ${userId}, updated_at = now()
      where tenant_id = ${tenantId} and id = ${requestId}
      returning *`
    await appendAudit(tx, tenantId, 'break_glass.revoked', actor, { request_id: requestId, operator_sub: current.operator_sub })
    return row!
  })
}

/** A page of a workspace's requests, newest first, optionally of one status. */
async function listRequests(deps: AppDeps, tenantId: string, raw: Record<string, string | undefined>) {
  const { sql, cursors } = deps
  const q = readQuery(BreakGlassListQuery, raw)
  const list = cursors.open(q, cursorScope(tenantId, `break-glass|${tenantId}|${q.status ?? ''}`))
  const rows = await sql<BreakGlassRow[]>`
    select * from break_glass_requests
    where tenant_id = ${tenantId}
      ${list.after !== null ? sql`and id < ${list.after}` : sql``}
      ${q.status !== undefined ? sql`and status = ${q.status}` : sql``}
    order by id desc
    limit ${list.fetch}`
  return list.page(rows, (r) => r.id, renderBreakGlass)
}

async function findRequest(sql: Tx, tenantId: string, id: string): Promise<BreakGlassRow> {
  const [row] = await sql<BreakGlassRow[]>`select * from break_glass_requests where tenant_id = ${tenantId} and id = ${id}`
  if (!row) throw problems.notFound('break-glass request')
  return row
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
    return sql.begin(async (tx) => {
      const [current] = await tx<BreakGlassRow[]>`
        select * from break_glass_requests where tenant_id = ${tenantId} and id = ${params.requestId} for update`
      if (!current) throw problems.notFound('break-glass request')
      if (current.status !== 'requested') throw problems.conflict(`The request is ${current.status}; only a requested one can be approved or denied.`)
      const [row] = await tx<BreakGlassRow[]>`
        update break_glass_requests set
          status = ${status}, decided_at = now(), decided_by_user_id = ${userId}, decision_note = ${body?.note ?? null},
          access_expires_at = ${status === 'approved' ? tx`now() + make_interval(mins => ${current.duration_minutes})` : null},
          updated_at = now()
        where tenant_id = ${tenantId} and id = ${current.id}
        returning *`
      await appendAudit(tx, tenantId, `break_glass.${status}`, actorOf(principal), { request_id: current.id, operator_sub: current.operator_sub, ...(body?.note ? { note: body.note } : {}) })
      return renderBreakGlass(row!)
    })
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
    .get('/v1/tenants/:tenantId/break-glass/requests/:requestId', async ({ params }) => renderBreakGlass(await findRequest(sql, params.tenantId, params.requestId)), {
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
    .get('/v1/break-glass/requests/:requestId', async ({ principal, params }) => renderBreakGlass(await findRequest(sql, tenantOf(principal), params.requestId)), {
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
