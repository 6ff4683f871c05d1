/**
 * User tokens must be access tokens for this service: `aud` names SVC_OIDC_AUDIENCE and the JOSE
 * header `typ` is an access-token type (absent, JWT, at+jwt, application/at+jwt). A token of the
 * trusted issuer for another application, without an audience, or typed as another kind of token
 * (an ID token without at_hash or nonce included) gets the same 401 as any other authentication
 * failure: same body but for request_id, same headers. So does a token issued in the future beyond
 * a small clock skew (IAT_CLOCK_SKEW_S).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type Reply, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const AUDIENCE = 'https://underwriting.example/api'

let app: TestApp
let issuer: TestIssuer

beforeAll(async () => {
  issuer = await startIssuer()
  // Two accepted audiences (a rename in progress); every token below names neither unless it should pass.
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OIDC_AUDIENCE: `${AUDIENCE},svc-api-legacy` }, runner: false })
  const t = await app.tenant()
  await app.member(t.id, 'aud-member', 'viewer')
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

const read = (token: string) => call(app.url, 'GET', '/v1/scenarios', { token })
const member = (opts: Parameters<TestIssuer['token']>[2] = {}, claims: Record<string, unknown> = {}) =>
  issuer.token('aud-member', claims, { audience: AUDIENCE, ...opts })

/** What must be identical in every 401: status, the body but request_id, the header names and WWW-Authenticate. */
const shapeOf401 = (r: Reply, cause: string) => {
  expect(r.status, cause).toBe(401)
  expect(r.headers.get('www-authenticate'), cause).toBe('Bearer')
  const p = problemOf(r)
  return { body: JSON.stringify({ ...p, request_id: null }), headers: [...r.headers.keys()].sort().join(',') }
}

describe('the issue time', () => {
  test('a token issued an hour in the future is the same 401 as a forged one; one within the clock skew reads', async () => {
    const now = Math.floor(Date.now() / 1000)
    const reference = shapeOf401(await read(await member({ forged: true })), 'forged')
    for (const ahead of [3600, 600]) {
      const r = await read(await member({ issuedAt: now + ahead }, { exp: now + ahead + 3600 }))
      expect(shapeOf401(r, `iat +${ahead} s`)).toEqual(reference)
    }
    expect((await read(await member({ issuedAt: now + 20 }))).status).toBe(200)
    expect((await read(await member({ issuedAt: now - 600 }))).status).toBe(200)
  })
})

describe('the audience', () => {
  test('a token naming the service (alone, in a list, or the second configured audience) reads the workspace', async () => {
    for (const audience of [AUDIENCE, ['some-other-app', AUDIENCE], 'svc-api-legacy']) {
      const r = await read(await member({ audience }))
      expect(r.status, JSON.stringify(audience)).toBe(200)
    }
  })

  test('a token for another application, or without aud, is the same 401 as a forged or unknown one', async () => {
    const reference = {
      garbage: await read('garbage.token.here'),
      forged: await read(await member({ forged: true })),
      'unknown subject': await read(await issuer.token('nobody', {}, { audience: AUDIENCE })),
    }
    const wrong: Record<string, string | string[] | null> = {
      'another application': 'some-other-app',
      'the issuer itself': issuer.issuer,
      'a near miss (trailing slash)': `${AUDIENCE}/`,
      'a near miss (case)': AUDIENCE.toUpperCase(),
      'a list of other applications': ['some-other-app', 'yet-another-app'],
      'an empty list': [],
      'an empty string': '',
      'no aud claim': null,
    }
    const shapes = Object.entries(reference).map(([cause, r]) => shapeOf401(r, cause))
    for (const [cause, audience] of Object.entries(wrong)) shapes.push(shapeOf401(await read(await member({ audience })), cause))
    // The token helper's default audience (the one other test files use) is not this app's either.
    shapes.push(shapeOf401(await read(await issuer.token('aud-member')), 'the default test audience'))
    expect(new Set(shapes.map((s) => s.body)).size).toBe(1)
    expect(new Set(shapes.map((s) => s.headers)).size).toBe(1)
    expect(JSON.parse(shapes[0]!.body)).toMatchObject({ type: 'urn:svc:error:unauthorized', status: 401, title: 'Unauthorized' })
  })
})

describe('the token type', () => {
  test('access-token types pass: absent, JWT, at+jwt, application/at+jwt (any case)', async () => {
    for (const typ of [undefined, 'JWT', 'jwt', 'at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/AT+JWT']) {
      expect((await read(await member({ typ }))).status, String(typ)).toBe(200)
    }
  })

  test('any other typ is the same 401 as any other failure, even without at_hash and nonce', async () => {
    const shapes = [shapeOf401(await read('garbage.token.here'), 'garbage'), shapeOf401(await read(await member({ audience: 'some-other-app' })), 'audience')]
    for (const typ of ['id_token', 'application/id_token+jwt', 'id_token+jwt', 'logout+jwt', 'secevent+jwt', 'JOSE', 'JOSE+JSON', 'dpop+jwt', 'at+jwt; x=1', '']) {
      shapes.push(shapeOf401(await read(await member({ typ })), `typ ${JSON.stringify(typ)}`))
    }
    expect(new Set(shapes.map((s) => s.body)).size).toBe(1)
    expect(new Set(shapes.map((s) => s.headers)).size).toBe(1)
  })
})
