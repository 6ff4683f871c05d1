/**
 * The webhook signing secret: one per workspace, minted lazily by the first rotate; a rotate keeps
 * the previous secret valid for 24 h (revoke_at), after which its value is destroyed and only
 * secret_last4 stays. Values are stored AES-256-GCM encrypted under a key derived from the service
 * key, bound to their workspace and id; the plaintext leaves only in the rotate response and in the
 * signature of a delivery. Owns `webhook_signing_secrets`.
 */
import { Elysia } from 'elysia'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { responses } from '../http/docs'
import { deriveKey } from '../secret-key'
import { SigningSecretMetadata, SigningSecretRotated } from '../../schemas/notifications'
import { NOTIFICATIONS_READ, NOTIFICATIONS_WRITE } from './access'

/** How long a rotated-out secret stays valid. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000

/** A row of `webhook_signing_secrets` (without the ciphertext). */
interface SecretMeta { id: string; secret_last4: string; created_at: Date; revoke_at: Date | null }

/** A usable secret: its id and plaintext. */
export interface SigningSecret { id: string; secret: string }

const encryptionKeys = new WeakMap<Uint8Array, Uint8Array>()
/** The key secrets are sealed with, derived once per service key (a delivery opens one per send). */
const encryptionKey = (serviceKey: Uint8Array) => {
  let key = encryptionKeys.get(serviceKey)
  if (!key) encryptionKeys.set(serviceKey, (key = deriveKey(serviceKey, 'webhook-signing-secret')))
  return key
}
const aad = (tenantId: string, id: string) => Buffer.from(`${tenantId}/${id}`)

/** Encrypts a secret for storage: 12-byte nonce, 16-byte tag, ciphertext. */
export function sealSecret(serviceKey: Uint8Array, tenantId: string, id: string, secret: string): Buffer {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', encryptionKey(serviceKey), iv)
  cipher.setAAD(aad(tenantId, id))
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), ct])
}

/**
 * Decrypts a stored secret (throws if it was tampered with or moved to another workspace or id).
 * `serviceKey` may be a key ring, current key first: during a key rotation a value sealed under a
 * previous key (SVC_SECRET_KEY_PREVIOUS) still opens until the re-encryption job moved it.
 */
export function openSecret(serviceKey: Uint8Array | readonly Uint8Array[], tenantId: string, id: string, sealed: Uint8Array): string {
  if (!(serviceKey instanceof Uint8Array)) {
    let failure: unknown = new Error('no service key')
    for (const key of serviceKey) {
      try { return openSecret(key, tenantId, id, sealed) } catch (e) { failure = e }
    }
    throw failure
  }
  const buf = Buffer.from(sealed)
  const decipher = createDecipheriv('aes-256-gcm', encryptionKey(serviceKey), buf.subarray(0, 12))
  decipher.setAAD(aad(tenantId, id))
  decipher.setAuthTag(buf.subarray(12, 28))
  return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString('utf8')
}

/** A fresh secret: `whsec_` and 32 random bytes in base64url. */
export function mintSecretValue(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}

/** Destroys the values of a workspace's rotated-out secrets whose revoke_at has passed (all workspaces when null). */
export async function destroyExpiredSecrets(tx: Tx, tenantId: string | null): Promise<number> {
  const rows = await tx`
    update webhook_signing_secrets set secret_ciphertext = null, destroyed_at = now()
    where ${tenantId !== null ? tx`tenant_id = ${tenantId} and` : tx``} revoke_at <= now() and secret_ciphertext is not null
    returning id`
  return rows.length
}

/**
 * Rotates the workspace's secret in the caller's transaction: the active one (if any) is rotated
 * out with revoke_at = now + 24 h and a new one becomes active. Returns the new plaintext.
 */
