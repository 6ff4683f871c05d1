/**
 * Audit events: the workspace's append-only chain, as GET /v1/audit-events returns it.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, named, OneOf, pageQuery } from './common'

/** Who did something: a member, an API key, a platform operator or the operator CLI. */
export const AuditActor = t.Object({
  kind: OneOf(['user', 'api_key', 'embed', 'operator', 'cli']),
  id: t.Optional(t.String({ description: 'The member or API key id' })),
  sub: t.Optional(t.String({ description: 'The operator subject' })),
})

/** One entry of the chain. */
export const AuditEvent = named('AuditEvent', t.Object({
  id: Uuid,
  seq: Int({ minimum: 1, description: 'Position in the workspace chain, from 1 without gaps' }),
  kind: t.String({ description: 'e.g. tenant.settings.updated' }),
  actor: AuditActor,
  data: t.Record(t.String(), t.Unknown(), { description: 'Kind-specific; tenant.settings.updated carries before and after' }),
  occurred_at: Timestamp,
  prev_hash: t.Optional(t.String({ description: 'Hash of the previous entry; absent on the first' })),
  hash: t.String({ description: 'Lower-case hex SHA-256 of the canonical JSON of this entry (prev_hash included)' }),
}))

/** GET /v1/audit-events query. */
export const AuditListQuery = Type.Object({
  ...pageQuery,
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only entries of this kind' })),
})
