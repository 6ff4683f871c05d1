/**
 * The tasks a subscription can name, per task kind: whether a task id names a task of that kind in
 * a workspace, and whether that task has already ended (and how). Also the lock that serialises a
 * task's end (finishTask) with a subscription to it, so a subscription racing the end gets exactly
 * one notification: either finishTask sees the committed subscription, or the subscription sees
 * the committed end and enqueues the notification itself (see subscribeToTask).
 */
import type { Tx } from '../db/connect'
import type { TaskKind, TaskResult, OutcomeVariant } from './outcomes'

/** How an ended task ended, as read from its own row (the fallback when no outcome was stored). */
export interface TaskEnd {
  result: TaskResult
  variant: OutcomeVariant
  reason: string | null
  occurredAt: Date
  resourcePath: string
}

/** What a task id names: the task's REST path and, when it has ended, how. */
export interface TaskState {
  resourcePath: string
  /** Null while the task runs (or waits, or is stalled, or is a directive_review watch target). */
  end: TaskEnd | null
}

/** A task row as the per-kind queries below return it. */
interface Row { status: string; path: string; reason: string | null; ended_at: Date }

/** The end a status means (document and guideline ingestion share their status values). */
const INGESTION_ENDS: Record<string, [TaskResult, OutcomeVariant]> = {
  ready: ['succeeded', 'default'], ready_degraded: ['succeeded', 'degraded'], failed: ['failed', 'default'], unsupported_pending: ['unsupported_pending', 'default'],
}
const RUN_ENDS: Record<string, [TaskResult, OutcomeVariant]> = {
  succeeded: ['succeeded', 'default'], failed: ['failed', 'default'], canceled: ['canceled', 'default'],
}

/** One query per kind: the task's row in the workspace, or nothing. */
const LOOKUPS: Record<Exclude<TaskKind, 'directive_review'>, { ends: Record<string, [TaskResult, OutcomeVariant]>; query: (tx: Tx, tenantId: string, id: string) => Promise<Row[]> }> = {
  generation_run: {
    ends: RUN_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/question-sets/' || question_set_id || '/generation-runs/' || id as path, error_detail as reason, coalesce(finished_at, updated_at) as ended_at
      from generation_runs where tenant_id = ${t} and id = ${id}`,
  },
  diff_run: {
    ends: RUN_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/question-sets/' || question_set_id || '/diff-runs/' || id as path, error_detail as reason, coalesce(finished_at, updated_at) as ended_at
      from diff_runs where tenant_id = ${t} and id = ${id}`,
  },
  document_ingestion: {
    ends: INGESTION_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/scenarios/' || scenario_id || '/documents/' || id as path, error_detail as reason, coalesce(processed_at, updated_at) as ended_at
      from documents where tenant_id = ${t} and id = ${id}`,
  },
  guideline_ingestion: {
    ends: INGESTION_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/question-groups/' || question_group_id || '/guidelines/' || id as path, error_detail as reason, coalesce(processed_at, updated_at) as ended_at
      from guidelines where tenant_id = ${t} and id = ${id}`,
  },
  structure_task: {
    ends: RUN_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/question-sets/' || question_set_id || '/versions/' || version_id || '/structure-tasks/' || id as path, error_detail as reason,
             coalesce(finished_at, updated_at) as ended_at
      from structure_tasks where tenant_id = ${t} and id = ${id}`,
  },
  question_set_publish: {
    ends: { published: ['succeeded', 'default'], failed: ['failed', 'default'] },
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/question-sets/' || question_set_id || '/versions/' || id as path, failure_reason as reason, coalesce(published_at, updated_at) as ended_at
      from question_set_versions where tenant_id = ${t} and id = ${id}`,
  },
  evaluation_run: {
    ends: RUN_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/scenarios/' || scenario_id || '/evaluations/' || id as path, error_detail as reason, coalesce(finished_at, updated_at) as ended_at
      from evaluations where tenant_id = ${t} and id = ${id}`,
  },
  billing_reconciliation: {
    ends: RUN_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/billing/reconciliations/' || id as path, error_detail as reason, coalesce(finished_at, updated_at) as ended_at
      from billing_reconciliations where tenant_id = ${t} and id = ${id}`,
  },
  report_generated: {
    ends: RUN_ENDS,
    query: (tx, t, id) => tx<Row[]>`
      select status, '/v1/scenarios/' || scenario_id || '/reports/' || id as path, error_detail as reason, coalesce(completed_at, updated_at) as ended_at
      from reports where tenant_id = ${t} and id = ${id}`,
  },
}

/**
 * What a task id names in a workspace for a task kind, or null when it names no task of that kind
 * there (absent, another workspace's, or a task of another kind). directive_review accepts a
 * supersession (ended at once: always task.completed) or, as a watch, a case or a question set
 * (never ended: each new supersession copies the subscription).
 */
export async function findTask(tx: Tx, tenantId: string, kind: TaskKind, taskId: string): Promise<TaskState | null> {
  if (kind === 'directive_review') {
    const [s] = await tx<{ scenario_id: string; reason: string; created_at: Date }[]>`
      select scenario_id, reason, created_at from supersessions where tenant_id = ${tenantId} and id = ${taskId}`
    if (s) {
      const resourcePath = `/v1/scenarios/${s.scenario_id}/supersessions`
      return { resourcePath, end: { result: 'succeeded', variant: s.reason === 'no_analog' ? 'no_analog' : 'default', reason: null, occurredAt: s.created_at, resourcePath } }
    }
    const [watch] = await tx<{ path: string }[]>`
      select '/v1/scenarios/' || id || '/supersessions' as path from scenarios where tenant_id = ${tenantId} and id = ${taskId}
      union all
      select '/v1/question-sets/' || id as path from question_sets where tenant_id = ${tenantId} and id = ${taskId}
      limit 1`
    return watch ? { resourcePath: watch.path, end: null } : null
  }
  const lookup = LOOKUPS[kind]
  const [row] = await lookup.query(tx, tenantId, taskId)
  if (!row) return null
  const end = lookup.ends[row.status]
  return {
    resourcePath: row.path,
    end: end ? { result: end[0], variant: end[1], reason: row.reason, occurredAt: row.ended_at, resourcePath: row.path } : null,
  }
}

/**
 * Takes the transaction-scoped lock of one task (tenant, kind, id). finishTask takes it before it
 * reads the task's subscriptions; subscribing takes it before it reads whether the task ended. Held
 * to commit, so whichever comes second sees the other's committed writes (each statement of a READ
 * COMMITTED transaction reads what was committed before it started).
 */
export async function lockTask(tx: Tx, tenantId: string, kind: string, taskId: string): Promise<void> {
  await lockTaskQuery(tx, tenantId, kind, taskId)
}

/** lockTask's statement, not yet sent: for a caller that pipelines it with the statements after it (finishTask). */
export function lockTaskQuery(tx: Tx, tenantId: string, kind: string, taskId: string) {
  return tx`select pg_advisory_xact_lock(hashtextextended(${`task-notify/${tenantId}/${kind}/${taskId}`}, 0))`
}