export async function rotateSecret(tx: Tx, serviceKey: Uint8Array, tenantId: string) {
  // Serialise rotations of one workspace (two at once would both retire the same active secret).
  await tx`select pg_advisory_xact_lock(hashtext(${`svc:signing-secret:${tenantId}`}))`
  await destroyExpiredSecrets(tx, tenantId)
  const [previous] = await tx<{ id: string; revoke_at: Date }[]>`
    update webhook_signing_secrets
    set rotated_out_at = now(), revoke_at = now() + make_interval(secs => ${SECRET_OVERLAP_MS / 1000})
    where tenant_id = ${tenantId} and rotated_out_at is null
    returning id, revoke_at`
  const id = Bun.randomUUIDv7()
  const secret = mintSecretValue()
  const [row] = await tx<{ created_at: Date }[]>`
    insert into webhook_signing_secrets (tenant_id, id, secret_ciphertext, secret_last4)
    values (${tenantId}, ${id}, ${sealSecret(serviceKey, tenantId, id, secret)}, ${secret.slice(-4)})
    returning created_at`
  return {
    id,
    secret,
    secret_last4: secret.slice(-4),
    rotated_at: row!.created_at.toISOString(),
    ...(previous ? { previous_revoke_at: previous.revoke_at.toISOString() } : {}),
  }
}

/**
 * The rule of which secret signs, as SQL: a lateral join yielding `usable_secret.id` and
 * `usable_secret.secret_ciphertext` for the workspace in column `tenantColumn` with the pinned id in
 * `pinnedColumn`: the pinned secret while it is usable (not destroyed, not past revoke_at), else the
 * active one; no row when the workspace has none. Deliveries join it into their own read.
 */
export function usableSecretJoin(sql: Tx, tenantColumn: string, pinnedColumn: string) {
  return sql`
    left join lateral (
      select w.id, w.secret_ciphertext
      from webhook_signing_secrets w
      where w.tenant_id = ${sql.unsafe(tenantColumn)} and w.secret_ciphertext is not null
        and (w.rotated_out_at is null or (w.revoke_at > now() and w.id = ${sql.unsafe(pinnedColumn)}))
      order by (w.id = ${sql.unsafe(pinnedColumn)}) is true desc
      limit 1
    ) usable_secret on true`
}

/**
 * A stored signing secret that no configured service key opens: SVC_SECRET_KEY (and
 * SVC_SECRET_KEY_PREVIOUS) is not the key it was sealed with, e.g. the key was rolled back after a
 * rotation. For signing it is no usable secret: retrying cannot help until an operator restores the
 * key or the workspace rotates its secret.
 */
export class UndecryptableSecret extends Error {
  constructor(readonly tenantId: string, readonly secretId: string, cause: unknown) {
    super(`webhook signing secret ${secretId} cannot be decrypted with the configured service keys`, { cause })
    this.name = 'UndecryptableSecret'
  }
}

/**
 * Decrypts the secret a usableSecretJoin row names, or null when there was none; throws
 * UndecryptableSecret when no configured service key opens it.
 */
export function openUsableSecret(serviceKey: Uint8Array | readonly Uint8Array[], tenantId: string, row: { secret_id: string | null; secret_ciphertext: Uint8Array | null }): SigningSecret | null {
  if (!row.secret_id || !row.secret_ciphertext) return null
  // Every delivery of a workspace reads the same sealed value: open it once (a hit needs the very
  // bytes read now, so a destroyed or re-sealed value is never answered from here).
  const cacheKey = `${tenantId}/${row.secret_id}`
  const hit = opened.get(cacheKey)
  if (hit && sameKeys(hit.keys, serviceKey) && Buffer.from(row.secret_ciphertext).equals(hit.sealed)) return { id: row.secret_id, secret: hit.secret }
  try {
    const secret = openSecret(serviceKey, tenantId, row.secret_id, row.secret_ciphertext)
    if (opened.size >= OPENED_MAX) opened.clear()
    opened.set(cacheKey, { keys: serviceKey, sealed: Buffer.from(row.secret_ciphertext), secret })
    return { id: row.secret_id, secret }
  } catch (e) {
    throw new UndecryptableSecret(tenantId, row.secret_id, e)
  }
}

/** Secrets opened by this process, by workspace and id, with the sealed bytes and the key (ring) that opened them. */
const opened = new Map<string, { keys: Uint8Array | readonly Uint8Array[]; sealed: Buffer; secret: string }>()
const OPENED_MAX = 4096
/** The same service keys (the same objects, in order): a ring is built anew per call from the same keys. */
function sameKeys(a: Uint8Array | readonly Uint8Array[], b: Uint8Array | readonly Uint8Array[]): boolean {
  if (a instanceof Uint8Array || b instanceof Uint8Array) return a === b
  return a.length === b.length && a.every((k, i) => k === b[i])
}

