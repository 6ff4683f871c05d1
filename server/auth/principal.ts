/**
 * Who is calling: the credential of `Authorization: Bearer` resolved to a principal. Every way a
 * credential can fail (absent, garbage, bad signature, expired, unknown subject or key, wrong
 * organization, revoked) ends in the same 401.
 */
import type { Sql } from '../db/connect'
import { problems, ProblemError } from '../http/problem'
import { apiKeyDigest, isWellFormedApiKey, looksLikeApiKey } from './api-key-format'
import type { TokenVerifier } from './oidc'
import { CredentialCache, type CacheRegistry } from './credential-cache'
import { type BreakGlassRead, withBreakGlass } from './break-glass-access'

import { ROLES, SCOPES, type Role, type Scope } from '../../schemas/access'
import type { Principal } from './principal-kinds'

export { ROLES, SCOPES, type Role, type Scope }
export type { Principal }

/** Resolves an embed session bearer (provided by the embed issue); null when unknown or lapsed. */
export type EmbedSessionResolver = (bearer: string) => Promise<Principal | null>

/** `Bearer <credential>` (the scheme in any case). */
const BEARER = /^Bearer ([^\s]+)$/i

/** The credential of an Authorization header, or undefined when it is not `Bearer <credential>`. */
const bearerCredential = (authorization: string | null): string | undefined => (authorization ? BEARER.exec(authorization.trim())?.[1] : undefined)

/** What authentication needs. */
export interface AuthenticatorDeps {
  sql: Sql
  verifyToken: TokenVerifier | undefined
  operatorSubjects: ReadonlySet<string>
  resolveEmbedSession?: EmbedSessionResolver
  /** Where the credential caches report their figures (the operator surface). */
  caches?: CacheRegistry
}

/** The membership facts authentication reads for a JWT subject. */
interface MemberRow { tenant_id: string; id: string; role: Role; tenant_status: 'active' | 'suspended'; organization_id: string | null }

/** Options of one authentication. */
export interface AuthenticateOptions {
  /** Resolve a valid token of a non-member to a `person` (instead of 401 / not_admitted). */
  admitPerson?: boolean
  /**
   * The read may be done under break-glass (a GET of a route marked `breakGlass`): an operator
   * holding an open grant resolves to a `break_glass` principal and the read is audited.
   */
  breakGlass?: BreakGlassRead
}

/** Turns an Authorization header into a principal or the one 401. */
export type Authenticator = (authorization: string | null, options?: AuthenticateOptions) => Promise<Principal>

/** Builds the authenticator over the database and the token verifier. */
export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { sql } = deps
  const keys = new CredentialCache<Principal>(5_000, 10_000, 'credentials.api_keys', deps.caches)
  const members = new CredentialCache<MemberRow | null>(5_000, 10_000, 'credentials.members', deps.caches)

  /** An API key's principal: from the cache without a promise hop (keys stay cached for 5 s), else looked up. */
  const byApiKey = (credential: string): Principal | Promise<Principal> => {
    if (!isWellFormedApiKey(credential)) throw problems.unauthorized()
    const cacheKey = apiKeyDigest(credential)
    return keys.get(cacheKey) ?? loadApiKey(cacheKey)
  }

  const loadApiKey = async (cacheKey: string): Promise<Principal> => {
    const [key] = await sql`
      select k.tenant_id, k.id, k.scopes, k.environment, k.expires_at, t.status as tenant_status
      from api_keys k
      join tenants t on t.id = k.tenant_id
      where k.key_hash = ${Buffer.from(cacheKey, 'base64')}
        and k.revoked_at is null
        and (k.expires_at is null or k.expires_at > now())`
    if (!key) throw problems.unauthorized()
    const principal: Principal = {
      kind: 'api_key',
      tenantId: key.tenant_id,
      tenantStatus: key.tenant_status,
      keyId: key.id,
      scopes: key.scopes,
      environment: key.environment,
    }
    keys.set(cacheKey, principal, key.expires_at)
    return principal
  }

  const memberOf = async (sub: string): Promise<MemberRow | null> => {
    const cached = members.get(sub)
    if (cached !== undefined) return cached
    const [member] = await sql<MemberRow[]>`
      select u.tenant_id, u.id, u.role, t.status as tenant_status, t.organization_id
      from users u
      join tenants t on t.id = u.tenant_id
      where u.sub = ${sub} and u.status = 'active'`
    // Only memberships are cached: a newcomer admitted a moment ago must not wait out a miss.
    if (member) members.set(sub, member)
    return member ?? null
  }

  const byToken = async (token: string, options: AuthenticateOptions): Promise<Principal> => {
    if (!deps.verifyToken) throw problems.unauthorized()
    const claims = await deps.verifyToken(token)
    if (!claims) throw problems.unauthorized()
    const operator = deps.operatorSubjects.has(claims.sub)
    const member = await memberOf(claims.sub)
    if (member) {
      // Once a workspace is bound to an organization, the token must state that organization.
      if (member.organization_id !== null && member.organization_id !== claims.organization) throw problems.unauthorized()
      return {
        kind: 'user',
        tenantId: member.tenant_id,
        tenantStatus: member.tenant_status,
        userId: member.id,
        sub: claims.sub,
        role: member.role,
        operator,
      }
    }
    const organization = claims.organization !== undefined ? { organization: claims.organization } : {}
    if (operator) return { kind: 'operator', sub: claims.sub, ...organization }
    if (options.admitPerson) return { kind: 'person', sub: claims.sub, ...organization }
    if (claims.organization !== undefined) {
      const [bound] = await sql`select 1 from tenants where organization_id = ${claims.organization} limit 1`
      if (bound) throw new ProblemError('not_admitted', 'Your organization uses this service, but nobody has admitted you to its workspace yet.')
    }
    throw problems.unauthorized()
  }

  const byCredential = async (authorization: string | null, options: AuthenticateOptions): Promise<Principal> => {
    const credential = bearerCredential(authorization)
    if (!credential) throw problems.unauthorized()
    if (looksLikeApiKey(credential)) return byApiKey(credential)
    if (credential.split('.').length === 3) return byToken(credential, options)
    if (deps.resolveEmbedSession) {
      const embed = await deps.resolveEmbedSession(credential)
      if (embed) return embed
    }
    throw problems.unauthorized()
  }

  const full = async (authorization: string | null, options: AuthenticateOptions): Promise<Principal> => {
    const principal = await byCredential(authorization, options)
    return options.breakGlass ? withBreakGlass(sql, principal, options.breakGlass) : principal
  }

  // Most requests carry an API key whose principal is cached: answered with one promise, not three.
  return (authorization, options = {}) => {
    const credential = options.breakGlass ? undefined : bearerCredential(authorization)
    if (!credential || !looksLikeApiKey(credential)) return full(authorization, options)
    try {
      const principal = byApiKey(credential)
      return principal instanceof Promise ? principal : Promise.resolve(principal)
    } catch (e) {
      return Promise.reject(e)
    }
  }
}
