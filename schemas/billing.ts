/**
 * Billing: usage meters, billing contracts, rated usage, reconciliations and their findings, and the
 * operator surface's figures and evaluation policy, as request and response shapes. Money is a
 * decimal string with an integer `_micro` twin; quantities are whole numbers.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, pageQuery, NonBlankText, exactlyOneOf, STATED_PATTERN } from './common'
import { CurrencyCode } from './catalogs'

/**
 * The invoice CSV's file name as the route checks it (server/billing/invoice-upload.ts): no C0
 * control character, DEL, / or \, and a character other than white space. ASCII classes only.
 */
export const UPLOAD_FILENAME_PATTERN = '^[^\\u0000-\\u001f\\u007f/\\\\]*[^\\s\\u0000-\\u001f\\u007f/\\\\][^\\u0000-\\u001f\\u007f/\\\\]*$'
import { InlineNotifications } from './notifications'

/** A period: a calendar month `YYYY-MM` in the workspace's time zone. */
export const Period = t.String({ pattern: '^([1-8]\\d{3}|9[0-8]\\d{2}|99[0-8]\\d|999[0-8])-(0[1-9]|1[0-2])$', description: 'A calendar month YYYY-MM (in the workspace time_zone), years 1000 to 9998 (its bounds in any time zone keep four-digit years).' })
const PeriodType = Type.String({ pattern: '^([1-8]\\d{3}|9[0-8]\\d{2}|99[0-8]\\d|999[0-8])-(0[1-9]|1[0-2])$' })

/** The meter catalogue (docs/billing.md). */
export const MeterName = t.Union([
  t.Literal('evaluations_succeeded'), t.Literal('pages_text_layer'), t.Literal('pages_ocr'), t.Literal('reports_generated'),
  t.Literal('generation_runs'), t.Literal('diff_runs'), t.Literal('model_cost_micro'),
], { description: 'A meter of the usage ledger.' })

/** An exact decimal string. */
export const Decimal = t.String({ pattern: '^\\d{1,18}(\\.\\d{1,12})?$', description: 'An exact decimal string, e.g. "0.25".' })

/** One graduated tier: billable units up to `up_to` (cumulative; null for the last, open tier). */
export const Tier = t.Object({ up_to: t.Union([Int({ minimum: 1 }), t.Null()]), unit_price: Decimal })

/** The price of one meter: exactly one of unit_price and tiers, after included_quantity free units. */
export const MeterPrice = t.Object({
  meter: MeterName,
  included_quantity: t.Optional(Int({ minimum: 0, description: 'Units free each period (default 0).' })),
  unit_price: t.Optional(Decimal),
  tiers: t.Optional(t.Array(Tier, { minItems: 1, maxItems: 20 })),
})

/** POST /v1/operator/workspaces/{tenantId}/billing-contracts body. */
export const ContractCreate = t.Object({
  currency: CurrencyCode,
  effective_from: Period,
  effective_until: t.Optional(t.Union([Period, t.Null()], { description: 'The last month billed (inclusive); null or absent: open-ended.' })),
  billing_period: t.Optional(t.Literal('monthly')),
  prices: t.Array(MeterPrice, { minItems: 1, maxItems: 20 }),
  minimum_commitment: t.Optional(t.String({ pattern: '^\\d{1,18}(\\.\\d{1,4})?$', description: 'Decimal string per period, e.g. "100.00".' })),
})

/** POST .../billing-contracts/{contractId}/end body. */
export const ContractEnd = t.Object({
  effective_until: t.Optional(t.String({ pattern: '^([1-8]\\d{3}|9[0-8]\\d{2}|99[0-8]\\d|999[0-8])-(0[1-9]|1[0-2])$', description: 'The last month billed (YYYY-MM); default: the current month in the workspace time zone.' })),
})

/** A billing contract. */
export const Contract = t.Object({
  id: Uuid,
  tenant_id: Uuid,
  status: t.Union([t.Literal('active'), t.Literal('ended')]),
  currency: t.String(),
  billing_period: t.Literal('monthly'),
  effective_from: t.String(),
  effective_until: t.Union([t.String(), t.Null()]),
  prices: t.Array(t.Object({ meter: t.String(), included_quantity: Int(), unit_price: t.Optional(t.String()), tiers: t.Optional(t.Array(Tier)) })),
  minimum_commitment: t.String(),
  minimum_commitment_micro: Int(),
  created_at: Timestamp,
  ended_at: t.Optional(Timestamp),
  updated_at: Timestamp,
})

