/**
 * What keeps an update of a table heap-only (HOT) in PostgreSQL, read from the catalog and from the
 * current transaction's own statistics: the tests of migrations 030 and 031 hold it against the code.
 */
import type { Sql, Tx } from '../../server/db/connect'

/** Each index of `table` with the first of `columns` its definition names (key or predicate), or null. */
export async function indexesNaming(sql: Sql, table: string, columns: readonly string[]): Promise<{ name: string; names: string | null }[]> {
  const indexes = await sql<{ name: string; def: string }[]>`
    select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as def from pg_index where indrelid = ${table}::regclass`
  return indexes.map(({ name, def }) => ({ name, names: columns.find((c) => new RegExp(`\\b${c}\\b`).test(def)) ?? null }))
}

/** The storage options of `table` (`fillfactor=80`, ...). */
export async function storageOptions(sql: Sql, table: string): Promise<string[]> {
  const [row] = await sql<{ options: string[] | null }[]>`select reloptions as options from pg_class where oid = ${table}::regclass`
  return row!.options ?? []
}

/** The rows of `table` this transaction has updated so far, and how many of those updates were heap-only. */
export async function updatesSoFar(tx: Tx, table: string): Promise<{ updated: number; heapOnly: number }> {
  const [row] = await tx<{ updated: number; heap_only: number }[]>`
    select coalesce(sum(n_tup_upd), 0)::int as updated, coalesce(sum(n_tup_hot_upd), 0)::int as heap_only
    from pg_stat_xact_user_tables where relname = ${table}`
  return { updated: row!.updated, heapOnly: row!.heap_only }
}
