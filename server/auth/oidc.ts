/**
 * User access tokens: JWTs of the one configured issuer, verified with `jose` against the JWKS named
 * by the issuer's discovery document (fetched once; jose refreshes the key set on an unknown kid).
 * A token must name this service in `aud` (SVC_OIDC_AUDIENCE) and must be an access token: a JOSE
 * header `typ` other than `at+jwt` (RFC 9068), `application/at+jwt` or `JWT` is refused, and so
 * are ID tokens by their claims (at_hash or nonce). Claims read: sub, iss, aud and the organization
 * claim. Every refusal is the same null, so the caller answers the same 401 whatever the cause.
 */
import { createRemoteJWKSet, jwtVerify, errors as joseErrors } from 'jose'

/** Seconds a token's `iat` may lie ahead of this server's clock (clocks of issuer and service differ a little). */
export const IAT_CLOCK_SKEW_S = 60
import { ProblemError } from '../http/problem'

/** The claims the service reads from an access token. */
export interface TokenClaims { sub: string; organization: string | undefined }

/** Verifies a bearer JWT; null for any invalid token, 503 when the issuer cannot be reached. */
export type TokenVerifier = (token: string) => Promise<TokenClaims | null>

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

/**
 * Whether a JOSE header `typ` admits an access token: absent, `JWT` (issuers that predate RFC
 * 9068), or `at+jwt` with or without the `application/` prefix (media types are case-insensitive).
 * Anything else (`id_token`, `logout+jwt`, `JOSE`, a non-string) names another kind of token.
 */
export function isAccessTokenType(typ: unknown): boolean {
  if (typ === undefined) return true
  if (typeof typ !== 'string') return false
  const t = typ.toLowerCase().replace(/^application\//, '')
  return t === 'jwt' || t === 'at+jwt'
}

/** Creates the verifier for `issuer`; tokens must name one of `audience` in `aud`; `orgClaim` names the organization claim. */
export function createTokenVerifier(issuer: string, audience: readonly string[], orgClaim: string): TokenVerifier {
  if (audience.length === 0) throw new Error('a token verifier needs at least one audience')
  let keySet: ReturnType<typeof createRemoteJWKSet> | undefined
  let discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined

  const discover = async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) })
    if (!res.ok) throw new Error(`discovery answered ${res.status}`)
    const doc = (await res.json()) as { issuer?: string; jwks_uri?: string }
    if (doc.issuer?.replace(/\/+$/, '') !== issuer || !doc.jwks_uri) throw new Error('discovery document does not match the issuer')
    return createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: 5000, cooldownDuration: 30_000 })
  }

  const keys = async () => {
    if (keySet) return keySet
    discovering ??= discover().finally(() => { discovering = undefined })
    keySet = await discovering
    return keySet
  }

  return async (token) => {
    let jwks: ReturnType<typeof createRemoteJWKSet>
    try {
      jwks = await keys()
    } catch {
      throw new ProblemError('unavailable', 'The identity provider cannot be reached.', { retryAfterSeconds: 5 })
    }
    try {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer, audience: [...audience], algorithms: ALGORITHMS, requiredClaims: ['sub', 'exp', 'aud'],
      })
      if (!isAccessTokenType(protectedHeader.typ)) return null
      if ('at_hash' in payload || 'nonce' in payload) return null
      if (typeof payload.sub !== 'string' || payload.sub === '') return null
      // Issued in the future beyond a small clock skew: not a token this issuer made now (a forged
      // clock, or one minted ahead to outlive a revocation); jose checks iat only with maxTokenAge.
      if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + IAT_CLOCK_SKEW_S) return null
      const org = payload[orgClaim]
      return { sub: payload.sub, organization: typeof org === 'string' ? org : undefined }
    } catch (e) {
      if (e instanceof joseErrors.JWKSTimeout) {
        throw new ProblemError('unavailable', 'The identity provider cannot be reached.', { retryAfterSeconds: 5 })
      }
      return null
    }
  }
}