/** Path parameters naming a contract. */
export const ContractParams = t.Object({ contractId: Uuid })
/** Path parameters naming a contract of a workspace (operators). */
export const TenantContractParams = t.Object({ tenantId: Uuid, contractId: Uuid })

/** GET /v1/billing/contracts query. */
export const ContractListQuery = Type.Object({ ...pageQuery })

/** GET /v1/billing/usage query. */
export const UsageQuery = Type.Object({ period: PeriodType })

/** One tier's share of a rated line. */
const TierShare = t.Object({ up_to: t.Union([Int(), t.Null()]), quantity: t.String(), unit_price: t.String() })

/** One meter's line of rated usage. */
export const RatedLine = t.Object({
  meter: t.String(),
  quantity: t.String({ description: 'Units in the period (a whole number as a string).' }),
  included: t.String(),
  billable: t.String(),
  priced: t.Boolean({ description: 'False when the contract has no price for the meter (or there is no contract).' }),
  unit_price: t.Optional(t.String()),
  tiers: t.Optional(t.Array(TierShare)),
  amount: t.Optional(t.String({ description: 'Rounded once, in the currency minor units.' })),
  amount_micro: t.Optional(Int()),
})

/** GET /v1/billing/usage: a period's rated usage. */
export const RatedUsage = t.Object({
  period: t.String(),
  time_zone: t.String(),
  starts_at: Timestamp,
  ends_at: Timestamp,
  contract_id: t.Union([Uuid, t.Null()]),
  currency: t.Union([t.String(), t.Null()]),
  lines: t.Array(RatedLine),
  subtotal: t.Optional(t.String()),
  subtotal_micro: t.Optional(Int()),
  minimum_commitment: t.Optional(t.String()),
  minimum_commitment_micro: t.Optional(Int()),
  minimum_commitment_shortfall: t.Optional(t.String()),
  minimum_commitment_shortfall_micro: t.Optional(Int()),
  total: t.Optional(t.String()),
  total_micro: t.Optional(Int()),
})

/** One line of an external invoice. */
export const InvoiceLine = t.Object({
  kind: t.Optional(t.Union([t.Literal('usage'), t.Literal('minimum_commitment')], { description: 'usage (default) or minimum_commitment.' })),
  meter: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  quantity: t.Optional(Int({ minimum: 0 })),
  unit_price: t.Optional(Decimal),
  amount: t.Optional(Decimal),
  description: t.Optional(t.String({ maxLength: 500 })),
})

