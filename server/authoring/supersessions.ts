/**
 * Supersessions and directive review. When a version of a question set is published (called from
 * the question_set_publish job in the transaction that marks it published), every case whose latest
 * succeeded evaluation of that set pinned an older version is checked: a question the case answered
 * that the new version changed or dropped gets a supersession `{question_key, old, new, status:
 * pending_review}`; a supersession a person confirmed whose new question has no analog (same key) in
 * the newly published version raises a new one (reason no_analog). Each new supersession appends a
 * `supersession.status` case event and ends a `directive_review` task (always task.completed,
 * task_id = the supersession id, links.resource = the case's supersession collection).
 *
 * Subscribing: the supersession id is not known in advance, so a directive_review subscription may
 * name the case (task_id = the scenario id) or the question set (task_id = its id); each new
 * supersession gets a copy of those subscriptions (identical resources with task_id = its id), and
 * its notification goes to them. Owns `supersessions`.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import { finishTask } from '../notifications/finish'
import { appendCaseEvent } from '../events/log'
import { createSubscription } from '../notifications/subscriptions'
import type { Question } from '../evaluation/engine'
import { findVersionById } from '../question-sets/store'

/** A row of `supersessions`. */
export interface SupersessionRow {
  tenant_id: string
  id: string
  scenario_id: string
  question_set_id: string
  evaluation_id: string | null
  old_version_id: string
  new_version_id: string
  question_key: string
  reason: 'changed' | 'dropped' | 'no_analog'
  old_question: Question | null
  new_question: Question | null
  answer_value: unknown
  origin_supersession_id: string | null
  status: 'pending_review' | 'confirmed' | 'dismissed'
  decided_by_user_id: string | null
  decided_at: Date | null
  note: string | null
  created_at: Date
  updated_at: Date
}

/** The REST path of a case's supersessions (links.resource of directive_review). */
export const supersessionsPath = (scenarioId: string) => `/v1/scenarios/${scenarioId}/supersessions`

/** The API shape of a supersession. */
export function renderSupersession(r: SupersessionRow) {
  return {
    id: r.id,
    scenario_id: r.scenario_id,
    question_set_id: r.question_set_id,
    ...(r.evaluation_id !== null ? { evaluation_id: r.evaluation_id } : {}),
    question_key: r.question_key,
    reason: r.reason,
    old: r.old_question,
    new: r.new_question,
    old_version_id: r.old_version_id,
    new_version_id: r.new_version_id,
    ...(r.answer_value !== null && r.answer_value !== undefined ? { answer_value: r.answer_value } : {}),
    ...(r.origin_supersession_id !== null ? { origin_supersession_id: r.origin_supersession_id } : {}),
    status: r.status,
    ...(r.decided_at !== null ? { decided_at: r.decided_at.toISOString() } : {}),
    ...(r.note !== null ? { note: r.note } : {}),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  }
}

/** The data of a supersession.status case event. */
export const supersessionEvent = (r: SupersessionRow) =>
  ({ supersession_id: r.id, question_key: r.question_key, reason: r.reason, status: r.status, new_version_id: r.new_version_id })

