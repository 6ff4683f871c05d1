/**
 * Development webhook listeners (`svc listen`): the one exemption from the webhook SSRF guard that a
 * command arranges, never a setting. A listener is a loopback HTTPS receiver with a self-signed
 * certificate, registered here for one workspace while its command runs (it refreshes `expires_at`);
 * deliveries of that workspace to exactly its URL may connect to loopback and trust exactly its
 * certificate. The command subscribes the listener to one task, or to every task of the workspace
 * as tasks appear (ordinary subscriptions, so the outbox, signing and retries are the real ones).
 */
import type { Sql, Tx } from '../db/connect'
import type { TaskKind } from './outcomes'
import type { LinkBases } from './envelope'
import { subscribeToTask } from './subscriptions'

/** How long a listener stays live without a refresh from its command. */
export const LISTENER_TTL_S = 30

/** A live listener as the delivery job sees it. */
export interface LiveListener { id: string; certificatePem: string }

/** What registering a listener takes. */
export interface ListenerInput { url: string; certificatePem: string; taskKind?: TaskKind; taskId?: string }

/** Whether a URL may be a listener's: https on a loopback IP literal with a port. */
export function isListenerUrl(raw: string): boolean {
  try {
    const url = new URL(raw)
    return url.protocol === 'https:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]') && url.port !== ''
  } catch {
    return false
  }
}

/** Registers a listener of a workspace; returns its id. */
export async function registerListener(sql: Sql, tenantId: string, input: ListenerInput): Promise<string> {
  const id = Bun.randomUUIDv7()
  await sql`
    insert into dev_listeners (tenant_id, id, url, certificate_pem, task_kind, task_id, expires_at)
    values (${tenantId}, ${id}, ${input.url}, ${input.certificatePem}, ${input.taskKind ?? null}, ${input.taskId ?? null},
            now() + make_interval(secs => ${LISTENER_TTL_S}))`
  return id
}

/**
 * Keeps a listener live and subscribes it to the tasks it listens to: its one task, or every task of
 * the workspace made since it started that it is not yet subscribed to. A task that has already ended
 * gets its notification at once (a late subscription). Returns the subscriptions made, or null when
 * the listener is gone.
 */
export async function refreshListener(sql: Sql, tenantId: string, id: string, links: LinkBases): Promise<number | null> {
  const [listener] = await sql<{ url: string; task_kind: TaskKind | null; task_id: string | null; since: Date }[]>`
    update dev_listeners set expires_at = now() + make_interval(secs => ${LISTENER_TTL_S})
    where tenant_id = ${tenantId} and id = ${id}
    returning url, task_kind, task_id, since`
  if (!listener) return null
  const tasks = listener.task_kind && listener.task_id
    ? [{ kind: listener.task_kind, id: listener.task_id }]
    : await tasksSince(sql, tenantId, listener.since, listener.url)
  let made = 0
  for (const task of tasks) {
    const out = await sql.begin((tx) => subscribeToTask(tx, tenantId, { taskKind: task.kind, taskId: task.id, channel: 'webhook', webhook: { url: listener.url } }, links))
    if (out.created) made++
  }
  return made
}

/**
 * Every task of a workspace made since `since` that has no subscription to `url` yet: one branch per
 * task kind, reading each kind's own table (a development tool's read across domains, on purpose).
 */
async function tasksSince(sql: Sql | Tx, tenantId: string, since: Date, url: string): Promise<{ kind: TaskKind; id: string }[]> {
  return sql<{ kind: TaskKind; id: string }[]>`
    select t.kind, t.id from (
      select 'document_ingestion' as kind, id, created_at from documents where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'evaluation_run', id, created_at from evaluations where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'report_generated', id, created_at from reports where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'question_set_publish', id, created_at from question_set_versions where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'generation_run', id, created_at from generation_runs where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'diff_run', id, created_at from diff_runs where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'structure_task', id, created_at from structure_tasks where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'guideline_ingestion', id, created_at from guidelines where tenant_id = ${tenantId} and created_at >= ${since}
      union all select 'billing_reconciliation', id, created_at from billing_reconciliations where tenant_id = ${tenantId} and created_at >= ${since}
    ) t
    where not exists (
      select 1 from task_notification_subscriptions s
      where s.tenant_id = ${tenantId} and s.task_kind = t.kind and s.task_id = t.id and s.webhook_url = ${url})
    order by t.created_at
    limit 200`
}

/**
 * Ends a listener: the exemption ends at once. Its subscriptions stay (their deliveries are history
 * the workspace can read); a later delivery to its URL is refused as a private address, as any is.
 */
export async function endListener(sql: Sql, tenantId: string, id: string): Promise<boolean> {
  const gone = await sql`delete from dev_listeners where tenant_id = ${tenantId} and id = ${id} returning id`
  return gone.length > 0
}

/**
 * The live listener of a workspace whose URL is exactly `url`, or null: the delivery job's one
 * exemption from the private-address refusal.
 */
export async function liveListenerFor(sql: Sql, tenantId: string, url: string): Promise<LiveListener | null> {
  if (!isListenerUrl(url)) return null
  const [row] = await sql<{ id: string; certificate_pem: string }[]>`
    select id, certificate_pem from dev_listeners
    where tenant_id = ${tenantId} and url = ${url} and expires_at > now()
    order by expires_at desc
    limit 1`
  return row ? { id: row.id, certificatePem: row.certificate_pem } : null
}
