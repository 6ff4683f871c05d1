/**
 * Every lookup of a row by its key, and every foreign-key check, takes the key's own index, even
 * when its plan is made on empty tables, as a new deployment's first statements are (sql/032,
 * sql/034). A prepared statement's generic plan is made once per connection and made again only
 * when the table is analyzed; costed on an empty table, any other index leading with `tenant_id`
 * tied with the key and could be taken, and then read every row of the workspace on each lookup
 * for as long as the plan lived. This test plans each such statement on a freshly migrated
 * database with generic plans forced and reads the index its plan scans. PostgreSQL only.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { postgresClient, type Sql } from '../../server/db/connect'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(120_000)

const postgres = Boolean(process.env.DATABASE_URL)
const title = (t: string) => skipTitle(t, NEEDS_POSTGRES && 'needs PostgreSQL (DATABASE_URL): it reads PostgreSQL plans')

/**
 * Lookups by `(tenant_id, id)` allowed to take another index, and why. A unique constraint cannot
 * be made partial while an `ON CONFLICT` names it.
 */
const EXCEPTIONS: Record<string, string> = {
  supersessions: 'its unique (tenant_id, scenario_id, new_version_id, question_key, reason) backs the insert\'s ON CONFLICT; looked up by id alone only when a subscription comes after the task ended',
}

let db: TestDatabase
let session: Sql

if (postgres) beforeAll(async () => {
  db = await createTestDatabase('migrated')
  session = postgresClient(db.url!, { max: 1, onnotice: () => {}, connection: { plan_cache_mode: 'force_generic_plan' } })
})
if (postgres) afterAll(async () => {
  await session?.end()
  await db?.drop()
})

let statements = 0
/** The indexes the generic plan of `text` (parameters of `types`) scans. */
async function indexesScanned(text: string, types: string[]): Promise<string[]> {
  const name = `key_plan_${++statements}`
  await session.unsafe(`prepare ${name}(${types.join(', ')}) as ${text}`)
  // Values, not nulls: a partitioned table's plan prunes its partitions by them at execution.
  const value = (t: string) => (t === 'uuid' ? `'${crypto.randomUUID()}'::uuid` : `null::${t}`)
  const plan = (await session.unsafe(`explain execute ${name}(${types.map(value).join(', ')})`)).map((r) => String(r['QUERY PLAN']))
  await session.unsafe(`deallocate ${name}`)
  return plan.flatMap((line) => {
    const m = / using (\S+) on /.exec(line) ?? /(Seq Scan) on /.exec(line)
    return m ? [m[1]!] : []
  })
}

/** A key of a table: its columns with their types, and the index that backs it with its partitions' (for a partitioned table). */
interface Key { table: string; partitioned: boolean; columns: { name: string; type: string }[]; indexes: string[] }

/** The text PostgreSQL's foreign-key trigger checks a referenced key with. */
const keyCheck = (k: Key) =>
  `SELECT 1 FROM ${k.partitioned ? '' : 'ONLY '}public.${k.table} x WHERE ${k.columns.map((c, i) => `${c.name} OPERATOR(pg_catalog.=) $${i + 1}`).join(' AND ')} FOR KEY SHARE OF x`

async function keys(where: string): Promise<Key[]> {
  const rows = await session.unsafe<{ table: string; partitioned: boolean; columns: { name: string; type: string }[]; indexes: string[] }[]>(`
    select k.rel::regclass::text as table, r.relkind = 'p' as partitioned,
           (select json_agg(json_build_object('name', quote_ident(a.attname), 'type', format_type(a.atttypid, a.atttypmod)) order by o.n)
            from unnest(k.cols) with ordinality o(attnum, n) join pg_attribute a on a.attrelid = k.rel and a.attnum = o.attnum) as columns,
           array(select k.idx::regclass::text union select inhrelid::regclass::text from pg_inherits where inhparent = k.idx) as indexes
    from (${where}) k(rel, cols, idx) join pg_class r on r.oid = k.rel
    order by 1`)
  return rows
}

