/**
 * The operator surface (outside the /v1 promise, Versioning 5): platform cost figures, cache
 * figures, a workspace's evaluation policy and billing contracts, for platform operators only (JWT
 * subjects of SVC_OPERATOR_SUBJECTS). Every workspace credential, whatever its role, scopes or
 * workspace state, gets the same 403 (server/auth/access.ts, isOperatorOnly). The cost budget
 * routes live beside it (server/authoring/budget-admin.ts, /v1/operator/workspaces/{id}/cost-budget).
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { actorOf } from '../workspaces/audit-store'
import { findTenant } from '../workspaces/tenants-store'
import { PageOf } from '../../schemas/common'
import { TenantParams } from '../../schemas/user'
import {
  CacheFigures, Contract, ContractCreate, ContractEnd, ContractListQuery, CostsQuery, EvaluationPolicy, EvaluationPolicyWrite,
  PlatformCosts, RatedUsage, TenantContractParams, UsageQuery,
} from '../../schemas/billing'
import { createContract, endContract, listContracts, renderContract, type ContractInput } from '../billing/contracts'
import { currentPeriod, ratedUsage } from '../billing/rating'
import { readPolicy, writePolicy } from '../operator/evaluation-policy'
import { cacheFigures, platformCosts } from '../operator/figures'

const OPERATORS = { operator: true } as const
const TAGS = ['Operators']

/** A workspace by id, or 404. */
export async function workspaceOr404(sql: Tx, id: string) {
  const tenant = await findTenant(sql, id)
  if (!tenant) throw problems.notFound('workspace')
  return tenant
}

/** Operator routes. */
export function operatorRoutes(deps: AppDeps) {
  const { sql, cursors } = deps

  return new Elysia({ name: 'operator' })
    .use(accessControl(deps.authenticate))
    .get('/v1/operator/costs', async ({ query }) => platformCosts(sql, readQuery(CostsQuery, query).period), {
      access: OPERATORS,
      detail: withQuery(CostsQuery, { summary: 'Platform cost figures: model cost, tokens and usage by workspace for a UTC month (operators; outside the /v1 promise)', tags: TAGS, responses: responses({ 200: PlatformCosts }, ['malformed', 'validation']) }),
    })
    .get('/v1/operator/caches', () => cacheFigures(deps), {
      access: OPERATORS,
      detail: { summary: "This process's cache figures: credential lookups (hits, misses, size) and the parser pool (operators; outside the /v1 promise)", tags: TAGS, responses: responses({ 200: CacheFigures }) },
    })
    .get('/v1/operator/workspaces/:tenantId/evaluation-policy', async ({ params }) => readPolicy(sql, (await workspaceOr404(sql, params.tenantId)).id), {
      access: OPERATORS,
      params: TenantParams,
      detail: { summary: "A workspace's evaluation policy (operators; outside the /v1 promise)", tags: TAGS, responses: responses({ 200: EvaluationPolicy }, PATH_PROBLEMS) },
    })
    .put('/v1/operator/workspaces/:tenantId/evaluation-policy', async ({ principal, params, body }) =>
      sql.begin(async (tx) => writePolicy(tx, (await workspaceOr404(tx, params.tenantId)).id, body, actorOf(principal))), {
      access: OPERATORS,
      params: TenantParams,
      body: EvaluationPolicyWrite,
      detail: { summary: "Replace a workspace's evaluation policy: engine, max_questions, max_pages_per_document, ocr (operators; outside the /v1 promise)", tags: TAGS, responses: responses({ 200: EvaluationPolicy }, [...PATH_PROBLEMS, ...BODY_PROBLEMS]) },
    })
    .post('/v1/operator/workspaces/:tenantId/billing-contracts', async ({ principal, params, body, set }) => {
      const row = await sql.begin(async (tx) => createContract(tx, (await workspaceOr404(tx, params.tenantId)).id, body as ContractInput, actorOf(principal)))
      set.status = 201
      return renderContract(row)
    }, {
      access: OPERATORS,
      params: TenantParams,
      body: ContractCreate,
      detail: { summary: 'Create a billing contract; one overlapping another is 422 naming the field (operators; outside the /v1 promise)', tags: TAGS, responses: responses({ 201: Contract }, [...PATH_PROBLEMS, ...BODY_PROBLEMS]) },
    })
    .get('/v1/operator/workspaces/:tenantId/billing-contracts', async ({ params, query }) => {
      const tenant = await workspaceOr404(sql, params.tenantId)
      const q = readQuery(ContractListQuery, query)
      const list = cursors.open(q, cursorScope(tenant.id, `operator-billing-contracts|${tenant.id}`))
      return list.page(await listContracts(sql, tenant.id, list.after, list.limit), (r) => r.id, renderContract)
    }, {
      access: OPERATORS,
      params: TenantParams,
      detail: withQuery(ContractListQuery, { summary: "A workspace's billing contracts, newest first (operators; outside the /v1 promise)", tags: TAGS, responses: responses({ 200: PageOf(Contract) }, [...PATH_PROBLEMS, ...LIST_PROBLEMS]) }),
    })
    .post('/v1/operator/workspaces/:tenantId/billing-contracts/:contractId/end', async ({ principal, params, body }) => {
      const row = await sql.begin(async (tx) => {
        const tenant = await workspaceOr404(tx, params.tenantId)
        const until = body?.effective_until ?? await currentPeriod(tx, tenant.id)
        return endContract(tx, tenant.id, params.contractId, until, actorOf(principal))
      })
      if (!row) throw problems.notFound('billing contract')
      return renderContract(row)
    }, {
      access: OPERATORS,
      params: TenantContractParams,
      body: t.Union([ContractEnd, t.Null()]),
      detail: { summary: 'End a billing contract after a month (default: the current one); 409 when ended already (operators; outside the /v1 promise)', tags: TAGS, responses: responses({ 200: Contract }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
    .get('/v1/operator/workspaces/:tenantId/billing-usage', async ({ params, query }) => {
      const tenant = await workspaceOr404(sql, params.tenantId)
      return ratedUsage(sql, tenant.id, readQuery(UsageQuery, query).period)
    }, {
      access: OPERATORS,
      params: TenantParams,
      detail: withQuery(UsageQuery, { summary: "A workspace's rated usage of a period, as GET /v1/billing/usage shows it (operators; outside the /v1 promise)", tags: TAGS, responses: responses({ 200: RatedUsage }, [...PATH_PROBLEMS, 'validation']) }),
    })
}
