/**
 * Synthetic tasks for notification tests: a row of the task kind's own table (with the parents its
 * keys need), still running, so a subscription may name it. The product creates these through its
 * routes; the notification tests only need a task id the subscription route accepts.
 */
import type { Sql } from '../../server/db/connect'
import type { TaskKind } from '../../server/notifications/outcomes'

const uuid = () => Bun.randomUUIDv7()

/** Inserts a running task of `kind` with id `id` (new by default) in a workspace; returns its id and REST path. */
export async function seedTask(sql: Sql, tenantId: string, kind: TaskKind, id: string = uuid()): Promise<{ id: string; path: string }> {
  const scenario = async () => {
    const sid = uuid()
    await sql`insert into scenarios (tenant_id, id, name) values (${tenantId}, ${sid}, 'synthetic')`
    return sid
  }
  const questionSet = async () => {
    const qs = uuid()
    await sql`insert into question_sets (tenant_id, id, name) values (${tenantId}, ${qs}, 'synthetic')`
    return qs
  }
  const version = async (qs: string, vid = uuid()) => {
    await sql`insert into question_set_versions (tenant_id, id, question_set_id, number, questions)
              values (${tenantId}, ${vid}, ${qs}, (select coalesce(max(number), 0) + 1 from question_set_versions where tenant_id = ${tenantId} and question_set_id = ${qs}), '[]')`
    return vid
  }
  const evaluation = async (sid: string, eid = uuid(), status = 'running') => {
    const qs = await questionSet()
    const v = await version(qs)
    await sql`insert into evaluations (tenant_id, id, scenario_id, question_set_id, question_set_version_id, status, engine)
              values (${tenantId}, ${eid}, ${sid}, ${qs}, ${v}, ${status}, 'builtin')`
    return eid
  }
  const guideline = async (gid = uuid()) => {
    const group = uuid()
    await sql`insert into question_groups (tenant_id, id, name) values (${tenantId}, ${group}, 'synthetic')`
    await sql`insert into guidelines (tenant_id, id, question_group_id, filename, content_type, size_bytes, status)
              values (${tenantId}, ${gid}, ${group}, 'g.txt', 'text/plain', 1, 'processing')`
    return { group, id: gid }
  }
  switch (kind) {
    case 'document_ingestion': {
      const sid = await scenario()
      await sql`insert into documents (tenant_id, id, scenario_id, filename, content_type, size_bytes, status)
                values (${tenantId}, ${id}, ${sid}, 'd.txt', 'text/plain', 1, 'processing')`
      return { id, path: `/v1/scenarios/${sid}/documents/${id}` }
    }
    case 'guideline_ingestion': {
      const g = await guideline(id)
      return { id, path: `/v1/question-groups/${g.group}/guidelines/${id}` }
    }
    case 'evaluation_run': {
      const sid = await scenario()
      await evaluation(sid, id)
      return { id, path: `/v1/scenarios/${sid}/evaluations/${id}` }
    }
    case 'report_generated': {
      const sid = await scenario()
      const eid = await evaluation(sid, uuid(), 'succeeded')
      await sql`insert into reports (tenant_id, id, scenario_id, evaluation_id, status) values (${tenantId}, ${id}, ${sid}, ${eid}, 'running')`
      return { id, path: `/v1/scenarios/${sid}/reports/${id}` }
    }
    case 'question_set_publish': {
      const qs = await questionSet()
      await version(qs, id)
      await sql`update question_set_versions set status = 'publishing' where tenant_id = ${tenantId} and id = ${id}`
      return { id, path: `/v1/question-sets/${qs}/versions/${id}` }
    }
    case 'generation_run': {
      const qs = await questionSet()
      await sql`insert into generation_runs (tenant_id, id, question_set_id, guideline_ids, generator, status)
                values (${tenantId}, ${id}, ${qs}, '{}', 'builtin', 'running')`
      return { id, path: `/v1/question-sets/${qs}/generation-runs/${id}` }
    }
    case 'diff_run': {
      const qs = await questionSet()
      const v = await version(qs)
      const a = await guideline()
      const b = await guideline()
      await sql`insert into diff_runs (tenant_id, id, question_set_id, guideline_id, previous_guideline_id, base_version_id, status)
                values (${tenantId}, ${id}, ${qs}, ${b.id}, ${a.id}, ${v}, 'running')`
      return { id, path: `/v1/question-sets/${qs}/diff-runs/${id}` }
    }
    case 'structure_task': {
      const qs = await questionSet()
      const v = await version(qs)
      await sql`insert into structure_tasks (tenant_id, id, question_set_id, version_id, question_key, status)
                values (${tenantId}, ${id}, ${qs}, ${v}, 'q1', 'running')`
      return { id, path: `/v1/question-sets/${qs}/versions/${v}/structure-tasks/${id}` }
    }
    case 'billing_reconciliation': {
      await sql`insert into billing_reconciliations (tenant_id, id, period, status, invoice, created_by)
                values (${tenantId}, ${id}, '2026-01', 'running', '[]', '{"kind":"cli"}')`
      return { id, path: `/v1/billing/reconciliations/${id}` }
    }
    case 'directive_review': {
      // A watch on a case: each supersession raised for it copies the subscription.
      await sql`insert into scenarios (tenant_id, id, name) values (${tenantId}, ${id}, 'synthetic')`
      return { id, path: `/v1/scenarios/${id}/supersessions` }
    }
  }
}
