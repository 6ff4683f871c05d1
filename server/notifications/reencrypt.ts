/**
 * Service key rotation: with SVC_SECRET_KEY set to a new key and the old one in
 * SVC_SECRET_KEY_PREVIOUS, the `secret_key_reencrypt` job seals every stored secret value again
 * under the new key (values still open with either key meanwhile, so nothing stops). A runner arms
 * it at start whenever previous keys are configured; it runs once and logs what it moved. When its
 * line has been logged (`moved`, `already_current`, `unreadable: 0`), SVC_SECRET_KEY_PREVIOUS can be removed
 * (after the longest-lived cursor or upload URL signed with the old key has expired: 15 minutes for
 * upload URLs).
 */
import type { Sql } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { defineJobKind } from '../../jobs/define'
import { reencryptSecrets } from './signing-secret'

/** The job kind name. */
export const REENCRYPT_JOB_KIND = 'secret_key_reencrypt'

/** Enqueues the re-encryption unless one is already waiting (several runners may arm it at once). */
export async function armReencryption(sql: Sql): Promise<void> {
  await sql`
    insert into jobs (id, kind, tenant_id, payload, run_at)
    select ${Bun.randomUUIDv7()}, ${REENCRYPT_JOB_KIND}, null, '{}'::jsonb, now()
    where not exists (select 1 from jobs where kind = ${REENCRYPT_JOB_KIND} and dead_at is null)`
}

/** The job kind; a runner arms it at start while previous keys are configured (a rotation in progress). */
export function reencryptJobKind() {
  return defineJobKind({
    name: REENCRYPT_JOB_KIND,
    payload: Type.Object({}),
    tenantScoped: false,
    maxAttempts: 5,
    arm: async (deps) => { if (deps.previousSecretKeys.length > 0) await armReencryption(deps.sql) },
    async handler(tx, _job, deps) {
      // Serialise with another runner's run of the same job (two arms can race past the not-exists).
      await tx`select pg_advisory_xact_lock(hashtext('svc:secret-key-reencrypt'))`
      const out = await reencryptSecrets(tx, deps.secretKey, deps.previousSecretKeys)
      deps.log.log(out.unreadable > 0 ? 'warn' : 'info', 'secret key re-encryption finished', {
        moved: out.moved, already_current: out.current, unreadable: out.unreadable,
      })
    },
  })
}
