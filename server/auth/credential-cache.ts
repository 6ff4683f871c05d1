/**
 * A short-lived in-process cache of credential lookups (API key hash -> key principal, JWT subject
 * -> membership), so a request costs one database round trip less. Freshness: entries live a few
 * seconds; a local change (revoke, suspend, role change) invalidates every entry at once through
 * invalidateCredentials(), and on PostgreSQL a trigger's NOTIFY does the same in every other process.
 */
import type { Sql } from '../db/connect'

let generation = 0

/** Drops every cached credential of this process (call after revoking, suspending, re-roling). */
export function invalidateCredentials(): void {
  generation++
}

/** A bounded map whose entries lapse after `ttlMs`, at their own deadline, or on invalidation. */
export class CredentialCache<V> {
  readonly #entries = new Map<string, { value: V; until: number; generation: number }>()
  readonly #ttlMs: number
  readonly #max: number

  constructor(ttlMs = 5_000, max = 10_000) {
    this.#ttlMs = ttlMs
    this.#max = max
  }

  /** The live entry of `key`, if any. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    if (entry.generation !== generation || entry.until <= Date.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** Caches `value` until the TTL or `notAfter` (a key's expiry), whichever comes first. */
  set(key: string, value: V, notAfter?: Date | null): void {
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!)
    const until = Math.min(Date.now() + this.#ttlMs, notAfter ? notAfter.getTime() : Infinity)
    this.#entries.set(key, { value, until, generation })
  }
}

/** The channel the credential triggers notify on (sql/005_credential_changes.sql). */
export const CREDENTIALS_CHANNEL = 'svc_credentials'

/** Subscribes this process to credential changes made by other processes (PostgreSQL only). */
export async function listenForCredentialChanges(sql: Sql): Promise<void> {
  await sql.listen(CREDENTIALS_CHANNEL, () => invalidateCredentials(), () => invalidateCredentials())
}
