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
import { readCappedText } from '../http/body'
import { charLength } from '../http/json-text'
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

/** The largest exchange body read: `{handoff, host_origin}` is about 350 bytes at most. */
export const EXCHANGE_MAX_BYTES = 4096

const isJsonType = (contentType: string) => /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType)

/**
 * Reads the exchange body `{handoff, host_origin}` itself (the global JSON parser exempts this path):
 * null for anything else, a body that is not JSON, another content type, an empty or oversized body
 * or one that is not UTF-8 included, so that every failure of the exchange is the same 401.
 */
export async function readExchangeBody(request: Request): Promise<{ handoff: string; hostOrigin: string } | null> {
  if (!isJsonType(request.headers.get('content-type') ?? '')) return null
  let value: unknown
  try {
    value = JSON.parse(await readCappedText(request, EXCHANGE_MAX_BYTES))
  } catch {
    return null
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null
  const { handoff, host_origin: hostOrigin } = value as { handoff?: unknown; host_origin?: unknown }
  if (!isSecretShaped(handoff) || typeof hostOrigin !== 'string' || hostOrigin.length === 0 || charLength(hostOrigin) > 255) return null
  return { handoff, hostOrigin }
}

/** The exchange route; public (the frame has no credential yet), every failure the same 401. */
export function sessionRoutes(deps: AppDeps) {
  const { sql, config } = deps
  return new Elysia({ name: 'embed-sessions' })
    .use(accessControl(deps.authenticate))
    .post('/v1/embed/sessions', async ({ request, set }) => {
      // No schema and no body parser: a malformed exchange is a failed exchange, and every failure is one 401.
      const b = await readExchangeBody(request)
      if (!b) throw problems.unauthorized()
      const session = await exchangeHandoff(sql, b.handoff, b.hostOrigin, config.embedSessionTtlSeconds)
      if (!session) throw problems.unauthorized()
      set.status = 201
      set.headers['cache-control'] = 'no-store'
      return session
    }, {
      access: { public: true },
      // The route reads its own body (readExchangeBody); no parser may answer 400, 413 or 415 first.
      parse: () => null,
      detail: {
        summary: 'Exchange a handoff for a read-only embed session (called by the frame)',
        // The body {handoff, host_origin} is described in words, not as a validated schema: a body
        // that breaks it is a failed exchange (401), never a 400, 413, 415 or 422.
        description: 'Body: `{"handoff": "<from svc:init>", "host_origin": "<the origin the frame pinned>"}` as `application/json`. Any failure (a body that is not JSON, another content type, an empty or oversized body, a malformed body, an unknown, expired or spent handoff, another origin, an origin no longer allow-listed, an inactive person, a case not in the workspace) is the same 401.',
        tags: ['Embed'],
        requestBody: { required: true, content: { 'application/json': { schema: SessionCreate } } },
        // The exchange answers every failure with 401, these included; 400, 413 and 415 stay listed
        // only because the frozen /v1 surface (Versioning 2) had them before the route read its own body.
        responses: responses({ 201: EmbedSession }, ['unauthorized', 'malformed', 'payload_too_large', 'unsupported_media_type']),
      },
    })
}