/**
 * The secret a delivery attempt signs with: the pinned one while it is still usable, otherwise the
 * workspace's active one; null when the workspace has none (the delivery is then refused).
 */
export async function secretForSigning(sql: Tx, serviceKey: Uint8Array | readonly Uint8Array[], tenantId: string, pinnedId: string | null): Promise<SigningSecret | null> {
  const [row] = await sql<{ secret_id: string | null; secret_ciphertext: Uint8Array | null }[]>`
    select usable_secret.id as secret_id, usable_secret.secret_ciphertext
    from (select ${tenantId}::uuid as tenant_id, ${pinnedId}::uuid as pinned_id) p
    ${usableSecretJoin(sql, 'p.tenant_id', 'p.pinned_id')}`
  return openUsableSecret(serviceKey, tenantId, row!)
}

/** Signing-secret routes. */
export function signingSecretRoutes(deps: AppDeps) {
  const { sql } = deps
  return new Elysia({ name: 'webhook-signing-secret' })
    .use(accessControl(deps.authenticate))
    .get('/v1/webhook-signing-secret', async ({ principal }) => {
      const tenantId = tenantOf(principal)
      const rows = await sql<(SecretMeta & { active: boolean })[]>`
        select id, secret_last4, created_at, revoke_at, rotated_out_at is null as active
        from webhook_signing_secrets
        where tenant_id = ${tenantId} and (rotated_out_at is null or revoke_at > now())
        order by id desc`
      const active = rows.find((r) => r.active)
      if (!active) throw problems.notFound('signing secret (the first rotate mints it)')
      const previous = rows.find((r) => !r.active)
      return {
        id: active.id,
        secret_last4: active.secret_last4,
        created_at: active.created_at.toISOString(),
        rotated_at: active.created_at.toISOString(),
        ...(previous ? { previous: { id: previous.id, secret_last4: previous.secret_last4, revoke_at: previous.revoke_at!.toISOString() } } : {}),
      }
    }, {
      access: NOTIFICATIONS_READ,
      detail: {
        summary: "Read the workspace's webhook signing secret metadata (never the value)",
        tags: ['Notifications'],
        responses: responses({ 200: SigningSecretMetadata }, ['not_found']),
      },
    })
    .post('/v1/webhook-signing-secret/rotate', async ({ principal, set }) => {
      const tenantId = tenantOf(principal)
      const rotated = await sql.begin((tx) => rotateSecret(tx, deps.secretKey, tenantId))
      set.headers['cache-control'] = 'no-store'
      return rotated
    }, {
      access: NOTIFICATIONS_WRITE,
      detail: {
        summary: 'Rotate the webhook signing secret (the first rotate mints it); the full secret is shown only here',
        description: 'The previous secret stays valid for 24 hours (previous_revoke_at), then its value is destroyed. Deliveries already in a retry cycle keep the secret they pinned at their first attempt.',
        tags: ['Notifications'],
        responses: responses({ 200: SigningSecretRotated }, []),
      },
    })
}

/**
 * Moves every stored secret value to the current service key (a key rotation's re-encryption):
 * a value that opens with the current key stays; one that opens with a previous key is sealed
 * again under the current one; one that opens with none is counted (it was sealed under a key no
 * longer configured). In the caller's transaction, rows locked.
 */
export async function reencryptSecrets(tx: Tx, current: Uint8Array, previous: readonly Uint8Array[]): Promise<{ moved: number; current: number; unreadable: number }> {
  const rows = await tx<{ tenant_id: string; id: string; secret_ciphertext: Uint8Array }[]>`
    select tenant_id, id, secret_ciphertext from webhook_signing_secrets where secret_ciphertext is not null for update`
  const out = { moved: 0, current: 0, unreadable: 0 }
  for (const row of rows) {
    try { openSecret(current, row.tenant_id, row.id, row.secret_ciphertext); out.current++; continue } catch { /* not under the current key */ }
    let plain: string | undefined
    for (const key of previous) {
      try { plain = openSecret(key, row.tenant_id, row.id, row.secret_ciphertext); break } catch { /* try the next */ }
    }
    if (plain === undefined) { out.unreadable++; continue }
    await tx`update webhook_signing_secrets set secret_ciphertext = ${sealSecret(current, row.tenant_id, row.id, plain)}
      where tenant_id = ${row.tenant_id} and id = ${row.id}`
    out.moved++
  }
  return out
}
