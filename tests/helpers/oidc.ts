/**
 * A local OIDC issuer: discovery document and JWKS over HTTP, tokens signed with `jose`. A second
 * key pair that the JWKS does not list stands in for a forger. Tokens name TEST_AUDIENCE in `aud`
 * unless told otherwise; `env` configures an app to trust the issuer.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose'

/** The audience test tokens carry and test apps expect (SVC_OIDC_AUDIENCE). */
export const TEST_AUDIENCE = 'svc-test-api'

/** How a test token is made beyond its claims. */
export interface TokenOptions {
  /** Signed with a key the JWKS does not list. */
  forged?: boolean
  /** Another `iss`. */
  issuer?: string
  /** Another `aud` (null: no aud claim at all); TEST_AUDIENCE by default. */
  audience?: string | string[] | null
  /** The JOSE header `typ` (absent by default). */
  typ?: string
  /** The `iat` claim, seconds since the epoch (now by default). */
  issuedAt?: number
}

/** A running issuer. */
export interface TestIssuer {
  issuer: string
  /** The audience its tokens carry by default (TEST_AUDIENCE). */
  audience: string
  /** The environment of an app that trusts this issuer: SVC_OIDC_ISSUER and SVC_OIDC_AUDIENCE. */
  env: { SVC_OIDC_ISSUER: string; SVC_OIDC_AUDIENCE: string }
  /** Signs an access token for `sub` (1 h unless `exp` is given) with extra claims. */
  token(sub: string, claims?: JWTPayload & { exp?: number }, opts?: TokenOptions): Promise<string>
  stop(): void
}

/** Starts an issuer on a random loopback port. */
export async function startIssuer(): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true })
  const forger = await generateKeyPair('RS256', { extractable: true })
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }
  let base = ''
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/.well-known/openid-configuration') return Response.json({ issuer: base, jwks_uri: `${base}/jwks` })
      if (path === '/jwks') return Response.json({ keys: [jwk] })
      return new Response('not found', { status: 404 })
    },
  })
  base = `http://127.0.0.1:${server.port}`
  const sign = (key: CryptoKey, payload: JWTPayload, iss: string, exp: number, typ: string | undefined, iat: number | undefined) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1', ...(typ !== undefined ? { typ } : {}) })
      .setIssuer(iss).setIssuedAt(iat).setExpirationTime(exp).sign(key)
  return {
    issuer: base,
    audience: TEST_AUDIENCE,
    env: { SVC_OIDC_ISSUER: base, SVC_OIDC_AUDIENCE: TEST_AUDIENCE },
    token(sub, claims = {}, opts = {}) {
      const { exp, ...rest } = claims
      const audience = opts.audience === undefined ? TEST_AUDIENCE : opts.audience
      const payload: JWTPayload = { sub, ...(audience !== null ? { aud: audience } : {}), ...rest }
      return sign(opts.forged ? forger.privateKey : privateKey, payload, opts.issuer ?? base, exp ?? Math.floor(Date.now() / 1000) + 3600, opts.typ, opts.issuedAt)
    },
    stop: () => server.stop(true),
  }
}
