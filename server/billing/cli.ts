/**
 * The CLI commands of billing contracts (`svc billing contract create|end|list`), operators'
 * counterpart of the operator routes. Each prints JSON; a bad input is a refusal naming the flag
 * or field (exit 2).
 */
import { parseArgs } from 'node:util'
import type { Sql } from '../db/connect'
import { problems } from '../http/problem'
import { findTenantBySlug } from '../workspaces/tenants-store'
import { createContract, endContract, listContracts, renderContract, type ContractInput } from './contracts'
import { currentPeriod } from './rating'

/** The usage lines of the CLI commands. */
export const BILLING_USAGE = `  billing contract create --tenant S --currency EUR --from YYYY-MM [--until YYYY-MM] --prices JSON [--minimum D]
  billing contract end --tenant S --id ID [--until YYYY-MM] | billing contract list --tenant S`

const OPTIONS = {
  tenant: { type: 'string' }, currency: { type: 'string' }, from: { type: 'string' }, until: { type: 'string' },
  prices: { type: 'string' }, minimum: { type: 'string' }, id: { type: 'string' },
} as const

const need = (values: Record<string, string | undefined>, name: string): string => {
  const v = values[name]
  if (v === undefined || v.trim() === '') throw problems.rule(`--${name} is required`)
  return v
}

/** `svc billing contract <create|end|list> ...`: the subcommand is the first argument. */
async function contractCommand({ sql }: { sql: Sql }, args: string[]): Promise<unknown> {
  const [sub, ...rest] = args
  const { values } = parseArgs({ args: rest, options: OPTIONS })
  const slug = need(values, 'tenant')
  const tenant = await findTenantBySlug(sql, slug)
  if (!tenant) throw problems.rule(`no workspace with slug "${slug}"`)
  const actor = { kind: 'cli' } as const
  switch (sub) {
    case 'create': {
      let prices: unknown
      try { prices = JSON.parse(need(values, 'prices')) } catch { throw problems.rule('--prices must be a JSON array like [{"meter":"evaluations_succeeded","unit_price":"0.50"}]') }
      if (!Array.isArray(prices)) throw problems.rule('--prices must be a JSON array')
      const input: ContractInput = {
        currency: need(values, 'currency'), effective_from: need(values, 'from'), effective_until: values.until ?? null,
        prices: prices as ContractInput['prices'], ...(values.minimum !== undefined ? { minimum_commitment: values.minimum } : {}),
      }
      return renderContract(await sql.begin((tx) => createContract(tx, tenant.id, input, actor)))
    }
    case 'end': {
      const id = need(values, 'id')
      const row = await sql.begin(async (tx) => endContract(tx, tenant.id, id, values.until ?? await currentPeriod(tx, tenant.id), actor))
      if (!row) throw problems.rule(`no billing contract ${id} in workspace "${slug}"`)
      return renderContract(row)
    }
    case 'list':
      return { items: (await listContracts(sql, tenant.id, null, 1000)).slice(0, 1000).map(renderContract) }
    default:
      throw problems.rule('billing contract needs create, end or list')
  }
}

/** The CLI commands (`svc billing ...`). */
export const BILLING_COMMANDS: Record<string, (db: { sql: Sql }, args: string[]) => Promise<unknown>> = {
  'billing contract': contractCommand,
}
