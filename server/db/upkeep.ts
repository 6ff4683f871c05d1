/**
 * PostgreSQL's own upkeep of the tables the job queue churns. A finished job is a dead row and a
 * delivery's finish leaves a dead row version; autovacuum reclaims them, and its ANALYZE is what
 * makes every connection plan its prepared statements again from the tables as they now are.
 * Without it the tables only grow (docs/operations.md, the job queue), so the service says so at
 * start rather than leaving an operator to find out under load.
 */
import type { Sql } from './connect'

/** The tables whose churn needs autovacuum (every job, every delivery attempt). */
export const QUEUE_TABLES = ['jobs', 'notification_deliveries', 'notification_delivery_attempts'] as const

/**
 * Where autovacuum will not run for the queue tables: `server` when it is off for the whole
 * server (`autovacuum = off`), and each queue table whose storage options turn it off
 * (`autovacuum_enabled = false`). Empty when it runs everywhere it should.
 */
export async function autovacuumGaps(sql: Sql): Promise<string[]> {
  const [server] = await sql<{ on: boolean }[]>`select current_setting('autovacuum')::boolean as on`
  const tables = await sql<{ relname: string }[]>`
    select c.relname
    from pg_class c cross join lateral pg_options_to_table(c.reloptions) o
    where c.oid = any(${QUEUE_TABLES.map((t) => `public.${t}`)}::regclass[])
      and o.option_name = 'autovacuum_enabled' and not o.option_value::boolean
    order by c.relname`
  return [...(server!.on ? [] : ['server']), ...tables.map((t) => t.relname)]
}

/** The warning a service logs at start when autovacuumGaps found any (undefined when none). */
export function autovacuumWarning(gaps: string[]): string | undefined {
  if (gaps.length === 0) return undefined
  return 'PostgreSQL autovacuum is off for the job queue\'s tables: the dead row every finished job and delivery leaves is never reclaimed and their statistics are never refreshed, so the tables and their indexes grow for as long as the service runs and new plans are made from stale figures; turn it on (docs/operations.md, "The job queue at throughput")'
}