/** Reads one supersession of a case, or null; `lock` holds its row for update (a decision). */
export async function findSupersession(sql: Tx, tenantId: string, scenarioId: string, id: string, lock = false): Promise<SupersessionRow | null> {
  const [row] = await sql<SupersessionRow[]>`
    select * from supersessions where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and id = ${id}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** One page of a case's supersessions, newest first, optionally of one status (rows of `window`). */
export async function listSupersessions(sql: Tx, tenantId: string, scenarioId: string, status: string | undefined, window: { after: string | null; fetch: number }): Promise<SupersessionRow[]> {
  return sql<SupersessionRow[]>`
    select * from supersessions where tenant_id = ${tenantId} and scenario_id = ${scenarioId}
    ${window.after !== null ? sql`and id < ${window.after}` : sql``} ${status !== undefined ? sql`and status = ${status}` : sql``}
    order by id desc limit ${window.fetch}`
}

const same = (a: Question, b: Question) =>
  a.text === b.text && a.criticality === b.criticality && a.answer_type === b.answer_type && a.fact_path === b.fact_path && a.accept === b.accept && a.guidance === b.guidance

/** Records one supersession (once per case, version, key and reason), its event and its notification. */
async function raise(tx: Tx, links: LinkBases, input: Omit<SupersessionRow, 'id' | 'status' | 'decided_by_user_id' | 'decided_at' | 'note' | 'created_at' | 'updated_at'>): Promise<SupersessionRow | null> {
  const [row] = await tx<SupersessionRow[]>`
    insert into supersessions (tenant_id, id, scenario_id, question_set_id, evaluation_id, old_version_id, new_version_id, question_key, reason,
      old_question, new_question, answer_value, origin_supersession_id)
    values (${input.tenant_id}, ${Bun.randomUUIDv7()}, ${input.scenario_id}, ${input.question_set_id}, ${input.evaluation_id}, ${input.old_version_id},
      ${input.new_version_id}, ${input.question_key}, ${input.reason}, ${input.old_question ? tx.json(input.old_question as never) : null},
      ${input.new_question ? tx.json(input.new_question as never) : null}, ${input.answer_value === null || input.answer_value === undefined ? null : tx.json(input.answer_value as never)},
      ${input.origin_supersession_id})
    on conflict (tenant_id, scenario_id, new_version_id, question_key, reason) do nothing
    returning *`
  if (!row) return null
  await appendCaseEvent(tx, { tenantId: row.tenant_id, scenarioId: row.scenario_id, type: 'supersession.status', data: supersessionEvent(row) })
  const watchers = await tx<{ channel: 'email' | 'webhook'; email_address: string | null; webhook_url: string | null }[]>`
    select channel, email_address, webhook_url from task_notification_subscriptions
    where tenant_id = ${row.tenant_id} and task_kind = 'directive_review' and task_id in (${row.scenario_id}, ${row.question_set_id}) and status = 'active'
    order by id`
  for (const w of watchers) {
    await createSubscription(tx, row.tenant_id, {
      taskKind: 'directive_review', taskId: row.id, channel: w.channel,
      ...(w.channel === 'email' ? { email: { address: w.email_address! } } : { webhook: { url: w.webhook_url! } }),
    })
  }
  await finishTask(tx, {
    links, tenantId: row.tenant_id, taskKind: 'directive_review', taskId: row.id, resourcePath: supersessionsPath(row.scenario_id),
    result: 'succeeded', noAnalog: row.reason === 'no_analog',
  })
  return row
}

/** Raises the supersessions of a newly published version (see the file comment); returns them. */
export async function raiseSupersessions(tx: Tx, links: LinkBases, tenantId: string, questionSetId: string, versionId: string): Promise<SupersessionRow[]> {
  const version = await findVersionById(tx, tenantId, versionId)
  if (!version) return []
  const next = new Map(version.questions.map((q) => [q.key, q]))
  const raised: SupersessionRow[] = []
  const latest = await tx<{ id: string; scenario_id: string; question_set_version_id: string }[]>`
    select distinct on (scenario_id) id, scenario_id, question_set_version_id
    from evaluations
    where tenant_id = ${tenantId} and question_set_id = ${questionSetId} and status = 'succeeded'
    order by scenario_id, id desc`
  for (const e of latest) {
    if (e.question_set_version_id === versionId) continue
    const old = await findVersionById(tx, tenantId, e.question_set_version_id)
    if (!old || old.number > version.number) continue
    const answered = await tx<{ question_key: string; value: unknown }[]>`
      select question_key, value from evaluation_answers
      where tenant_id = ${tenantId} and evaluation_id = ${e.id} and status = 'answered' order by position`
    for (const a of answered) {
      const before = old.questions.find((q) => q.key === a.question_key)
      if (!before) continue
      const after = next.get(a.question_key) ?? null
      if (after && same(before, after)) continue
      // Already raised for this answer with the same new question (a later publish changed nothing more).
      const [seen] = await tx`
        select 1 from supersessions
        where tenant_id = ${tenantId} and scenario_id = ${e.scenario_id} and evaluation_id = ${e.id} and question_key = ${a.question_key}
          and reason <> 'no_analog' and new_question is not distinct from ${after ? tx.json(after as never) : null}::jsonb`
      if (seen) continue
      const row = await raise(tx, links, {
        tenant_id: tenantId, scenario_id: e.scenario_id, question_set_id: questionSetId, evaluation_id: e.id, old_version_id: old.id,
        new_version_id: versionId, question_key: a.question_key, reason: after ? 'changed' : 'dropped', old_question: before, new_question: after,
        answer_value: a.value, origin_supersession_id: null,
      })
      if (row) raised.push(row)
    }
  }
  const confirmed = await tx<SupersessionRow[]>`
    select * from supersessions
    where tenant_id = ${tenantId} and question_set_id = ${questionSetId} and status = 'confirmed'
      and new_question is not null and new_version_id <> ${versionId}`
  for (const s of confirmed) {
    if (next.has(s.question_key)) continue
    const row = await raise(tx, links, {
      tenant_id: tenantId, scenario_id: s.scenario_id, question_set_id: questionSetId, evaluation_id: s.evaluation_id, old_version_id: s.new_version_id,
      new_version_id: versionId, question_key: s.question_key, reason: 'no_analog', old_question: s.new_question, new_question: null,
      answer_value: s.answer_value, origin_supersession_id: s.id,
    })
    if (row) raised.push(row)
  }
  return raised
}

/** Confirms or dismisses a pending supersession (a person's act) in the caller's transaction; 409 once decided. */
export async function decideSupersession(tx: Tx, row: SupersessionRow, status: 'confirmed' | 'dismissed', userId: string, note: string | undefined): Promise<SupersessionRow> {
  const [updated] = await tx<SupersessionRow[]>`
    update supersessions set status = ${status}, decided_by_user_id = ${userId}, decided_at = now(), note = ${note ?? null}, updated_at = now()
    where tenant_id = ${row.tenant_id} and id = ${row.id}
    returning *`
  await appendCaseEvent(tx, { tenantId: row.tenant_id, scenarioId: row.scenario_id, type: 'supersession.status', data: supersessionEvent(updated!) })
  return updated!
}
