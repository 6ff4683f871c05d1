/**
 * The recurring maintenance job of the notification channel (hourly): destroys the values of
 * rotated-out signing secrets past revoke_at, purges finished deliveries older than the workspace's
 * notification retention (tenant setting `notification_retention_days`, 30 days by default) and
 * dead jobs older than 30 days; and sweeps expired idempotency records (server/http/idempotency.ts).
 */
import type { Tx } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { defineJobKind } from '../../jobs/define'
import { destroyExpiredSecrets } from './signing-secret'
import { sweepExpiredIdempotency } from '../http/idempotency'

/** The kind name of the maintenance job. */
export const MAINTENANCE_JOB_KIND = 'notifications_maintenance'
/** Its singleton key (one such job exists per database). */
export const MAINTENANCE_SINGLETON = 'notifications_maintenance'
/** Retention of finished deliveries when the workspace sets none. */
export const DEFAULT_RETENTION_DAYS = 30

/** Whether the workspaces migration provides the retention setting column. */
async function hasRetentionSetting(tx: Tx): Promise<boolean> {
  const [row] = await tx`
    select 1 from information_schema.columns
    where table_schema = current_schema() and table_name = 'tenant_settings' and column_name = 'notification_retention_days'`
  return row !== undefined
}

/** Runs one maintenance pass in `tx`; returns what it removed. */
export async function runMaintenance(tx: Tx): Promise<{ secrets: number; deliveries: number; jobs: number; idempotencyRecords: number }> {
  const secrets = await destroyExpiredSecrets(tx, null)
  const settings = await hasRetentionSetting(tx)
  const retention = settings
    ? tx`coalesce((select s.notification_retention_days from tenant_settings s where s.tenant_id = d.tenant_id), ${DEFAULT_RETENTION_DAYS})`
    : tx`${DEFAULT_RETENTION_DAYS}`
  // The shortest retention of any workspace bounds the creation time of every delivery to remove
  // (finished before its cut-off, so created before it): the BRIN index on created_at reads only
  // the block ranges that old (no index names updated_at: a finish stays a heap-only update).
  const shortest = settings
    ? tx`least(${DEFAULT_RETENTION_DAYS}::int, (select min(s.notification_retention_days) from tenant_settings s))`
    : tx`${DEFAULT_RETENTION_DAYS}::int`
  const deliveries = await tx`
    delete from notification_deliveries d
    where d.created_at < now() - make_interval(days => ${shortest})
      and d.status <> 'pending' and d.updated_at < now() - make_interval(days => ${retention}::int)
    returning d.id`
  const jobs = await tx`delete from jobs where dead_at is not null and dead_at < now() - interval '30 days' returning id`
  const idempotencyRecords = await sweepExpiredIdempotency(tx)
  return { secrets, deliveries: deliveries.length, jobs: jobs.length, idempotencyRecords }
}

/** The maintenance job kind: recurring every hour; every runner arms it at start (once per database). */
export function maintenanceJobKind() {
  return defineJobKind({
    name: MAINTENANCE_JOB_KIND,
    payload: Type.Object({ singleton: Type.Optional(Type.Literal(MAINTENANCE_SINGLETON)) }),
    tenantScoped: false,
    repeatEveryMs: 3_600_000,
    maxAttempts: 1_000_000,
    arm: (deps) => armMaintenance(deps.sql),
    handler: async (tx) => { await runMaintenance(tx) },
  })
}

/** Arms the maintenance job if no process has yet (idempotent across processes). */
export async function armMaintenance(sql: Tx): Promise<void> {
  await sql`
    insert into jobs (id, kind, tenant_id, payload, run_at)
    values (${Bun.randomUUIDv7()}, ${MAINTENANCE_JOB_KIND}, null, ${sql.json({ singleton: MAINTENANCE_SINGLETON })}, now() + interval '1 minute')
    on conflict ((payload ->> 'singleton')) where payload ? 'singleton' do nothing`
}