/** POST /v1/billing/reconciliations body: exactly one of invoice (JSON lines) and invoice_upload (a CSV through the two-phase upload). */
export const ReconciliationCreate = exactlyOneOf(['invoice', 'invoice_upload'], t.Object({
  period: Period,
  invoice: t.Optional(t.Object({
    currency: t.Optional(t.String({ minLength: 3, maxLength: 3 })),
    lines: t.Array(InvoiceLine, { maxItems: 1000 }),
  })),
  invoice_upload: t.Optional(t.Object({
    filename: t.String({ minLength: 1, maxLength: 255, [STATED_PATTERN]: UPLOAD_FILENAME_PATTERN, description: 'A file name: no path separators or control characters, not blank (else 422 without errors[], the field named in detail).' }),
    size_bytes: Int({ minimum: 1, description: 'The exact length of the CSV to be PUT.' }),
    checksum_sha256: t.Optional(t.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    currency: t.Optional(t.String({ minLength: 3, maxLength: 3 })),
  }, { description: 'A CSV invoice (columns kind, meter, quantity, unit_price, amount, description) uploaded with the presigned PUT in the reply, then completed.' })),
  notifications: InlineNotifications,
}))

/** A reconciliation (the billing_reconciliation task). */
export const Reconciliation = t.Object({
  id: Uuid,
  period: t.String(),
  status: t.Union([t.Literal('awaiting_upload'), t.Literal('queued'), t.Literal('running'), t.Literal('succeeded'), t.Literal('failed')]),
  invoice_source: t.Union([t.Literal('json'), t.Literal('csv')]),
  filename: t.Optional(t.String()),
  invoice_lines: t.Optional(Int({ description: 'Absent until an uploaded CSV has been read.' })),
  invoice_currency: t.Optional(t.String()),
  finding_count: t.Optional(Int()),
  error: t.Optional(t.String()),
  created_at: Timestamp,
  finished_at: t.Optional(Timestamp),
  updated_at: Timestamp,
})

/** POST /v1/billing/reconciliations reply: the reconciliation, and for an uploaded invoice the presigned PUT. */
export const ReconciliationStarted = t.Composite([Reconciliation, t.Object({
  upload: t.Optional(t.Object({ method: t.Literal('PUT'), url: t.String(), headers: t.Record(t.String(), t.String()), expires_at: Timestamp })),
})])

/** Path parameters naming a reconciliation. */
export const ReconciliationParams = t.Object({ reconciliationId: Uuid })
/** GET /v1/billing/reconciliations query. */
export const ReconciliationListQuery = Type.Object({ ...pageQuery })

/** The finding kinds. */
export const FindingKind = t.Union([
  t.Literal('quantity_mismatch'), t.Literal('unit_price_mismatch'), t.Literal('usage_not_invoiced'),
  t.Literal('invoiced_without_usage'), t.Literal('usage_outside_contract'), t.Literal('minimum_commitment_shortfall'),
])

/** A reconciliation finding. */
export const Finding = t.Object({
  id: Uuid,
  reconciliation_id: Uuid,
  period: t.String(),
  kind: FindingKind,
  meter: t.Union([t.String(), t.Null()]),
  measure: t.Union([t.Literal('quantity'), t.Literal('unit_price'), t.Literal('amount')]),
  expected: t.String(),
  actual: t.String(),
  difference: t.String({ description: 'actual minus expected' }),
  currency: t.Optional(t.String()),
  status: t.Union([t.Literal('open'), t.Literal('acknowledged'), t.Literal('resolved')]),
  note: t.Optional(t.String()),
  acknowledged_at: t.Optional(Timestamp),
  acknowledged_by: t.Optional(t.Any()),
  resolved_at: t.Optional(Timestamp),
  resolved_by: t.Optional(t.Any()),
  created_at: Timestamp,
  updated_at: Timestamp,
})

/** GET /v1/billing/reconciliation-findings query. */
export const FindingListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('resolved')])),
  period: Type.Optional(PeriodType),
  kind: Type.Optional(Type.Union([
    Type.Literal('quantity_mismatch'), Type.Literal('unit_price_mismatch'), Type.Literal('usage_not_invoiced'),
    Type.Literal('invoiced_without_usage'), Type.Literal('usage_outside_contract'), Type.Literal('minimum_commitment_shortfall'),
  ])),
  reconciliation_id: Type.Optional(Type.String({ format: 'uuid' })),
})

/** Path parameters naming a finding. */
export const FindingParams = t.Object({ findingId: Uuid })
/** POST .../acknowledge and .../resolve body. */
export const FindingDecision = t.Object({ note: NonBlankText({ minLength: 1, maxLength: 2000 }) })

// ---- operator surface (outside the /v1 promise) ----

/** A workspace's evaluation policy. */
export const EvaluationPolicy = t.Object({
  engine: t.Union([t.Literal('any'), t.Literal('builtin')], { description: "any: the deployment's engine; builtin: never the model." }),
  max_questions: t.Union([Int({ minimum: 1 }), t.Null()]),
  max_pages_per_document: t.Union([Int({ minimum: 1 }), t.Null()]),
  ocr: t.Boolean(),
})

/** PUT evaluation-policy body (full replace; omitted fields take their defaults). */
export const EvaluationPolicyWrite = t.Partial(EvaluationPolicy)

/** GET /v1/operator/costs query. */
export const CostsQuery = Type.Object({ period: PeriodType })

/** Platform cost figures of one period (UTC calendar month). */
export const PlatformCosts = t.Object({
  period: t.String(),
  starts_at: Timestamp,
  ends_at: Timestamp,
  workspaces: t.Array(t.Object({
    tenant_id: Uuid,
    slug: t.String(),
    usage: t.Record(t.String(), t.String()),
    model_cost_micro: Int(),
    model_cost: t.String(),
    input_tokens: Int(),
    output_tokens: Int(),
  })),
  totals: t.Object({ usage: t.Record(t.String(), t.String()), model_cost_micro: Int(), model_cost: t.String() }),
})

/** Cache figures of this process. */
export const CacheFigures = t.Object({
  process: t.Object({ pid: Int(), uptime_s: Int() }),
  caches: t.Array(t.Object({
    name: t.String(), hits: Int(), misses: Int(), size: Int(), max_entries: Int(), ttl_ms: Int(),
  })),
  parser_pool: t.Object({ processes: Int(), busy: Int(), queued: Int(), ocrInUse: Int(), ocrWaiting: Int() }),
})
