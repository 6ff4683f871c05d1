/**
 * The operator CLI (`bun run svc <command>`): JSON on stdout, a clear message and a non-zero exit
 * on bad input. It works on the database the configuration names; with the embedded database in
 * use by a running service, through that service's control socket.
 */
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from './config'
import { EmbeddedDatabaseInUse, openDatabase, type Database } from './db/connect'
import { controlSocketPath, forwardToControlSocket, type CommandOutcome } from './control-socket'
import { migrate } from './db/migrate'
import { ProblemError } from './http/problem'
import { createTenant, findTenantBySlug } from './workspaces/tenants-store'
import { addMember, renderUser } from './workspaces/users-store'
import { createApiKey } from './workspaces/api-keys-store'
import { renderTenant } from './workspaces/tenants-store'
import { setTenantStatus } from './workspaces/tenant-status'
import { verifyAuditChain } from './workspaces/audit-store'
import { raiseBreakGlass, renderBreakGlass, revokeBreakGlass, allBreakGlassRequests, type BreakGlassRow } from './workspaces/break-glass-store'
import { BUDGET_COMMANDS, BUDGET_USAGE } from './authoring/budget-admin'
import { BILLING_COMMANDS, BILLING_USAGE } from './billing/cli'
import { LISTEN_COMMANDS, ListenUsageError, runListen } from './notifications/listen-command'

const USAGE = `usage: svc <command>
  migrate
  tenant create --slug S [--name N] [--org ORG_ID]
  user add --tenant S --email E --sub SUB --role admin|reviewer|underwriter|viewer
  api-key create --tenant S --name N --scopes a,b [--environment live|test] [--expires-in-days D]
  tenant suspend --slug S | tenant resume --slug S
  audit verify --tenant S                  (exit 1 and first_broken when the chain is broken)
  break-glass request --tenant S --operator SUB --reason R [--minutes M]
  break-glass list --tenant S [--status requested|approved|denied|revoked]
  break-glass revoke --tenant S --id REQUEST_ID   (ends an open access window at once)
  listen --tenant S [--forward-to URL] [--task-kind K --task-id ID]
                                           (development: a loopback webhook receiver; prints each verified delivery)
${BUDGET_USAGE}
${BILLING_USAGE}`

/** A refusal of the CLI: printed as one line, exit code 2. */
class UsageError extends Error {}

