/**
 * Scenarios (cases): create, read one, list. Owns the `scenarios` table.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, ANY_ROLE, CASE_WRITERS, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { ScenarioParams, PageOf } from '../../schemas/common'
import { Scenario, ScenarioCreate, ScenarioListQuery } from '../../schemas/scenario'
import { VERTICAL_KEYS } from './verticals'
import { verticalForNew } from '../workspaces/settings-store'
import { verticalRule } from './tenant-settings'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'

/** A row of `scenarios`. */
export interface ScenarioRow {
  id: string
  name: string
  external_ref: string | null
  status: string
  vertical: string | null
  created_at: Date
  updated_at: Date
}

/** The API shape of a scenario; optional fields are absent when unset. */
export function renderScenario(row: ScenarioRow) {
  return {
    id: row.id,
    name: row.name,
    ...(row.external_ref !== null ? { external_ref: row.external_ref } : {}),
    status: row.status,
    ...(row.vertical !== null ? { vertical: row.vertical } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** Reads one scenario of a workspace, or null (absent and foreign look the same). */
export async function findScenario(sql: Tx, tenantId: string, scenarioId: string): Promise<ScenarioRow | null> {
  const [row] = await sql<ScenarioRow[]>`
    select id, name, external_ref, status, vertical, created_at, updated_at
    from scenarios
    where tenant_id = ${tenantId} and id = ${scenarioId}`
  return row ?? null
}

/** Scenario routes. */
export function scenarioRoutes(deps: AppDeps) {
  const { sql, cursors } = deps

  return new Elysia({ name: 'scenarios' })
    .use(accessControl(deps.authenticate))
    .post('/v1/scenarios', async ({ principal, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if (body.name.trim() === '') throw problems.rule('name must contain a non-whitespace character.')
      if (typeof body.vertical === 'string' && !VERTICAL_KEYS.includes(body.vertical)) {
        throw problems.schema([{ pointer: '/vertical', message: verticalRule() }])
      }
      const result = await runIdempotent(
        { sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) },
        async (tx) => {
          const vertical = await verticalForNew(tx, tenantId, body.vertical)
          const [row] = await tx<ScenarioRow[]>`
            insert into scenarios (tenant_id, id, name, external_ref, vertical)
            values (${tenantId}, ${Bun.randomUUIDv7()}, ${body.name}, ${body.external_ref ?? null}, ${vertical})
            returning id, name, external_ref, status, vertical, created_at, updated_at`
          return { status: 201, body: renderScenario(row!), location: `/v1/scenarios/${row!.id}` }
        },
      )
      return replyWith(set, result) as ReturnType<typeof renderScenario>
    }, {
      access: { roles: CASE_WRITERS, scopes: ['scenarios:write'] },
      body: ScenarioCreate,
      detail: { summary: 'Create a case', tags: ['Scenarios'], responses: responses({ 201: Scenario }, [...BODY_PROBLEMS, 'idempotency_conflict', 'conflict']) },
    })
    .get('/v1/scenarios', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(ScenarioListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, `scenarios|${q.external_ref ?? ''}`))
      const rows = await sql<ScenarioRow[]>`
        select id, name, external_ref, status, vertical, created_at, updated_at
        from scenarios
        where tenant_id = ${tenantId}
          ${list.after !== null ? sql`and id < ${list.after}` : sql``}
          ${q.external_ref !== undefined ? sql`and external_ref = ${q.external_ref}` : sql``}
        order by id desc
        limit ${list.fetch}`
      return list.page(rows, (r) => r.id, renderScenario)
    }, {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], breakGlass: true },
      detail: withQuery(ScenarioListQuery, { summary: 'List cases, newest first', tags: ['Scenarios'], responses: responses({ 200: PageOf(Scenario) }, LIST_PROBLEMS) }),
    })
    .get('/v1/scenarios/:scenarioId', async ({ principal, params }) => {
      const row = await findScenario(sql, tenantOf(principal), params.scenarioId)
      if (!row) throw problems.notFound('scenario')
      return renderScenario(row)
    }, {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true, breakGlass: true },
      params: ScenarioParams,
      detail: { summary: 'Read a case', tags: ['Scenarios'], responses: responses({ 200: Scenario }, PATH_PROBLEMS) },
    })
}
