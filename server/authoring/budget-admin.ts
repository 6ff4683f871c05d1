/**
 * The operator surface of cost budgets (outside the /v1 promise, unreachable with workspace
 * credentials): `GET/PUT /v1/operator/workspaces/{tenantId}/cost-budget` for platform operators
 * (the earlier `/v1/tenants/{tenantId}/cost-budget` still answers, marked deprecated), and the CLI
 * commands `svc budget set|clear|show`. A budget is `limit_micro` (integer micro-units) or `limit`
 * (a decimal string); raising it lets a run paused by the budget be resumed.
 */
import { Elysia } from 'elysia'
import { parseArgs } from 'node:util'
import type { AppDeps } from '../deps'
import type { Sql, Tx } from '../db/connect'
import { accessControl } from '../auth/access'
import { problems } from '../http/problem'
import { BODY_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { Budget, BudgetWrite } from '../../schemas/authoring'
import { TenantParams } from '../../schemas/user'
import { findTenant, findTenantBySlug } from '../workspaces/tenants-store'
import { budgetReport, decimalToMicro, setBudget } from '../billing/budgets'

/** The budget in micro-units of a request: exactly one of limit_micro and limit (422 otherwise). */
export function limitOf(body: { limit_micro?: number; limit?: string }): number {
  if ((body.limit_micro === undefined) === (body.limit === undefined)) throw problems.rule('Give exactly one of limit_micro and limit.')
  if (body.limit !== undefined && !/^\d{1,12}(\.\d{1,6})?$/.test(body.limit)) throw problems.rule('limit must be a decimal string with at most 6 decimals, like "25.50".')
  return body.limit_micro ?? decimalToMicro(body.limit!)
}

/** Operator routes of cost budgets. */
export function budgetRoutes(deps: AppDeps) {
  const { sql } = deps
  const tenantOr404 = async (db: Tx, id: string) => {
    const tenant = await findTenant(db, id)
    if (!tenant) throw problems.notFound('workspace')
    return tenant
  }
  const read = async ({ params }: { params: { tenantId: string } }) => budgetReport(sql, (await tenantOr404(sql, params.tenantId)).id)
  const write = async ({ params, body }: { params: { tenantId: string }; body: { limit_micro?: number; limit?: string } }) => {
    const tenant = await tenantOr404(sql, params.tenantId)
    await setBudget(sql, tenant.id, limitOf(body))
    return budgetReport(sql, tenant.id)
  }
  const plugin = new Elysia({ name: 'cost-budgets' }).use(accessControl(deps.authenticate))
  for (const [path, deprecated] of [['/v1/operator/workspaces/:tenantId/cost-budget', false], ['/v1/tenants/:tenantId/cost-budget', true]] as const) {
    const moved = deprecated ? { deprecated: true, description: 'Moved to /v1/operator/workspaces/{tenantId}/cost-budget; this path still answers.' } : {}
    plugin
      .get(path, read, {
        access: { operator: true },
        params: TenantParams,
        detail: { summary: "A workspace's hard cost budget and model spend (operators; outside the /v1 promise)", tags: ['Operators'], ...moved, responses: responses({ 200: Budget }, PATH_PROBLEMS) },
      })
      .put(path, write, {
        access: { operator: true },
        params: TenantParams,
        body: BudgetWrite,
        detail: { summary: "Set a workspace's hard cost budget: limit_micro or limit (operators; outside the /v1 promise)", tags: ['Operators'], ...moved, responses: responses({ 200: Budget }, [...PATH_PROBLEMS, ...BODY_PROBLEMS]) },
      })
  }
  return plugin
}

/** The usage lines of the CLI commands. */
export const BUDGET_USAGE = `  budget set --tenant S (--limit-micro N | --limit D)   hard cost budget of a workspace
  budget clear --tenant S | budget show --tenant S`

const tenantArg = async (sql: Sql, args: string[]) => {
  const { values } = parseArgs({ args, options: { tenant: { type: 'string' }, 'limit-micro': { type: 'string' }, limit: { type: 'string' } } })
  if (!values.tenant) throw problems.rule('--tenant is required')
  const tenant = await findTenantBySlug(sql, values.tenant)
  if (!tenant) throw problems.rule(`no workspace with slug "${values.tenant}"`)
  return { tenant, values }
}

/** The CLI commands (`svc budget ...`); each prints the workspace's budget report. */
export const BUDGET_COMMANDS: Record<string, (db: { sql: Sql }, args: string[]) => Promise<unknown>> = {
  'budget set': async ({ sql }, args) => {
    const { tenant, values } = await tenantArg(sql, args)
    const micro = values['limit-micro']
    if (micro !== undefined && !/^\d{1,18}$/.test(micro)) throw problems.rule('--limit-micro must be a whole number')
    await setBudget(sql, tenant.id, limitOf({ limit_micro: micro !== undefined ? Number(micro) : undefined, limit: values.limit }))
    return budgetReport(sql, tenant.id)
  },
  'budget clear': async ({ sql }, args) => {
    const { tenant } = await tenantArg(sql, args)
    await setBudget(sql, tenant.id, null)
    return budgetReport(sql, tenant.id)
  },
  'budget show': async ({ sql }, args) => budgetReport(sql, (await tenantArg(sql, args)).tenant.id),
}
