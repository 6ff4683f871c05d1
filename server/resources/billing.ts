/**
 * Billing, as a workspace sees it: its contracts (read), its rated usage per period, reconciliations
 * of an external invoice (a `billing_reconciliation` task) and their findings, which admins
 * acknowledge or resolve (human-only, audited). Readers: workspace admins, and API keys with
 * `billing:read` (or `billing:write`, which may also start reconciliations). Contracts are created
 * and ended on the operator surface (server/resources/operator.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, tenantOf, type AccessRule } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, refuseIdempotencyKey, runIdempotent, replyWith } from '../http/idempotency'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { subscribeInline } from '../notifications/inline'
import { actorOf } from '../workspaces/audit-store'
import { PageOf } from '../../schemas/common'
import {
  Contract, ContractListQuery, ContractParams, Finding, FindingDecision, FindingListQuery, FindingParams, RatedUsage,
  Reconciliation, ReconciliationCreate, ReconciliationListQuery, ReconciliationParams, ReconciliationStarted, UsageQuery,
} from '../../schemas/billing'
import { findContract, listContracts, renderContract } from '../billing/contracts'
import { ratedUsage } from '../billing/rating'
import {
  findReconciliation, listReconciliations, reconciliationPath, renderReconciliation, startReconciliation, type Invoice,
} from '../billing/reconciliation'
import { decideFinding, findFinding, listFindings, renderFinding } from '../billing/findings'
import { completeInvoiceUpload, startInvoiceUpload } from '../billing/invoice-upload'

/** Who reads billing: workspace admins, and API keys with billing:read or billing:write. */
export const BILLING_READ: AccessRule = { roles: ['admin'], scopes: ['billing:read', 'billing:write'] }
/** Who starts reconciliations: workspace admins, and API keys with billing:write. */
export const BILLING_WRITE: AccessRule = { roles: ['admin'], scopes: ['billing:write'] }
/** Who decides findings: workspace admins, in person (API keys are refused whatever their scopes). */
export const BILLING_DECIDE: AccessRule = { roles: ['admin'], humanOnly: true }

