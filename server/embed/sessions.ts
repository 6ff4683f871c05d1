/**
 * Embed sessions: POST /v1/embed/sessions exchanges a handoff for an opaque read-only bearer, and
 * the resolver turns that bearer back into an `embed` principal (wired into authentication).
 * The exchange spends the handoff atomically and re-verifies independently every condition of
 * Authentication 9; every failure, whatever its cause, is the same 401. Owns `embed_sessions`.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Sql } from '../db/connect'
import { accessControl } from '../auth/access'
import type { EmbedSessionResolver, Principal } from '../auth/principal'
import { problems } from '../http/problem'
import { responses } from '../http/docs'
import { hashSecret, isSecretShaped, mintSecret } from './secrets'
import { allowedOrigins } from './origins'
import { EmbedSession, SessionCreate } from './schemas'
import { workspaceTimeZone } from '../local-time'

/** A successful exchange; `time_zone` is the workspace's, in which the frame shows times. */
export interface ExchangedSession { session: string; scenario_id: string; expires_at: string; expires_in: number; time_zone: string }

/**
 * Spends a handoff and, when every condition holds, opens a session; null on any failure. The
 * spend is one conditional UPDATE, so of two concurrent exchanges exactly one sees the row; a
 * presented handoff is spent whatever the outcome (single use).
 */
export async function exchangeHandoff(sql: Sql, handoff: string, hostOrigin: string, ttlSeconds: number): Promise<ExchangedSession | null> {
  return sql.begin(async (tx) => {
    const [h] = await tx<{ tenant_id: string; id: string; scenario_id: string; host_origin: string; subject_email: string; live: boolean }[]>`
      update embed_handoffs set spent_at = now()
      where handoff_hash = ${hashSecret(handoff)} and spent_at is null
      returning tenant_id, id, scenario_id, host_origin, subject_email, expires_at > now() as live`
    if (!h || !h.live) return null
    if (h.host_origin !== hostOrigin) return null
    const [tenant] = await tx`select status from tenants where id = ${h.tenant_id}`
    if (tenant?.status !== 'active') return null
    if (!(await allowedOrigins(tx, h.tenant_id)).includes(h.host_origin)) return null
    const [user] = await tx<{ id: string }[]>`
      select id from users
      where tenant_id = ${h.tenant_id} and lower(email) = lower(${h.subject_email}) and status = 'active'`
    if (!user) return null
    const [scenario] = await tx`select 1 from scenarios where tenant_id = ${h.tenant_id} and id = ${h.scenario_id}`
    if (!scenario) return null
    const { plaintext, hash } = mintSecret()
    const [row] = await tx<{ expires_at: Date }[]>`
      insert into embed_sessions (tenant_id, id, token_hash, handoff_id, scenario_id, user_id, host_origin, expires_at)
      values (${h.tenant_id}, ${Bun.randomUUIDv7()}, ${hash}, ${h.id}, ${h.scenario_id}, ${user.id}, ${h.host_origin},
              now() + make_interval(secs => ${ttlSeconds}))
      returning expires_at`
    return {
      session: plaintext, scenario_id: h.scenario_id, expires_at: row!.expires_at.toISOString(), expires_in: ttlSeconds,
      time_zone: await workspaceTimeZone(tx, h.tenant_id),
    }
  })
}

/**
 * Resolves a session bearer to a read-only `embed` principal, or null when it is unknown or
 * lapsed, its person is no longer an active member, or its host origin has left the allow-list.
 */
export function createEmbedSessionResolver(sql: Sql): EmbedSessionResolver {
  return async (bearer: string): Promise<Principal | null> => {
    if (!isSecretShaped(bearer)) return null
    const [s] = await sql<{ tenant_id: string; id: string; scenario_id: string; expires_at: Date; tenant_status: 'active' | 'suspended' }[]>`
      select s.tenant_id, s.id, s.scenario_id, s.expires_at, t.status as tenant_status
      from embed_sessions s
      join tenants t on t.id = s.tenant_id
      join users u on u.tenant_id = s.tenant_id and u.id = s.user_id
      where s.token_hash = ${hashSecret(bearer)}
        and s.expires_at > now()
        and u.status = 'active'
        and exists (
          select 1 from tenant_settings ts
          where ts.tenant_id = s.tenant_id and s.host_origin = any (ts.embed_allowed_origins))`
    if (!s) return null
    return { kind: 'embed', tenantId: s.tenant_id, tenantStatus: s.tenant_status, sessionId: s.id, scenarioId: s.scenario_id, expiresAt: s.expires_at }
  }
}

/** The exchange route; public (the frame has no credential yet), every failure the same 401. */
export function sessionRoutes(deps: AppDeps) {
  const { sql, config } = deps
  return new Elysia({ name: 'embed-sessions' })
    .use(accessControl(deps.authenticate))
    .post('/v1/embed/sessions', async ({ body, set }) => {
      // No schema option: a malformed exchange is a failed exchange, and every failure is one 401.
      const b = body as { handoff?: unknown; host_origin?: unknown } | null
      if (!b || typeof b !== 'object' || !isSecretShaped(b.handoff) || typeof b.host_origin !== 'string') throw problems.unauthorized()
      const session = await exchangeHandoff(sql, b.handoff, b.host_origin, config.embedSessionTtlSeconds)
      if (!session) throw problems.unauthorized()
      set.status = 201
      set.headers['cache-control'] = 'no-store'
      return session
    }, {
      access: { public: true },
      detail: {
        summary: 'Exchange a handoff for a read-only embed session (called by the frame)',
        // The body {handoff, host_origin} is described in words, not as a validated schema: a body
        // that breaks it is a failed exchange (401), never a 422.
        description: 'Body: `{"handoff": "<from svc:init>", "host_origin": "<the origin the frame pinned>"}`. Any failure (a malformed body, an unknown, expired or spent handoff, another origin, an origin no longer allow-listed, an inactive person, a case not in the workspace) is the same 401.',
        tags: ['Embed'],
        requestBody: { required: true, content: { 'application/json': { schema: SessionCreate } } },
        responses: responses({ 201: EmbedSession }, ['unauthorized', 'malformed', 'payload_too_large', 'unsupported_media_type']),
      },
    })
}
