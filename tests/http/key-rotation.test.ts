/**
 * Service key rotation without downtime: processes started with SVC_SECRET_KEY = the new key and
 * SVC_SECRET_KEY_PREVIOUS = the old one accept cursors and upload URLs signed with the old key, open
 * signing secrets sealed under it, and the re-encryption job moves every stored secret to the new key;
 * what they sign from then on is signed with the new key only.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { call, startApp, type TestApp } from '../helpers/app'
import { putBytes, startUpload, textSample } from '../helpers/samples'
import { loadConfig, ConfigError } from '../../server/config'
import { wireDeps } from '../../server/wiring'
import { createApp } from '../../server/app'
import { createLogger } from '../../server/observability/log'
import { SERVER_BODY_LIMIT } from '../../server/http/body'
import { openSecret, secretForSigning } from '../../server/notifications/signing-secret'
import { armReencryption } from '../../server/notifications/reencrypt'
import { runJobsUntilIdle } from '../../jobs/runner'
import { JOB_KINDS } from '../../server/job-kinds'
import type { AppDeps } from '../../server/deps'

setDefaultTimeout(60_000)

const oldKey = randomBytes(32).toString('base64')
const newKey = randomBytes(32).toString('base64')
let app: TestApp
let rotated: { deps: AppDeps; url: string; stop: () => Promise<void> }

beforeAll(async () => {
  app = await startApp({ env: { SVC_SECRET_KEY: oldKey }, runner: false })
  // A second process over the same database after the rotation: the new key, the old one previous.
  const config = loadConfig({ SVC_SECRET_KEY: newKey, SVC_SECRET_KEY_PREVIOUS: oldKey, DATABASE_URL: app.config.databaseUrl, SVC_DATA_DIR: app.config.dataDir, PORT: '0' })
  const deps = wireDeps(config, app.db, () => false, { log: createLogger({ stdoutLevel: 'warn' }) })
  const server = createApp(deps).listen({ port: 0, hostname: '127.0.0.1', maxRequestBodySize: SERVER_BODY_LIMIT })
  rotated = { deps, url: `http://127.0.0.1:${server.server!.port}`, stop: async () => { await deps.events.close(); await deps.parser.close(); await server.stop(true) } }
}, 120_000)
afterAll(async () => {
  await rotated?.stop()
  await app.stop()
}, 120_000)

describe('service key rotation', () => {
  test('SVC_SECRET_KEY_PREVIOUS is validated', () => {
    expect(() => loadConfig({ SVC_SECRET_KEY: newKey, SVC_SECRET_KEY_PREVIOUS: 'short' })).toThrow(ConfigError)
    expect(() => loadConfig({ SVC_SECRET_KEY_PREVIOUS: oldKey })).toThrow('SVC_SECRET_KEY_PREVIOUS needs SVC_SECRET_KEY')
    expect(loadConfig({ SVC_SECRET_KEY: newKey, SVC_SECRET_KEY_PREVIOUS: `${oldKey}, ${randomBytes(32).toString('base64')}` }).previousSecretKeys).toHaveLength(2)
  })

  test('old cursors and upload URLs stay valid; stored secrets open, then move to the new key', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write', 'scenarios:read', 'notifications:write'])
    for (let i = 0; i < 3; i++) expect((await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `c${i}` } })).status).toBe(201)
    const secret = (await call(app.url, 'POST', '/v1/webhook-signing-secret/rotate', { token: key })).body
    const page = await call(app.url, 'GET', '/v1/scenarios?limit=1', { token: key })
    const oldCursor = page.body.next_cursor as string
    expect(oldCursor).toBeString()
    const scenarioId = page.body.items[0].id
    const file = { filename: 'a.txt', contentType: 'text/plain', bytes: textSample() }
    const start = await startUpload(app, key, scenarioId, file)
    expect(start.status).toBe(201)

    // The rotated process: the old cursor continues the list; the old upload URL takes the bytes.
    const next = await call(rotated.url, 'GET', `/v1/scenarios?limit=1&cursor=${encodeURIComponent(oldCursor)}`, { token: key })
    expect(next.status).toBe(200)
    expect(next.body.items[0].id).not.toBe(scenarioId)
    expect((await putBytes({ url: rotated.url } as TestApp, start.body.upload, file.bytes)).status).toBe(204)
    // A cursor signed with a key that is neither is refused.
    const forged = `${oldCursor.split('.')[0]}.${randomBytes(16).toString('base64url')}`
    expect((await call(rotated.url, 'GET', `/v1/scenarios?limit=1&cursor=${encodeURIComponent(forged)}`, { token: key })).status).toBe(422)
    // New cursors are signed with the new key: the old process (without it) refuses them.
    const fresh = await call(rotated.url, 'GET', '/v1/scenarios?limit=1', { token: key })
    expect((await call(app.url, 'GET', `/v1/scenarios?limit=1&cursor=${encodeURIComponent(fresh.body.next_cursor)}`, { token: key })).status).toBe(422)

    // The signing secret sealed under the old key opens with the key ring ...
    const ring = [rotated.deps.secretKey, ...rotated.deps.previousSecretKeys]
    expect(await secretForSigning(app.sql, ring, t.id, null)).toEqual({ id: secret.id, secret: secret.secret })
    const sealed = async () => (await app.sql`select secret_ciphertext from webhook_signing_secrets where id = ${secret.id}`)[0]!.secret_ciphertext as Uint8Array
    expect(() => openSecret(rotated.deps.secretKey, t.id, secret.id, sealed as never)).toThrow()
    // ... and the re-encryption job moves it to the new key alone.
    await armReencryption(app.sql)
    await armReencryption(app.sql) // armed twice (two runners): one job
    const [{ n }] = await app.sql`select count(*)::int as n from jobs where kind = 'secret_key_reencrypt'` as unknown as [{ n: number }]
    expect(n).toBe(1)
    expect(await runJobsUntilIdle(rotated.deps, JOB_KINDS)).toBeGreaterThanOrEqual(1)
    const moved = await sealed()
    expect(openSecret(rotated.deps.secretKey, t.id, secret.id, moved)).toBe(secret.secret)
    expect(() => openSecret(Buffer.from(oldKey, 'base64'), t.id, secret.id, moved)).toThrow()
    // Deliveries sign with the same secret value after the move.
    expect(await secretForSigning(app.sql, rotated.deps.secretKey, t.id, null)).toEqual({ id: secret.id, secret: secret.secret })
  })
})
