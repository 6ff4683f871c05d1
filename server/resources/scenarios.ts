/**
 * Scenario (case) routes: create, read one, list. The `scenarios` table is the store's
 * (server/scenarios/store.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE, CASE_WRITERS, tenantOf, type AccessRule } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotentStatement, replyWith } from '../http/idempotency'
import { ScenarioParams, PageOf } from '../../schemas/common'
import { Scenario, ScenarioCreate, ScenarioListQuery } from '../../schemas/scenario'
import { VERTICAL_KEYS } from './verticals'
import { verticalRule } from './tenant-settings'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { findScenario, listScenarios, renderScenario, scenarioCreate } from '../scenarios/store'

/** Who may read one case; the read front (read-front.ts) applies the same rule to the API keys it serves. */
export const SCENARIO_READ_RULE: AccessRule = { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true, breakGlass: true }

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
      // One statement, one round trip: the idempotency record, the case and the answer.
      const result = await runIdempotentStatement(
        { sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) },
        scenarioCreate(sql, tenantId, { name: body.name, externalRef: body.external_ref ?? null, vertical: body.vertical }),
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
      return list.page(await listScenarios(sql, tenantId, q.external_ref, list), (r) => r.id, renderScenario)
    }, {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], breakGlass: true },
      detail: withQuery(ScenarioListQuery, { summary: 'List cases, newest first', tags: ['Scenarios'], responses: responses({ 200: PageOf(Scenario) }, LIST_PROBLEMS) }),
    })
    .get('/v1/scenarios/:scenarioId', async ({ principal, params }) => {
      const row = await findScenario(sql, tenantOf(principal), params.scenarioId)
      if (!row) throw problems.notFound('scenario')
      return renderScenario(row)
    }, {
      access: SCENARIO_READ_RULE,
      params: ScenarioParams,
      detail: { summary: 'Read a case', tags: ['Scenarios'], responses: responses({ 200: Scenario }, PATH_PROBLEMS) },
    })
}
