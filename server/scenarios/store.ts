/**
 * The store of scenarios (cases): owns the `scenarios` table. Used by the case routes
 * (server/resources/scenarios.ts) and every domain that hangs off a case (documents, evaluations,
 * reports, supersessions).
 */
import type { Sql, Tx } from '../db/connect'
import type { PageWindow } from '../http/pagination'
import type { OneStatementCreate } from '../http/idempotency'
import { verticalForNewSql } from '../workspaces/settings-store'
import { scenarioTable } from './partition'

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

/**
 * Reads one scenario of a workspace, or null (absent and foreign look the same). It reads the
 * case's own partition (see partition.ts): the parent table's lookup is re-planned on every execution.
 */
export async function findScenario(sql: Tx, tenantId: string, scenarioId: string): Promise<ScenarioRow | null> {
  const [row] = await sql<ScenarioRow[]>`
    select id, name, external_ref, status, vertical, created_at, updated_at
    from ${sql(scenarioTable(scenarioId))}
    where tenant_id = ${tenantId} and id = ${scenarioId}`
  return row ?? null
}

/** Creates a case of a workspace (its vertical already resolved) and returns it. */
export async function createScenario(tx: Tx, tenantId: string, input: { name: string; externalRef: string | null; vertical: string | null }): Promise<ScenarioRow> {
  const [row] = await tx<ScenarioRow[]>`
    insert into scenarios (tenant_id, id, name, external_ref, vertical)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${input.name}, ${input.externalRef}, ${input.vertical})
    returning id, name, external_ref, status, vertical, created_at, updated_at`
  return row!
}

/**
 * A case create as one statement (see runIdempotentStatement): the row is made here (id and
 * timestamps from this process's clock, as the time-ordered id already is), the vertical resolved
 * in the statement (the request's, else the workspace default), and the response body is the
 * rendered case with that vertical spliced in, so the stored replay is the very same text.
 */
export function scenarioCreate(sql: Sql, tenantId: string, input: { name: string; externalRef: string | null; vertical: string | null | undefined }): OneStatementCreate {
  const id = Bun.randomUUIDv7()
  const at = new Date()
  const vertical = verticalForNewSql(sql, tenantId, input.vertical)
  const text = JSON.stringify(renderScenario({ id, name: input.name, external_ref: input.externalRef, status: 'created', vertical: null, created_at: at, updated_at: at }))
  // The timestamps are the last members (renderScenario's order), after where a vertical goes.
  const cut = text.lastIndexOf(',"created_at":')
  return {
    status: 201,
    location: `/v1/scenarios/${id}`,
    bodyText: sql`${text.slice(0, cut)}::text || coalesce(',"vertical":' || to_json(${vertical})::text, '') || ${text.slice(cut)}::text`,
    work: (claimed) => sql`
      insert into scenarios (tenant_id, id, name, external_ref, vertical, status, created_at, updated_at)
      select ${tenantId}, ${id}, ${input.name}, ${input.externalRef}, ${vertical}, 'created', ${at}, ${at}
      where ${claimed}`,
  }
}

/** One page of a workspace's cases, newest first, optionally of one exact `external_ref` (rows of `window`). */
export async function listScenarios(sql: Tx, tenantId: string, externalRef: string | undefined, window: PageWindow): Promise<ScenarioRow[]> {
  return sql<ScenarioRow[]>`
    select id, name, external_ref, status, vertical, created_at, updated_at
    from scenarios
    where tenant_id = ${tenantId}
      ${window.after !== null ? sql`and id < ${window.after}` : sql``}
      ${externalRef !== undefined ? sql`and external_ref = ${externalRef}` : sql``}
    order by id desc
    limit ${window.fetch}`
}

/**
 * Sets the case status after an evaluation of it ended (the case's status follows its evaluations): still `evaluating` while another of its
 * evaluations is queued or running; otherwise `evaluated` after a success, `evaluation_failed`
 * after a failure, and after a cancel `evaluated` if the case has a succeeded evaluation, else
 * `created`.
 */
export async function settleCaseStatus(tx: Tx, tenantId: string, scenarioId: string, ended: 'succeeded' | 'failed' | 'canceled'): Promise<void> {
  await tx`
    update ${tx(scenarioTable(scenarioId))} set updated_at = now(), status = case
      when exists (select 1 from evaluations e where e.tenant_id = ${tenantId} and e.scenario_id = ${scenarioId} and e.status in ('queued', 'running')) then 'evaluating'
      when ${ended} = 'succeeded' then 'evaluated'
      when ${ended} = 'failed' then 'evaluation_failed'
      when exists (select 1 from evaluations e where e.tenant_id = ${tenantId} and e.scenario_id = ${scenarioId} and e.status = 'succeeded') then 'evaluated'
      else 'created' end
    where tenant_id = ${tenantId} and id = ${scenarioId}`
}

/** Marks a case `evaluating` (an evaluation of it was queued). */
export async function markCaseEvaluating(tx: Tx, tenantId: string, scenarioId: string): Promise<void> {
  await tx`update ${tx(scenarioTable(scenarioId))} set status = 'evaluating', updated_at = now() where tenant_id = ${tenantId} and id = ${scenarioId}`
}
