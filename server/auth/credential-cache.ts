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

/** What a cache has done since it was made (the operator surface's cache figures). */
export interface CacheFigures { name: string; hits: number; misses: number; size: number; max_entries: number; ttl_ms: number }

/** The caches of one app (wired into AppDeps), so operators can read their figures. */
export class CacheRegistry {
  readonly #caches: { figures(): CacheFigures }[] = []
  /** Adds a cache to the figures. */
  add(cache: { figures(): CacheFigures }): void { this.#caches.push(cache) }
  /** Every registered cache's figures. */
  figures(): CacheFigures[] { return this.#caches.map((c) => c.figures()) }
}

/** A bounded map whose entries lapse after `ttlMs`, at their own deadline, or on invalidation. */
export class CredentialCache<V> {
  readonly #entries = new Map<string, { value: V; until: number; generation: number }>()
  readonly #ttlMs: number
  readonly #max: number
  readonly #name: string
  #hits = 0
  #misses = 0

  constructor(ttlMs = 5_000, max = 10_000, name = 'credentials', registry?: CacheRegistry) {
    this.#ttlMs = ttlMs
    this.#max = max
    this.#name = name
    registry?.add(this)
  }

  /** The live entry of `key`, if any (counted as a hit or a miss). */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key)
    if (!entry) { this.#misses++; return undefined }
    if (entry.generation !== generation || entry.until <= Date.now()) {
      this.#entries.delete(key)
      this.#misses++
      return undefined
    }
    this.#hits++
    return entry.value
  }

  /** Hits, misses and size so far. */
  figures(): CacheFigures {
    return { name: this.#name, hits: this.#hits, misses: this.#misses, size: this.#entries.size, max_entries: this.#max, ttl_ms: this.#ttlMs }
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