/** Workspace billing routes. */
export function billingRoutes(deps: AppDeps) {
  const { sql, cursors } = deps

  const decide = (decision: 'acknowledge' | 'resolve') => async ({ principal, params, body }: { principal: Parameters<typeof tenantOf>[0]; params: { findingId: string }; body: { note: string } }) => {
    const tenantId = tenantOf(principal)
    const row = await sql.begin((tx) => decideFinding(tx, tenantId, params.findingId, decision, body.note, actorOf(principal)))
    if (!row) throw problems.notFound('finding')
    return renderFinding(row)
  }

  return new Elysia({ name: 'billing' })
    .use(accessControl(deps.authenticate))
    .get('/v1/billing/contracts', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(ContractListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, 'billing-contracts'))
      return list.page(await listContracts(sql, tenantId, list.after, list.limit), (r) => r.id, renderContract)
    }, {
      access: BILLING_READ,
      detail: withQuery(ContractListQuery, { summary: "The workspace's billing contracts, newest first", tags: ['Billing'], responses: responses({ 200: PageOf(Contract) }, LIST_PROBLEMS) }),
    })
    .get('/v1/billing/contracts/:contractId', async ({ principal, params }) => {
      const row = await findContract(sql, tenantOf(principal), params.contractId)
      if (!row) throw problems.notFound('billing contract')
      return renderContract(row)
    }, {
      access: BILLING_READ,
      params: ContractParams,
      detail: { summary: 'Read a billing contract', tags: ['Billing'], responses: responses({ 200: Contract }, PATH_PROBLEMS) },
    })
    .get('/v1/billing/usage', async ({ principal, query }) => {
      const q = readQuery(UsageQuery, query)
      return ratedUsage(sql, tenantOf(principal), q.period)
    }, {
      access: BILLING_READ,
      detail: withQuery(UsageQuery, {
        summary: "Rated usage of a period (YYYY-MM in the workspace time_zone): quantity, included, billable and amount per meter, rounded once per line in the currency's minor units; subtotal, minimum-commitment shortfall, total",
        tags: ['Billing'],
        responses: responses({ 200: RatedUsage }, ['malformed', 'validation']),
      }),
    })
    .post('/v1/billing/reconciliations', async ({ principal, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      if ((body.invoice === undefined) === (body.invoice_upload === undefined)) throw problems.rule('Give exactly one of invoice (JSON lines) and invoice_upload (a CSV file).')
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        if (body.invoice_upload) {
          const { row, upload } = await startInvoiceUpload(tx, deps, tenantId, body.period, body.invoice_upload, actorOf(principal))
          await subscribeInline(tx, principal, { tenantId, taskKind: 'billing_reconciliation', taskId: row.id, items: body.notifications as never })
          return { status: 201, body: { ...renderReconciliation(row), upload }, location: reconciliationPath(row.id) }
        }
        const row = await startReconciliation(tx, tenantId, { period: body.period, invoice: body.invoice as Invoice }, actorOf(principal))
        await subscribeInline(tx, principal, { tenantId, taskKind: 'billing_reconciliation', taskId: row.id, items: body.notifications as never })
        return { status: 202, body: renderReconciliation(row), location: reconciliationPath(row.id) }
      })
      return replyWith(set, result) as ReturnType<typeof renderReconciliation>
    }, {
      access: BILLING_WRITE,
      body: ReconciliationCreate,
      detail: {
        summary: 'Reconcile an external invoice of a period against the contract and the usage ledger. JSON lines (`invoice`): 202 and a billing_reconciliation task. A CSV (`invoice_upload`): 201 with a presigned PUT; PUT the bytes, then POST .../complete. Findings are listed at /v1/billing/reconciliation-findings',
        tags: ['Billing'],
        responses: responses({ 201: ReconciliationStarted, 202: Reconciliation }, [...BODY_PROBLEMS, 'idempotency_conflict', 'payload_too_large']),
      },
    })
    .post('/v1/billing/reconciliations/:reconciliationId/complete', async ({ principal, params, set, request }) => {
      refuseIdempotencyKey(request, 'a reconciliation is completed once; a repeat is 409 naming its status, which says whether the first one took')
      const row = await completeInvoiceUpload(deps, tenantOf(principal), params.reconciliationId)
      if (!row) throw problems.notFound('reconciliation')
      set.status = 202
      return renderReconciliation(row)
    }, {
      access: BILLING_WRITE,
      params: ReconciliationParams,
      detail: {
        summary: 'Complete an uploaded CSV invoice: 202 and the billing_reconciliation task; 409 before the bytes are uploaded',
        description: 'A request with an Idempotency-Key header is 422 and changes nothing: a reconciliation is completed once, and a repeat is 409 naming its status.',
        tags: ['Billing'],
        responses: responses({ 202: Reconciliation }, [...PATH_PROBLEMS, 'conflict', 'validation', 'payload_too_large']),
      },
    })
    .get('/v1/billing/reconciliations', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(ReconciliationListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, 'billing-reconciliations'))
      return list.page(await listReconciliations(sql, tenantId, list.after, list.limit), (r) => r.id, renderReconciliation)
    }, {
      access: BILLING_READ,
      detail: withQuery(ReconciliationListQuery, { summary: 'Reconciliations, newest first', tags: ['Billing'], responses: responses({ 200: PageOf(Reconciliation) }, LIST_PROBLEMS) }),
    })
    .get('/v1/billing/reconciliations/:reconciliationId', async ({ principal, params }) => {
      const row = await findReconciliation(sql, tenantOf(principal), params.reconciliationId)
      if (!row) throw problems.notFound('reconciliation')
      return renderReconciliation(row)
    }, {
      access: BILLING_READ,
      params: ReconciliationParams,
      detail: { summary: 'Read a reconciliation (the billing_reconciliation task)', tags: ['Billing'], responses: responses({ 200: Reconciliation }, PATH_PROBLEMS) },
    })
    .get('/v1/billing/reconciliation-findings', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(FindingListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, `billing-findings|${q.status ?? ''}|${q.period ?? ''}|${q.kind ?? ''}|${q.reconciliation_id ?? ''}`))
      return list.page(await listFindings(sql, tenantId, q, list.after, list.limit), (r) => r.id, renderFinding)
    }, {
      access: BILLING_READ,
      detail: withQuery(FindingListQuery, { summary: 'Reconciliation findings, newest first; filter by status, period, kind, reconciliation_id', tags: ['Billing'], responses: responses({ 200: PageOf(Finding) }, LIST_PROBLEMS) }),
    })
    .get('/v1/billing/reconciliation-findings/:findingId', async ({ principal, params }) => {
      const row = await findFinding(sql, tenantOf(principal), params.findingId)
      if (!row) throw problems.notFound('finding')
      return renderFinding(row)
    }, {
      access: BILLING_READ,
      params: FindingParams,
      detail: { summary: 'Read a reconciliation finding', tags: ['Billing'], responses: responses({ 200: Finding }, PATH_PROBLEMS) },
    })
    .post('/v1/billing/reconciliation-findings/:findingId/acknowledge', decide('acknowledge'), {
      access: BILLING_DECIDE,
      params: FindingParams,
      body: FindingDecision,
      detail: { summary: 'Acknowledge an open finding with a note (admins, human-only; audited as billing.finding.acknowledged)', tags: ['Billing'], responses: responses({ 200: Finding }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
    .post('/v1/billing/reconciliation-findings/:findingId/resolve', decide('resolve'), {
      access: BILLING_DECIDE,
      params: FindingParams,
      body: FindingDecision,
      detail: { summary: 'Resolve a finding with a note (admins, human-only; audited as billing.finding.resolved)', tags: ['Billing'], responses: responses({ 200: Finding }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']) },
    })
}
