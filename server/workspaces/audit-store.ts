/**
 * The store of a workspace's audit chain: owns the `audit_events` table. Append-only (the database
 * refuses UPDATE, DELETE and TRUNCATE with a trigger), one gap-free sequence per workspace, and each
 * entry carries the SHA-256 of the previous one, so `svc audit verify` can recompute the chain and
 * name the first entry that no longer matches.
 */
import { createHash } from 'node:crypto'
import type { Sql, Tx } from '../db/connect'
import type { Principal } from '../auth/principal-kinds'
import { canonicalJson } from '../http/idempotency'
import type { PageWindow } from '../http/pagination'
import { lockTenant } from './tenants-store'

/** Who did something, as recorded in the chain. */
export type AuditActor =
  | { kind: 'user' | 'api_key' | 'embed'; id: string }
  | { kind: 'operator'; sub: string }
  | { kind: 'cli' }

/** The actor of a request's principal. */
export function actorOf(p: Principal): AuditActor {
  switch (p.kind) {
    case 'user': return { kind: 'user', id: p.userId }
    case 'api_key': return { kind: 'api_key', id: p.keyId }
    case 'embed': return { kind: 'embed', id: p.sessionId }
    case 'operator':
    case 'person':
    case 'break_glass': return { kind: 'operator', sub: p.sub }
  }
}

/** A row of `audit_events`. */
export interface AuditRow {
  tenant_id: string
  seq: string | number
  id: string
  kind: string
  actor: AuditActor
  data: Record<string, unknown>
  occurred_at: Date
  prev_hash: string | null
  hash: string
}

/** The hash of one entry: SHA-256 over the canonical JSON of every field but the hash itself. */
export function hashAuditEntry(e: Omit<AuditRow, 'hash'>): string {
  const canonical = canonicalJson({
    tenant_id: e.tenant_id,
    seq: Number(e.seq),
    id: e.id,
    kind: e.kind,
    actor: e.actor,
    data: e.data,
    occurred_at: e.occurred_at.toISOString(),
    prev_hash: e.prev_hash,
  })
  return createHash('sha256').update(canonical).digest('hex')
}

/**
 * Appends one entry to a workspace's chain. Call it inside the transaction of the change it records
 * (pass that transaction): it locks the workspace row against concurrent appends, so the sequence
 * has no gaps and each entry links to the one before.
 */
export async function appendAudit(tx: Tx, tenantId: string, kind: string, actor: AuditActor, data: Record<string, unknown>): Promise<AuditRow> {
  await lockTenant(tx, tenantId)
  const [last] = await tx<{ seq: string; hash: string }[]>`
    select seq, hash from audit_events where tenant_id = ${tenantId} order by seq desc limit 1`
  const entry = {
    tenant_id: tenantId,
    seq: last ? Number(last.seq) + 1 : 1,
    id: Bun.randomUUIDv7(),
    kind,
    actor: JSON.parse(JSON.stringify(actor)) as AuditActor,
    // What jsonb will hand back: undefined members dropped, so the hash recomputes exactly.
    data: JSON.parse(JSON.stringify(data)) as Record<string, unknown>,
    occurred_at: new Date(),
    prev_hash: last?.hash ?? null,
  }
  const hash = hashAuditEntry(entry)
  await tx`
    insert into audit_events (tenant_id, seq, id, kind, actor, data, occurred_at, prev_hash, hash)
    values (${tenantId}, ${entry.seq}, ${entry.id}, ${kind}, ${tx.json(entry.actor as never)}, ${tx.json(entry.data as never)},
            ${entry.occurred_at}, ${entry.prev_hash}, ${hash})`
  return { ...entry, hash }
}

/** The outcome of a chain verification. */
export interface AuditVerification {
  ok: boolean
  checked: number
  first_broken?: { seq: number; id: string | null; reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'sequence_gap' }
}

/** Recomputes a workspace's chain from the first entry and names the first entry that breaks it. */
export async function verifyAuditChain(sql: Sql, tenantId: string): Promise<AuditVerification> {
  let checked = 0
  let expectedSeq = 1
  let prevHash: string | null = null
  for (;;) {
    const rows = await sql<AuditRow[]>`
      select tenant_id, seq, id, kind, actor, data, occurred_at, prev_hash, hash
      from audit_events
      where tenant_id = ${tenantId} and seq >= ${expectedSeq}
      order by seq
      limit 1000`
    if (rows.length === 0) return { ok: true, checked }
    for (const row of rows) {
      const seq = Number(row.seq)
      if (seq !== expectedSeq) return { ok: false, checked, first_broken: { seq: expectedSeq, id: null, reason: 'sequence_gap' } }
      if (row.prev_hash !== prevHash) return { ok: false, checked, first_broken: { seq, id: row.id, reason: 'prev_hash_mismatch' } }
      if (hashAuditEntry(row) !== row.hash) return { ok: false, checked, first_broken: { seq, id: row.id, reason: 'hash_mismatch' } }
      checked++
      expectedSeq++
      prevHash = row.hash
    }
  }
}

/** The API shape of an entry. */
export function renderAuditEvent(row: AuditRow) {
  return {
    id: row.id,
    seq: Number(row.seq),
    kind: row.kind,
    actor: row.actor,
    data: row.data,
    occurred_at: row.occurred_at.toISOString(),
    ...(row.prev_hash !== null ? { prev_hash: row.prev_hash } : {}),
    hash: row.hash,
  }
}

/** One page of a workspace's chain, newest first, optionally of one `kind` (rows of `window`). */
export async function listAuditEvents(sql: Sql, tenantId: string, kind: string | undefined, window: PageWindow): Promise<AuditRow[]> {
  return sql<AuditRow[]>`
    select tenant_id, seq, id, kind, actor, data, occurred_at, prev_hash, hash
    from audit_events
    where tenant_id = ${tenantId}
      ${window.after !== null ? sql`and seq < ${window.after}` : sql``}
      ${kind !== undefined ? sql`and kind = ${kind}` : sql``}
    order by seq desc
    limit ${window.fetch}`
}
