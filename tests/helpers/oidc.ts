/**
 * A local OIDC issuer: discovery document and JWKS over HTTP, tokens signed with `jose`. A second
 * key pair that the JWKS does not list stands in for a forger.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload, type CryptoKey } from 'jose'

/** A running issuer. */
export interface TestIssuer {
  issuer: string
  /** Signs an access token for `sub` (1 h unless `exp` is given) with extra claims. */
  token(sub: string, claims?: JWTPayload & { exp?: number }, opts?: { forged?: boolean; issuer?: string }): Promise<string>
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
  const sign = (key: CryptoKey, payload: JWTPayload, iss: string, exp: number) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setIssuedAt().setExpirationTime(exp).sign(key)
  return {
    issuer: base,
    token(sub, claims = {}, opts = {}) {
      const { exp, ...rest } = claims
      return sign(opts.forged ? forger.privateKey : privateKey, { sub, ...rest }, opts.issuer ?? base, exp ?? Math.floor(Date.now() / 1000) + 3600)
    },
    stop: () => server.stop(true),
  }
}