test.skipIf(!postgres)(title('every foreign-key check takes the referenced key\'s index when planned on empty tables'), async () => {
  const referenced = await keys(`select distinct confrelid, confkey, conindid from pg_constraint where contype = 'f' and conparentid = 0`)
  expect(referenced.length).toBeGreaterThan(10)
  const wrong: string[] = []
  for (const k of referenced) {
    const scanned = await indexesScanned(keyCheck(k), k.columns.map((c) => c.type))
    if (scanned.length === 0 || scanned.some((i) => !k.indexes.includes(i))) wrong.push(`${k.table} (${k.columns.map((c) => c.name).join(', ')}): ${scanned.join(', ')}`)
  }
  expect(wrong).toEqual([])
})

test.skipIf(!postgres)(title('every lookup by (tenant_id, id) takes a key on exactly those columns when planned on empty tables'), async () => {
  const byId = await keys(`
    select i.indrelid, i.indkey::int2[], i.indexrelid from pg_index i join pg_class r on r.oid = i.indrelid
    where i.indisunique and i.indpred is null and r.relnamespace = 'public'::regnamespace and not r.relispartition
      and (select array_agg(a.attname order by o.n) from unnest(i.indkey::int2[]) with ordinality o(attnum, n) join pg_attribute a on a.attrelid = i.indrelid and a.attnum = o.attnum) = array['tenant_id', 'id']::name[]`)
  expect(byId.map((k) => k.table)).toContain('documents')
  expect(byId.map((k) => k.table)).toContain('evaluations')
  const wrong: string[] = []
  for (const k of byId) {
    if (EXCEPTIONS[k.table]) continue
    const scanned = await indexesScanned(`select * from ${k.partitioned ? '' : 'only '}public.${k.table} where tenant_id = $1 and id = $2`, k.columns.map((c) => c.type))
    if (scanned.length === 0 || scanned.some((i) => !k.indexes.includes(i))) wrong.push(`${k.table}: ${scanned.join(', ')}`)
  }
  expect(wrong).toEqual([])
})

test.skipIf(!postgres)(title('the lists those indexes serve still use them'), async () => {
  const uuid = ['uuid', 'uuid', 'uuid', 'bigint']
  const lists: [string, string, string[]][] = [
    ['documents_by_scenario', 'select id from documents where tenant_id = $1 and scenario_id = $2 and id < $3 order by id desc limit $4', uuid],
    ['evaluations_by_scenario', 'select id from evaluations where tenant_id = $1 and scenario_id = $2 and id < $3 order by id desc limit $4', uuid],
    ['supersessions_by_scenario', 'select id from supersessions where tenant_id = $1 and scenario_id = $2 and id < $3 order by id desc limit $4', uuid],
    ['guidelines_by_question_group', 'select id from guidelines where tenant_id = $1 and question_group_id = $2 and id < $3 order by id desc limit $4', uuid],
    ['generation_runs_by_question_set', 'select id from generation_runs where tenant_id = $1 and question_set_id = $2 and id < $3 order by id desc limit $4', uuid],
    ['notification_deliveries_by_subscription', 'select id from notification_deliveries where tenant_id = $1 and subscription_id = $2 and id < $3 order by id desc limit $4', uuid],
    ['billing_contracts_by_effective_from', 'select id from billing_contracts where tenant_id = $1 and effective_from <= $2 order by effective_from desc limit 1', ['uuid', 'date']],
    ['billing_findings_by_reconciliation_id', 'select id from billing_reconciliation_findings where tenant_id = $1 and reconciliation_id = $2', ['uuid', 'uuid']],
  ]
  for (const [index, text, types] of lists) expect({ index, scanned: await indexesScanned(text, types) }).toEqual({ index, scanned: [index] })
})
