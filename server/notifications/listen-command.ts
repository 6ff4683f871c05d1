/**
 * `svc listen`: a webhook receiver for development. It starts an HTTPS receiver on loopback with a
 * fresh self-signed certificate, registers it as the workspace's development listener (the one
 * exemption from the private-address refusal, for exactly its URL and certificate, while the command
 * runs), subscribes it to one task or to every task of the workspace as tasks appear, verifies each
 * delivery's signature with the package's own helper (`underwriting-case-service/webhook`), prints
 * it as one JSON line and, with `--forward-to`, POSTs it on unchanged to the user's URL.
 *
 * The database steps are CLI commands of their own (`listen register|refresh|end`) so they run
 * wherever the CLI's commands run: on PostgreSQL directly, or inside the service that owns the
 * embedded database, through its control socket.
 */
import { parseArgs } from 'node:util'
import { generate } from 'selfsigned'
import type { Database } from '../db/connect'
import { loadConfig } from '../config'
import { loadSecretKey } from '../secret-key'
import { findTenantBySlug } from '../workspaces/tenants-store'
import { linkBases } from './envelope'
import { TASK_KINDS, type TaskKind } from './outcomes'
import { endListener, isListenerUrl, refreshListener, registerListener } from './dev-listeners'
import { openSecret, rotateSecret } from './signing-secret'
import { verifyWebhook } from './verify-webhook'
import type { CommandOutcome } from '../control-socket'

/** A refusal of a listen command (the CLI prints it as one line, exit 2). */
export class ListenUsageError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

async function tenantOf(db: Database, slug: unknown) {
  if (typeof slug !== 'string' || slug === '') throw new ListenUsageError('--tenant is required')
  const tenant = await findTenantBySlug(db.sql, slug)
  if (!tenant) throw new ListenUsageError(`no workspace with slug "${slug}"`)
  return tenant
}

/** The usable signing secrets of a workspace, current first; mints the first one when there is none. */
async function signingSecrets(db: Database, tenantId: string): Promise<{ secrets: string[]; minted: boolean }> {
  const config = loadConfig()
  const key = loadSecretKey(config.secretKey, config.dataDir, () => {})
  const keys = [key, ...config.previousSecretKeys]
  const read = () => db.sql<{ id: string; secret_ciphertext: Uint8Array }[]>`
    select id, secret_ciphertext from webhook_signing_secrets
    where tenant_id = ${tenantId} and secret_ciphertext is not null and (rotated_out_at is null or revoke_at > now())
    order by rotated_out_at is null desc, id desc`
  let rows = await read()
  let minted = false
  if (rows.length === 0) {
    await db.sql.begin((tx) => rotateSecret(tx, key, tenantId))
    rows = await read()
    minted = true
  }
  return { secrets: rows.map((r) => openSecret(keys, tenantId, r.id, r.secret_ciphertext)), minted }
}

/** The database steps of `svc listen`, as CLI commands (see the module comment). */
export const LISTEN_COMMANDS: Record<string, (db: Database, args: string[]) => Promise<unknown>> = {
  'listen register': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, url: { type: 'string' }, certificate: { type: 'string' }, 'task-kind': { type: 'string' }, 'task-id': { type: 'string' } } })
    const tenant = await tenantOf(db, values.tenant)
    if (!values.url || !isListenerUrl(values.url)) throw new ListenUsageError('--url must be an https URL on 127.0.0.1 or [::1] with a port')
    if (!values.certificate?.includes('BEGIN CERTIFICATE')) throw new ListenUsageError('--certificate must be a PEM certificate')
    const kind = values['task-kind'] as TaskKind | undefined
    if ((kind === undefined) !== (values['task-id'] === undefined)) throw new ListenUsageError('--task-kind and --task-id go together')
    if (kind !== undefined && !TASK_KINDS.includes(kind)) throw new ListenUsageError(`--task-kind must be one of ${TASK_KINDS.join(', ')}`)
    if (values['task-id'] !== undefined && !UUID.test(values['task-id'])) throw new ListenUsageError('--task-id must be a UUID')
    const { secrets, minted } = await signingSecrets(db, tenant.id)
    const id = await registerListener(db.sql, tenant.id, { url: values.url, certificatePem: values.certificate, taskKind: kind, taskId: values['task-id'] })
    return { listener_id: id, tenant_id: tenant.id, minted_signing_secret: minted, signing_secrets: secrets }
  },
  'listen refresh': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, id: { type: 'string' } } })
    const tenant = await tenantOf(db, values.tenant)
    const made = await refreshListener(db.sql, tenant.id, values.id ?? '', linkBases(loadConfig()))
    if (made === null) throw new ListenUsageError('the listener is gone')
    return { subscribed: made }
  },
  'listen end': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, id: { type: 'string' } } })
    const tenant = await tenantOf(db, values.tenant)
    return { ended: await endListener(db.sql, tenant.id, values.id ?? '') }
  },
}

/** Runs one CLI command (directly or through the control socket) and returns what it printed. */
export type RunCommand = (argv: string[]) => Promise<CommandOutcome>

/** What `svc listen` was asked. */
interface ListenOptions { tenant: string; forwardTo?: URL; taskKind?: string; taskId?: string; port: number; refreshMs: number }