const need = (values: Record<string, unknown>, name: string): string => {
  const v = values[name]
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`)
  return v
}

const tenantNamed = async (db: Database, slug: string) => {
  const tenant = await findTenantBySlug(db.sql, slug)
  if (!tenant) throw new UsageError(`no workspace with slug "${slug}"`)
  return tenant
}

type Command = (db: Database, args: string[]) => Promise<unknown>

/** A command result that also sets the exit code (printed like any other result). */
class ExitWith {
  constructor(readonly output: unknown, readonly code: number) {}
}

const slugArg = (args: string[]) => need(parseArgs({ args, options: { slug: { type: 'string' } } }).values, 'slug')

const setStatus = (status: 'active' | 'suspended'): Command => async (db, args) => {
  const out = await setTenantStatus(db.sql, slugArg(args), status, { kind: 'cli' })
  if (!out) throw new UsageError(`no workspace with slug "${slugArg(args)}"`)
  return { ...renderTenant(out.tenant), changed: out.changed }
}

const COMMANDS: Record<string, Command> = {
  ...BUDGET_COMMANDS,
  ...BILLING_COMMANDS,
  ...LISTEN_COMMANDS,
  'tenant suspend': setStatus('suspended'),
  'tenant resume': setStatus('active'),

  'audit verify': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' } } })
    const tenant = await tenantNamed(db, need(values, 'tenant'))
    const result = await verifyAuditChain(db.sql, tenant.id)
    return new ExitWith({ tenant_id: tenant.id, ...result }, result.ok ? 0 : 1)
  },

  'break-glass request': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, operator: { type: 'string' }, reason: { type: 'string' }, minutes: { type: 'string', default: '60' } } })
    const tenant = await tenantNamed(db, need(values, 'tenant'))
    const minutes = values.minutes ?? '60'
    if (!/^\d+$/.test(minutes) || Number(minutes) < 1 || Number(minutes) > 1440) throw new UsageError('--minutes must be a whole number from 1 to 1440')
    const operator = need(values, 'operator')
    const row = await raiseBreakGlass(db.sql, tenant.id, { operatorSub: operator, reason: need(values, 'reason'), durationMinutes: Number(minutes) }, { kind: 'operator', sub: operator })
    return renderBreakGlass(row)
  },

  'break-glass list': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, status: { type: 'string' } } })
    const tenant = await tenantNamed(db, need(values, 'tenant'))
    if (values.status !== undefined && !['requested', 'approved', 'denied', 'revoked'].includes(values.status)) throw new UsageError('--status must be requested, approved, denied or revoked')
    const rows = await allBreakGlassRequests(db.sql, tenant.id, (values.status || undefined) as BreakGlassRow['status'] | undefined)
    return { items: rows.map(renderBreakGlass) }
  },

  'break-glass revoke': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, id: { type: 'string' } } })
    const tenant = await tenantNamed(db, need(values, 'tenant'))
    const id = need(values, 'id')
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw new UsageError('--id must be a break-glass request id (a UUID)')
    return renderBreakGlass(await revokeBreakGlass(db.sql, tenant.id, id, { kind: 'cli' }, null))
  },

  migrate: async (db) => ({ applied: await migrate(db.sql) }),

  'tenant create': async (db, args) => {
    const { values } = parseArgs({ args, options: { slug: { type: 'string' }, name: { type: 'string' }, org: { type: 'string' } } })
    const { tenant, created } = await createTenant(db.sql, { slug: need(values, 'slug'), name: values.name, organizationId: values.org })
    return { ...renderTenant(tenant), created }
  },

  'user add': async (db, args) => {
    const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, email: { type: 'string' }, sub: { type: 'string' }, role: { type: 'string' } } })
    const tenant = await tenantNamed(db, need(values, 'tenant'))
    const user = await addMember(db.sql, tenant.id, { email: need(values, 'email'), sub: need(values, 'sub'), role: need(values, 'role') })
    return { ...renderUser(user), tenant_id: tenant.id, sub: user.sub }
  },

  'api-key create': async (db, args) => {
    const { values } = parseArgs({ args, options: {
      tenant: { type: 'string' }, name: { type: 'string' }, scopes: { type: 'string' },
      environment: { type: 'string', default: 'live' }, 'expires-in-days': { type: 'string' },
    } })
    const tenant = await tenantNamed(db, need(values, 'tenant'))
    const environment = values.environment
    if (environment !== 'live' && environment !== 'test') throw new UsageError('--environment must be live or test')
    let expiresAt: Date | null = null
    if (values['expires-in-days'] !== undefined) {
      if (!/^\d+$/.test(values['expires-in-days']) || Number(values['expires-in-days']) < 1) throw new UsageError('--expires-in-days must be a whole number of days, at least 1')
      expiresAt = new Date(Date.now() + Number(values['expires-in-days']) * 86_400_000)
    }
    const scopes = need(values, 'scopes').split(',').map((s) => s.trim()).filter(Boolean)
    return { ...(await createApiKey(db.sql, tenant.id, { name: need(values, 'name'), scopes, environment, expiresAt })), tenant_id: tenant.id }
  },
}

export type { CommandOutcome }

/**
 * Runs one CLI command on an open database and returns what it prints; the running service uses
 * this for commands forwarded through its control socket (embedded database), the CLI for the rest.
 */
export async function executeCommand(db: Database, argv: string[]): Promise<CommandOutcome> {
  const name = argv[0] === 'migrate' ? 'migrate' : `${argv[0] ?? ''} ${argv[1] ?? ''}`
  const command = COMMANDS[name]
  if (!command) return { code: 2, stdout: '', stderr: `${USAGE}\n` }
  const print = (out: unknown) => `${JSON.stringify(out, null, 2)}\n`
  try {
    if (name !== 'migrate') await migrate(db.sql)
    const out = await command(db, argv.slice(name === 'migrate' ? 1 : 2))
    if (out instanceof ExitWith) return { code: out.code, stdout: print(out.output), stderr: '' }
    return { code: 0, stdout: print(out), stderr: '' }
  } catch (e) {
    return describeFailure(e)
  }
}

function describeFailure(e: unknown): CommandOutcome {
  const fail = (line: string, code = 2) => ({ code, stdout: '', stderr: `${line}\n` })
  if (e instanceof UsageError || e instanceof ConfigError || e instanceof ListenUsageError) return fail(`svc: ${e.message}`)
  if (e instanceof ProblemError) {
    const pointers = e.options.errors?.map((x) => `${x.pointer} ${x.message}`).join('; ')
    return fail(`svc: ${e.detail}${pointers ? ` (${pointers})` : ''}`)
  }
  if (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) return fail(`svc: ${e.message}\n${USAGE}`)
  return fail(`svc: ${(e as Error).message}`, 1)
}

/**
 * Runs one CLI command; resolves with the process exit code. With the embedded database in use by
 * a running service, the command is forwarded to that service's control socket, because PGlite is
 * one session and a second process must not open or share it.
 */
export async function runCli(argv: string[]): Promise<number> {
  if (argv[0] === 'listen' && !['register', 'refresh', 'end'].includes(argv[1] ?? '')) return listen(argv.slice(1))
  let outcome: CommandOutcome
  let db: Database | undefined
  try {
    const config = loadConfig()
    try {
      db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: 2, prepare: config.dbPrepare, connectTimeoutMs: config.dbConnectTimeoutMs })
      outcome = await executeCommand(db, argv)
    } catch (e) {
      if (!(e instanceof EmbeddedDatabaseInUse)) throw e
      outcome = await forwardToControlSocket(controlSocketPath(config.dataDir), argv)
    }
  } catch (e) {
    outcome = describeFailure(e)
  } finally {
    await db?.close()
  }
  process.stdout.write(outcome.stdout)
  process.stderr.write(outcome.stderr)
  return outcome.code
}

/**
 * `svc listen`: a long-running command whose database steps run as CLI commands, on PostgreSQL in
 * this process, or through the control socket of the service that owns the embedded database.
 */
async function listen(args: string[]): Promise<number> {
  let db: Database | undefined
  try {
    const config = loadConfig()
    let run: (argv: string[]) => Promise<CommandOutcome>
    try {
      db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, max: 2, prepare: config.dbPrepare })
      const open = db
      run = (argv) => executeCommand(open, argv)
    } catch (e) {
      if (!(e instanceof EmbeddedDatabaseInUse)) throw e
      run = (argv) => forwardToControlSocket(controlSocketPath(config.dataDir), argv)
    }
    return await runListen(args, run)
  } catch (e) {
    const outcome = describeFailure(e)
    process.stderr.write(outcome.stderr)
    return outcome.code
  } finally {
    await db?.close()
  }
}

if (import.meta.main) process.exit(await runCli(process.argv.slice(2)))
