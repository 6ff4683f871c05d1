/**
 * The partition of `scenarios` a case id lives in, computed here exactly as PostgreSQL routes a row
 * (sql/025_write_spread.sql: hash partitioning by id, modulus 8).
 *
 * Why: a prepared lookup of the partitioned parent by `(tenant_id, id)` is planned anew on every
 * execution. Its generic plan is an Append of all 8 partitions (pruned only when it runs), which
 * the plan cache costs at 8 index scans against 1 for a custom plan, so it never switches to the
 * generic plan and every read pays the planner (measured: 0.70 of the lookup rate of an
 * unpartitioned table; naming the partition: 0.90). Naming the partition makes the statement a
 * plain single-table lookup, whose generic plan is cached.
 *
 * PostgreSQL's routing: `uuid_hash_extended(id, HASH_PARTITION_SEED)` (Bob Jenkins' lookup3 over the
 * 16 bytes as little-endian words, the 64-bit seed mixed in first), combined with
 * `hash_combine64(0, h)`, modulo the partition count. tests/http/write-spread.test.ts checks this
 * against the partition PostgreSQL chose for thousands of ids, so a change of either side fails there.
 */

/** Partitions of `scenarios` (sql/025_write_spread.sql). */
export const SCENARIO_PARTITIONS = 8

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const rot = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0

/** The value of one hex digit's character code (0-9, a-f, A-F; the caller checked the UUID's shape). */
const hexValue = (c: number) => (c <= 57 ? c - 48 : (c | 32) - 87)

/**
 * The little-endian 32-bit word `i` (0..3) of a UUID's 16 bytes, read from its canonical text
 * (dashes at 8, 13, 18, 23) by character code: no slicing, string building or parseInt per word.
 */
function word(uuid: string, i: number): number {
  let w = 0
  for (let b = 3; b >= 0; b--) {
    const digit = 2 * (4 * i + b) // the byte's first hex digit among the 32
    const at = digit + (digit >= 8 ? 1 : 0) + (digit >= 12 ? 1 : 0) + (digit >= 16 ? 1 : 0) + (digit >= 20 ? 1 : 0)
    w = (w << 8) | (hexValue(uuid.charCodeAt(at)) << 4) | hexValue(uuid.charCodeAt(at + 1))
  }
  return w >>> 0
}

/**
 * The low 32 bits of PostgreSQL's `uuid_hash_extended(id, 0x7A5B22367996DCFD)` (hash_bytes_extended
 * over 16 bytes; the high half is `b`, which the partition number never needs, see scenarioPartition).
 */
function partitionHashLow(uuid: string): number {
  let a = (0x9e3779b9 + 16 + 3923095) >>> 0
  let b = a
  let c = a
  const mix = () => {
    a = (a - c) >>> 0; a = (a ^ rot(c, 4)) >>> 0; c = (c + b) >>> 0
    b = (b - a) >>> 0; b = (b ^ rot(a, 6)) >>> 0; a = (a + c) >>> 0
    c = (c - b) >>> 0; c = (c ^ rot(b, 8)) >>> 0; b = (b + a) >>> 0
    a = (a - c) >>> 0; a = (a ^ rot(c, 16)) >>> 0; c = (c + b) >>> 0
    b = (b - a) >>> 0; b = (b ^ rot(a, 19)) >>> 0; a = (a + c) >>> 0
    c = (c - b) >>> 0; c = (c ^ rot(b, 4)) >>> 0; b = (b + a) >>> 0
  }
  // The seed (HASH_PARTITION_SEED) as a 12-byte chunk of its own.
  a = (a + 0x7a5b2236) >>> 0
  b = (b + 0x7996dcfd) >>> 0
  mix()
  a = (a + word(uuid, 0)) >>> 0
  b = (b + word(uuid, 1)) >>> 0
  c = (c + word(uuid, 2)) >>> 0
  mix()
  a = (a + word(uuid, 3)) >>> 0
  // final(a, b, c)
  c = (c ^ b) >>> 0; c = (c - rot(b, 14)) >>> 0
  a = (a ^ c) >>> 0; a = (a - rot(c, 11)) >>> 0
  b = (b ^ a) >>> 0; b = (b - rot(a, 25)) >>> 0
  c = (c ^ b) >>> 0; c = (c - rot(b, 16)) >>> 0
  a = (a ^ c) >>> 0; a = (a - rot(c, 4)) >>> 0
  b = (b ^ a) >>> 0; b = (b - rot(a, 14)) >>> 0
  c = (c ^ b) >>> 0; c = (c - rot(b, 24)) >>> 0
  return c
}

/**
 * The partition number (0..7) PostgreSQL stores case `id` in, or null for a string that is no
 * UUID (its lookup goes to the parent table, which answers as it always did).
 */
export function scenarioPartition(id: string): number | null {
  if (!UUID.test(id)) return null
  // hash_combine64(0, h) = h + 0x49a0f4dd15e5a8e3 (mod 2^64), then modulo the partition count. The
  // count (8) divides 2^32, so the remainder depends on the low 32 bits alone: (low + 0x15e5a8e3) mod 8.
  return ((partitionHashLow(id) + 0x15e5a8e3) >>> 0) % SCENARIO_PARTITIONS
}

/** The table to read case `id` from: its partition (`scenarios_p<n>`), or the parent for a string that is no UUID. */
export function scenarioTable(id: string): string {
  const p = scenarioPartition(id)
  return p === null ? 'scenarios' : `scenarios_p${p}`
}