function listenOptions(args: string[]): ListenOptions {
  const { values } = parseArgs({ args, options: {
    tenant: { type: 'string' }, 'forward-to': { type: 'string' }, 'task-kind': { type: 'string' }, 'task-id': { type: 'string' },
    port: { type: 'string', default: '0' }, 'refresh-ms': { type: 'string', default: '1000' },
  } })
  if (!values.tenant) throw new ListenUsageError('--tenant is required')
  let forwardTo: URL | undefined
  if (values['forward-to'] !== undefined) {
    try { forwardTo = new URL(values['forward-to']) } catch { throw new ListenUsageError('--forward-to must be an absolute http(s) URL') }
    if (forwardTo.protocol !== 'http:' && forwardTo.protocol !== 'https:') throw new ListenUsageError('--forward-to must be an absolute http(s) URL')
  }
  if (!/^\d{1,5}$/.test(values.port!)) throw new ListenUsageError('--port must be a port number')
  return { tenant: values.tenant, forwardTo, taskKind: values['task-kind'], taskId: values['task-id'], port: Number(values.port), refreshMs: Math.max(200, Number(values['refresh-ms']) || 1000) }
}

function parsed(out: CommandOutcome): Record<string, unknown> {
  if (out.code !== 0) throw new ListenUsageError(out.stderr.replace(/^svc: /, '').trim() || `exit ${out.code}`)
  return JSON.parse(out.stdout) as Record<string, unknown>
}

/**
 * Runs `svc listen` until SIGINT or SIGTERM (or `signal` aborts): prints one JSON line per delivery
 * on stdout and progress on stderr; resolves with the exit code.
 */
export async function runListen(args: string[], run: RunCommand, signal?: AbortSignal): Promise<number> {
  const options = listenOptions(args)
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048, algorithm: 'sha256', days: 2,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  } as never) as { cert: string; private: string }
  const path = `/svc-listen/${crypto.randomUUID()}`
  let secrets: string[] = []
  let forwarded = Promise.resolve()
  const server = Bun.serve({
    hostname: '127.0.0.1', port: options.port, tls: { cert: pems.cert, key: pems.private },
    development: false, // an error answers a bare 500, not its message and stack
    async fetch(request) {
      const url = new URL(request.url)
      if (request.method !== 'POST' || url.pathname !== path) return new Response('not found', { status: 404 })
      const body = new Uint8Array(await request.arrayBuffer())
      const verdict = verifyWebhook(body, request.headers, secrets)
      const text = new TextDecoder().decode(body)
      let envelope: unknown = text
      try { envelope = JSON.parse(text) } catch { /* printed as received */ }
      const line: Record<string, unknown> = {
        received_at: new Date().toISOString(),
        verified: verdict.ok,
        ...(verdict.ok ? { secret: verdict.secret } : { reason: verdict.reason }),
        delivery_id: request.headers.get('svc-delivery-id'),
        event_type: request.headers.get('svc-event-type'),
        envelope,
      }
      if (!verdict.ok) {
        process.stdout.write(`${JSON.stringify(line)}\n`)
        return new Response('signature not verified', { status: 400 })
      }
      if (options.forwardTo) {
        const target = options.forwardTo
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        for (const h of ['svc-signature', 'svc-delivery-id', 'svc-event-type', 'traceparent']) {
          const v = request.headers.get(h)
          if (v !== null) headers[h] = v
        }
        // Forwarded in order, one at a time; the receiver's answer is the forward's status.
        const done = forwarded.then(async () => {
          try {
            const res = await fetch(target, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })
            line.forwarded = { url: target.toString(), status: res.status }
          } catch (e) {
            line.forwarded = { url: target.toString(), error: (e as Error).message }
          }
        })
        forwarded = done
        await done
        process.stdout.write(`${JSON.stringify(line)}\n`)
        const status = (line.forwarded as { status?: number }).status
        return new Response(null, { status: status !== undefined && status < 300 ? 204 : 502 })
      }
      process.stdout.write(`${JSON.stringify(line)}\n`)
      return new Response(null, { status: 204 })
    },
  })
  const url = `https://127.0.0.1:${server.port}${path}`
  const register = ['listen', 'register', '--tenant', options.tenant, '--url', url, `--certificate=${pems.cert}`,
    ...(options.taskKind ? ['--task-kind', options.taskKind] : []), ...(options.taskId ? ['--task-id', options.taskId] : [])]
  let id: string
  let tenantFlag: string[]
  try {
    const reg = parsed(await run(register))
    id = reg.listener_id as string
    secrets = reg.signing_secrets as string[]
    tenantFlag = ['--tenant', options.tenant, '--id', id]
    if (reg.minted_signing_secret) process.stderr.write('svc listen: the workspace had no webhook signing secret; minted its first one (rotate it with POST /v1/webhook-signing-secret/rotate)\n')
  } catch (e) {
    server.stop(true)
    throw e
  }
  process.stderr.write(`svc listen: receiving at ${url} (development only: the service may deliver to this loopback URL while this command runs, and logs each such delivery)\n`)
  process.stderr.write(`svc listen: subscribed to ${options.taskId ? `${options.taskKind} ${options.taskId}` : 'every task of the workspace from now on'}${options.forwardTo ? `; forwarding to ${options.forwardTo}` : ''}; Ctrl-C ends it\n`)

  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve()
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    signal?.addEventListener('abort', stop, { once: true })
  })
  let code = 0
  let refreshing = true
  const loop = (async () => {
    while (refreshing) {
      const out = await run(['listen', 'refresh', ...tenantFlag]).catch((e: Error) => ({ code: 1, stdout: '', stderr: e.message }))
      if (out.code !== 0) {
        process.stderr.write(`svc listen: ${out.stderr.trim()}\n`)
        if (/the listener is gone/.test(out.stderr)) { code = 1; break }
      }
      await Promise.race([Bun.sleep(options.refreshMs), stopped])
    }
  })()
  await Promise.race([stopped, loop])
  refreshing = false
  await loop
  await run(['listen', 'end', ...tenantFlag]).catch(() => undefined)
  await forwarded
  server.stop(true)
  process.stderr.write('svc listen: ended; the exemption is gone\n')
  return code
}
