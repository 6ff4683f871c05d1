/**
 * Supersessions of a case: the collection (page, status filter), one supersession, and confirming
 * or dismissing it — a human act (API keys are refused at any scope). Each decision appends a
 * `supersession.status` case event.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE, CASE_WRITERS, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf, ScenarioParams } from '../../schemas/common'
import { Supersession, SupersessionDecision, SupersessionListQuery, SupersessionParams } from '../../schemas/authoring'
import { findScenario } from '../scenarios/store'
import { decideSupersession, findSupersession, listSupersessions, renderSupersession } from '../authoring/supersessions'

const TAGS = ['Supersessions']
const READ = { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write'], embed: true, breakGlass: true } as const
const DECIDE = { roles: CASE_WRITERS, humanOnly: true } as const

/** Supersession routes. */
export function supersessionRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  const decide = (status: 'confirmed' | 'dismissed') => async ({ principal, params, body }: { principal: Parameters<typeof tenantOf>[0]; params: { scenarioId: string; supersessionId: string }; body: { note?: string } | null | undefined }) => {
    const tenantId = tenantOf(principal)
    return sql.begin(async (tx) => {
      const row = await findSupersession(tx, tenantId, params.scenarioId, params.supersessionId, true)
      if (!row) throw problems.notFound('supersession')
      if (row.status !== 'pending_review') throw problems.conflict(`The supersession is already ${row.status}.`)
      return renderSupersession(await decideSupersession(tx, row, status, principal.kind === 'user' ? principal.userId : '', body?.note))
    })
  }
  return new Elysia({ name: 'supersessions' })
    .use(accessControl(deps.authenticate))
    .get('/v1/scenarios/:scenarioId/supersessions', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(SupersessionListQuery, query)
      if (!(await findScenario(sql, tenantId, params.scenarioId))) throw problems.notFound('scenario')
      const list = cursors.open(q, cursorScope(tenantId, `supersessions|${params.scenarioId}|${q.status ?? ''}`))
      return list.page(await listSupersessions(sql, tenantId, params.scenarioId, q.status, list), (r) => r.id, renderSupersession)
    }, {
      access: READ,
      params: ScenarioParams,
      detail: withQuery(SupersessionListQuery, { summary: 'The supersessions of a case, newest first', tags: TAGS, responses: responses({ 200: PageOf(Supersession) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/scenarios/:scenarioId/supersessions/:supersessionId', async ({ principal, params }) => {
      const row = await findSupersession(sql, tenantOf(principal), params.scenarioId, params.supersessionId)
      if (!row) throw problems.notFound('supersession')
      return renderSupersession(row)
    }, {
      access: READ,
      params: SupersessionParams,
      detail: { summary: 'Read a supersession', tags: TAGS, responses: responses({ 200: Supersession }, PATH_PROBLEMS) },
    })
    .post('/v1/scenarios/:scenarioId/supersessions/:supersessionId/confirm', decide('confirmed'), {
      access: DECIDE,
      params: SupersessionParams,
      body: t.Optional(SupersessionDecision),
      detail: { summary: 'Confirm a supersession (human-only: API keys are refused)', tags: TAGS, responses: responses({ 200: Supersession }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
    .post('/v1/scenarios/:scenarioId/supersessions/:supersessionId/dismiss', decide('dismissed'), {
      access: DECIDE,
      params: SupersessionParams,
      body: t.Optional(SupersessionDecision),
      detail: { summary: 'Dismiss a supersession (human-only: API keys are refused)', tags: TAGS, responses: responses({ 200: Supersession }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
}
