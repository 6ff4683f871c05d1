/**
 * Billing contracts and rated usage: operators create and end contracts (HTTP and CLI); an
 * overlapping contract is 422 naming the field; admins and billing-scoped keys read them; a month
 * of generated usage in two workspaces (one in New York time, EUR; one in UTC, JPY) rates exactly
 * to hand-computed totals: included units, graduated tiers, one rounding per line in the
 * currency's minor units, and a minimum commitment.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { startIssuer, type TestIssuer } from '../helpers/oidc'
import { runCli } from '../helpers/cli'
import { deliveriesOf } from '../helpers/authoring'
import { putBytes } from '../helpers/samples'
import { recordUsageEvents, type UsageEventInput } from '../../server/billing/ledger'

setDefaultTimeout(60_000)

let app: TestApp
let issuer: TestIssuer
let operator: string
let a: { id: string; slug: string }
let b: { id: string; slug: string }
let adminA: string
let adminB: string

/** A's contract (EUR, from 2026-02, open-ended). */
const CONTRACT_A = {
  currency: 'EUR',
  effective_from: '2026-02',
  prices: [
    { meter: 'evaluations_succeeded', included_quantity: 100, unit_price: '0.35' },
    { meter: 'pages_text_layer', included_quantity: 1000, tiers: [{ up_to: 5000, unit_price: '0.002' }, { up_to: null, unit_price: '0.0015' }] },
    { meter: 'pages_ocr', tiers: [{ up_to: 100, unit_price: '0.05' }, { up_to: 1000, unit_price: '0.03' }, { up_to: null, unit_price: '0.02' }] },
    { meter: 'reports_generated', unit_price: '0.125' },
    { meter: 'model_cost_micro', unit_price: '0.0000012' },
  ],
  minimum_commitment: '200.00',
}

/** Spreads `total` units of a meter over `events` events across February 2026 (New York). */
function spread(meter: UsageEventInput['meter'], total: number, events: number, tag: string): UsageEventInput[] {
  const out: UsageEventInput[] = []
  let left = total
  for (let i = 0; i < events; i++) {
    const quantity = i === events - 1 ? left : Math.floor(total / events)
    left -= quantity
    // 2026-02-01T06:00Z (01:00 New York) onwards, some hours apart, inside February in New York.
    const at = new Date(Date.UTC(2026, 1, 1, 6) + Math.floor((i * 26 * 86_400_000) / events))
    out.push({ meter, quantity, sourceKind: 'test', sourceId: crypto.randomUUID(), sourceRef: tag, occurredAt: at })
  }
  return out
}

const ops = (method: string, path: string, body?: unknown, token = operator) => call(app.url, method, path, { token, body })

beforeAll(async () => {
  issuer = await startIssuer()
  app = await startApp({ env: { SVC_OIDC_ISSUER: issuer.issuer, SVC_OPERATOR_SUBJECTS: 'billing-operator' } })
  operator = await issuer.token('billing-operator')
  a = await app.tenant()
  b = await app.tenant()
  await app.member(a.id, 'billing-admin-a', 'admin')
  await app.member(b.id, 'billing-admin-b', 'admin')
  adminA = await issuer.token('billing-admin-a')
  adminB = await issuer.token('billing-admin-b')
  await app.sql`insert into tenant_settings (tenant_id, time_zone) values (${a.id}, 'America/New_York')`

  // A, February 2026 in New York: 437 evaluations (one at 2026-03-01T03:00Z, still February there),
  // 7,523 text-layer pages, 1,234 OCR pages, 17 reports, 12,345,678 micro-units of model cost, and
  // 4 generation runs (a meter A's contract does not price). Outside: one evaluation on
  // 2026-02-01T03:00Z (31 January in New York) and one in March.
  const eventsA: UsageEventInput[] = [
    ...spread('evaluations_succeeded', 436, 436, 'a'),
    { meter: 'evaluations_succeeded', quantity: 1, sourceKind: 'test', sourceId: crypto.randomUUID(), occurredAt: new Date('2026-03-01T03:00:00Z') },
    { meter: 'evaluations_succeeded', quantity: 1, sourceKind: 'test', sourceId: crypto.randomUUID(), occurredAt: new Date('2026-02-01T03:00:00Z') },
    { meter: 'evaluations_succeeded', quantity: 1, sourceKind: 'test', sourceId: crypto.randomUUID(), occurredAt: new Date('2026-03-01T06:00:00Z') },
    ...spread('pages_text_layer', 7523, 61, 'a'),
    ...spread('pages_ocr', 1234, 29, 'a'),
    ...spread('reports_generated', 17, 17, 'a'),
    ...spread('model_cost_micro', 12_345_678, 83, 'a'),
    ...spread('generation_runs', 4, 4, 'a'),
  ]
  // B, February 2026 in UTC: 123 evaluations, 3 reports.
  const eventsB: UsageEventInput[] = [...spread('evaluations_succeeded', 123, 123, 'b'), ...spread('reports_generated', 3, 3, 'b')]
  await app.sql.begin(async (tx) => {
    expect(await recordUsageEvents(tx, a.id, eventsA)).toBe(eventsA.length)
    expect(await recordUsageEvents(tx, b.id, eventsB)).toBe(eventsB.length)
    // Recording the same sources again adds nothing (unique per meter and source).
    expect(await recordUsageEvents(tx, a.id, eventsA)).toBe(0)
  })
})
afterAll(async () => {
  await app.stop()
  issuer.stop()
})

describe('billing contracts', () => {
  let contractA: any
  test('operators create them; overlaps are 422 naming the field; admins and billing keys read them; other workspaces get 404', async () => {
    const created = await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts`, CONTRACT_A)
    expect(created.status).toBe(201)
    contractA = created.body
    expect(contractA).toMatchObject({ tenant_id: a.id, status: 'active', currency: 'EUR', billing_period: 'monthly', effective_from: '2026-02', effective_until: null, minimum_commitment: '200.00', minimum_commitment_micro: 200_000_000 })
    expect(contractA.prices[1]).toEqual({ meter: 'pages_text_layer', included_quantity: 1000, tiers: [{ up_to: 5000, unit_price: '0.002' }, { up_to: null, unit_price: '0.0015' }] })

    const later = problemOf(await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts`, { ...CONTRACT_A, effective_from: '2026-06' }))
    expect(later).toMatchObject({ type: 'urn:svc:error:validation', status: 422 })
    expect(later.errors).toBeUndefined()
    expect(later.detail).toStartWith('effective_from:')
    expect(later.detail).toContain(contractA.id)
    const earlier = problemOf(await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts`, { ...CONTRACT_A, effective_from: '2025-06', effective_until: '2026-02' }))
    expect(earlier.detail).toStartWith('effective_until:')
    const bad = problemOf(await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts`, { ...CONTRACT_A, effective_from: '2024-01', effective_until: '2024-12', currency: 'XYZ' }))
    expect(bad.detail).toStartWith('currency')
    const tiers = problemOf(await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts`, { ...CONTRACT_A, effective_from: '2024-01', effective_until: '2024-12', prices: [{ meter: 'pages_ocr', tiers: [{ up_to: null, unit_price: '1' }, { up_to: 5, unit_price: '1' }] }] }))
    expect(tiers.detail).toStartWith('prices/0/tiers/0/up_to')
    // A contract that ends before A's starts does not overlap.
    const old = await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts`, { ...CONTRACT_A, effective_from: '2025-01', effective_until: '2026-01', minimum_commitment: '0' })
    expect(old.status).toBe(201)

    const listed = await call(app.url, 'GET', '/v1/billing/contracts?limit=1', { token: adminA })
    expect(listed.status).toBe(200)
    expect(listed.body.items).toEqual([old.body])
    const next = await call(app.url, 'GET', `/v1/billing/contracts?limit=1&cursor=${encodeURIComponent(listed.body.next_cursor)}`, { token: adminA })
    expect(next.body).toEqual({ items: [contractA], next_cursor: null })
    expect((await call(app.url, 'GET', `/v1/billing/contracts/${contractA.id}`, { token: adminA })).body).toEqual(contractA)
    const readKey = await app.apiKey(a.id, ['billing:read'])
    expect((await call(app.url, 'GET', `/v1/billing/contracts/${contractA.id}`, { token: readKey })).body).toEqual(contractA)
    expect(problemOf(await call(app.url, 'GET', '/v1/billing/contracts', { token: await app.apiKey(a.id, ['scenarios:read', 'settings:write']) })).type).toBe('urn:svc:error:forbidden')
    await app.member(a.id, 'billing-viewer-a', 'viewer')
    expect((await call(app.url, 'GET', '/v1/billing/contracts', { token: await issuer.token('billing-viewer-a') })).status).toBe(403)
    // B never sees A's contract: 404, as if absent.
    expect(problemOf(await call(app.url, 'GET', `/v1/billing/contracts/${contractA.id}`, { token: adminB })).type).toBe('urn:svc:error:not_found')
    expect((await call(app.url, 'GET', '/v1/billing/contracts', { token: adminB })).body).toEqual({ items: [], next_cursor: null })
  })

  test('ending: the last month billed; a second end is 409; the CLI creates, ends and lists', async () => {
    const c = await ops('POST', `/v1/operator/workspaces/${b.id}/billing-contracts`, { currency: 'JPY', effective_from: '2025-01', prices: [{ meter: 'evaluations_succeeded', unit_price: '10' }] })
    expect(c.status).toBe(201)
    const ended = await ops('POST', `/v1/operator/workspaces/${b.id}/billing-contracts/${c.body.id}/end`, { effective_until: '2025-12' })
    expect(ended.body).toMatchObject({ id: c.body.id, status: 'ended', effective_until: '2025-12', ended_at: expect.any(String) })
    expect(problemOf(await ops('POST', `/v1/operator/workspaces/${b.id}/billing-contracts/${c.body.id}/end`, { effective_until: '2025-11' })).type).toBe('urn:svc:error:conflict')
    expect((await ops('POST', `/v1/operator/workspaces/${a.id}/billing-contracts/${c.body.id}/end`, {})).status).toBe(404)

    const prices = JSON.stringify([{ meter: 'evaluations_succeeded', unit_price: '12.5' }, { meter: 'reports_generated', unit_price: '99.5' }])
    const cli = await runCli(app, ['billing', 'contract', 'create', '--tenant', b.slug, '--currency', 'JPY', '--from', '2026-01', '--prices', prices, '--minimum', '5000'])
    expect(cli.code).toBe(0)
    expect(cli.json).toMatchObject({ tenant_id: b.id, currency: 'JPY', effective_from: '2026-01', minimum_commitment: '5000', minimum_commitment_micro: 5_000_000_000 })
    const overlap = await runCli(app, ['billing', 'contract', 'create', '--tenant', b.slug, '--currency', 'JPY', '--from', '2025-12', '--until', '2026-01', '--prices', prices])
    expect(overlap.code).toBe(2)
    expect(overlap.stderr).toContain('effective_from')
    const list = await runCli(app, ['billing', 'contract', 'list', '--tenant', b.slug])
    expect(list.json.items.map((x: any) => [x.effective_from, x.status])).toEqual([['2026-01', 'active'], ['2025-01', 'ended']])
    const end = await runCli(app, ['billing', 'contract', 'end', '--tenant', b.slug, '--id', list.json.items[1].id])
    expect(end.code).toBe(2)
    // Creating and ending are in B's audit chain, with who did it.
    const audit = await app.sql`select kind, actor, data from audit_events where tenant_id = ${b.id} order by seq`
    expect(audit.map((e) => [e.kind, e.actor.kind, e.data.contract_id])).toEqual([
      ['billing.contract.created', 'operator', c.body.id], ['billing.contract.ended', 'operator', c.body.id], ['billing.contract.created', 'cli', cli.json.id],
    ])
  })
})

describe('rated usage', () => {
  test('A (EUR, New York): included units, graduated tiers, one rounding per line, minimum commitment; exact to hand-computed totals', async () => {
    const r = await call(app.url, 'GET', '/v1/billing/usage?period=2026-02', { token: adminA })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      period: '2026-02', time_zone: 'America/New_York', starts_at: '2026-02-01T05:00:00.000Z', ends_at: '2026-03-01T05:00:00.000Z', currency: 'EUR',
    })
    expect(r.body.lines).toEqual([
      // 437 - 100 included = 337 x 0.35 = 117.95
      { meter: 'evaluations_succeeded', quantity: '437', included: '100', billable: '337', priced: true, unit_price: '0.35', amount: '117.95', amount_micro: 117_950_000 },
      // 7,523 - 1,000 = 6,523: 5,000 x 0.002 = 10 + 1,523 x 0.0015 = 2.2845 -> 12.2845 -> 12.28
      { meter: 'pages_text_layer', quantity: '7523', included: '1000', billable: '6523', priced: true,
        tiers: [{ up_to: 5000, quantity: '5000', unit_price: '0.002' }, { up_to: null, quantity: '1523', unit_price: '0.0015' }], amount: '12.28', amount_micro: 12_280_000 },
      // 100 x 0.05 = 5 + 900 x 0.03 = 27 + 234 x 0.02 = 4.68 -> 36.68
      { meter: 'pages_ocr', quantity: '1234', included: '0', billable: '1234', priced: true,
        tiers: [{ up_to: 100, quantity: '100', unit_price: '0.05' }, { up_to: 1000, quantity: '900', unit_price: '0.03' }, { up_to: null, quantity: '234', unit_price: '0.02' }], amount: '36.68', amount_micro: 36_680_000 },
      // 17 x 0.125 = 2.125 -> 2.13 once for the line (per unit it would be 17 x 0.13 = 2.21)
      { meter: 'reports_generated', quantity: '17', included: '0', billable: '17', priced: true, unit_price: '0.125', amount: '2.13', amount_micro: 2_130_000 },
      // unpriced usage is shown at 0.00
      { meter: 'generation_runs', quantity: '4', included: '0', billable: '4', priced: false, amount: '0.00', amount_micro: 0 },
      // 12,345,678 x 0.0000012 = 14.8148136 -> 14.81
      { meter: 'model_cost_micro', quantity: '12345678', included: '0', billable: '12345678', priced: true, unit_price: '0.0000012', amount: '14.81', amount_micro: 14_810_000 },
    ])
    // 117.95 + 12.28 + 36.68 + 2.13 + 14.81 = 183.85 < 200.00: shortfall 16.15
    expect(r.body).toMatchObject({
      subtotal: '183.85', subtotal_micro: 183_850_000, minimum_commitment: '200.00', minimum_commitment_micro: 200_000_000,
      minimum_commitment_shortfall: '16.15', minimum_commitment_shortfall_micro: 16_150_000, total: '200.00', total_micro: 200_000_000,
    })
    // January (New York) holds the one evaluation of 2026-02-01T03:00Z, under the earlier contract.
    const jan = await call(app.url, 'GET', '/v1/billing/usage?period=2026-01', { token: adminA })
    expect(jan.body.lines.filter((l: any) => l.quantity !== '0')).toEqual([{ meter: 'evaluations_succeeded', quantity: '1', included: '1', billable: '0', priced: true, unit_price: '0.35', amount: '0.00', amount_micro: 0 }])
    expect(jan.body.lines.map((l: any) => l.meter)).toEqual(CONTRACT_A.prices.map((p) => p.meter)) // every priced meter has its line
    expect(jan.body).toMatchObject({ contract_id: expect.any(String), subtotal: '0.00', minimum_commitment_shortfall: '0.00', total: '0.00' })
    // The operator sees the same figures.
    expect((await ops('GET', `/v1/operator/workspaces/${a.id}/billing-usage?period=2026-02`)).body).toEqual(r.body)
  })

  test('B (JPY, UTC): no minor units; a minimum commitment above usage; no contract means quantities only', async () => {
    const r = await call(app.url, 'GET', '/v1/billing/usage?period=2026-02', { token: adminB })
    expect(r.body.lines).toEqual([
      // 123 x 12.5 = 1,537.5 -> 1,538
      { meter: 'evaluations_succeeded', quantity: '123', included: '0', billable: '123', priced: true, unit_price: '12.5', amount: '1538', amount_micro: 1_538_000_000 },
      // 3 x 99.5 = 298.5 -> 299
      { meter: 'reports_generated', quantity: '3', included: '0', billable: '3', priced: true, unit_price: '99.5', amount: '299', amount_micro: 299_000_000 },
    ])
    expect(r.body).toMatchObject({ time_zone: 'UTC', currency: 'JPY', subtotal: '1837', minimum_commitment: '5000', minimum_commitment_shortfall: '3163', total: '5000', total_micro: 5_000_000_000 })
    const none = await call(app.url, 'GET', '/v1/billing/usage?period=2024-02', { token: adminB })
    expect(none.body).toEqual({ period: '2024-02', time_zone: 'UTC', starts_at: '2024-02-01T00:00:00.000Z', ends_at: '2024-03-01T00:00:00.000Z', contract_id: null, currency: null, lines: [] })
    expect(problemOf(await call(app.url, 'GET', '/v1/billing/usage?period=2026-13', { token: adminB })).errors?.[0]?.pointer).toBe('/period')
    expect(problemOf(await call(app.url, 'GET', '/v1/billing/usage', { token: adminB })).status).toBe(422)
    // Year 0000 was a 500 from the date arithmetic, and so was 9999-12 (its end has a five-digit year): periods are years 1000 to 9998.
    const zero = problemOf(await call(app.url, 'GET', '/v1/billing/usage?period=0000-01', { token: adminB }))
    expect([zero.status, zero.errors?.[0]?.pointer]).toEqual([422, '/period'])
    const last = problemOf(await call(app.url, 'GET', '/v1/billing/usage?period=9999-12', { token: adminB }))
    expect([last.status, last.errors?.[0]?.pointer]).toEqual([422, '/period'])
    for (const period of ['1000-01', '9998-12']) {
      const r = await call(app.url, 'GET', `/v1/billing/usage?period=${period}`, { token: adminB })
      expect([r.status, r.body.period]).toEqual([200, period])
    }
  })

  test('the ledger is append-only', async () => {
    await expect(app.sql`update usage_events set quantity = 2 where tenant_id = ${a.id}`).rejects.toThrow(/append-only/)
    await expect(app.sql`delete from usage_events where tenant_id = ${a.id}`).rejects.toThrow(/append-only/)
  })
})

describe('reconciliation', () => {
  const reconcile = (token: string, body: unknown) => call(app.url, 'POST', '/v1/billing/reconciliations', { token, body })
  const ended = async (token: string, id: string) => {
    for (let i = 0; i < 400; i++) {
      const r = await call(app.url, 'GET', `/v1/billing/reconciliations/${id}`, { token })
      if (r.body.status === 'succeeded' || r.body.status === 'failed') return r.body
      await Bun.sleep(25)
    }
    throw new Error('reconciliation did not end')
  }
  const strip = (f: any) => ({ kind: f.kind, meter: f.meter, measure: f.measure, expected: f.expected, actual: f.actual, difference: f.difference })

  test('a planted invoice produces exactly the planted findings, one of each kind, and notifies like every task', async () => {
    const planted = {
      period: '2026-02',
      invoice: {
        currency: 'EUR',
        lines: [
          { meter: 'evaluations_succeeded', quantity: 436, unit_price: '0.35', amount: '117.60' }, // one short
          { meter: 'pages_text_layer', quantity: 7523, amount: '12.28' },
          // pages_ocr (1,234 billable) left out
          { meter: 'reports_generated', quantity: 17, unit_price: '0.15', amount: '2.55' }, // another unit price
          { meter: 'model_cost_micro', quantity: 12_345_678, unit_price: '0.0000012', amount: '14.81' },
          { meter: 'diff_runs', quantity: 2, unit_price: '1.00', amount: '2.00' }, // no such usage
          { kind: 'minimum_commitment', amount: '10.00' }, // 16.15 is due
        ],
      },
      notifications: [{ channel: 'email', email: { address: 'billing@example.test' } }],
    }
    expect((await reconcile(await app.apiKey(a.id, ['billing:read']), planted)).status).toBe(403)
    const r = await reconcile(adminA, planted)
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ period: '2026-02', status: 'queued', invoice_lines: 6, invoice_currency: 'EUR' })
    expect(r.headers.get('location')).toBe(`/v1/billing/reconciliations/${r.body.id}`)
    expect(await ended(adminA, r.body.id)).toMatchObject({ status: 'succeeded', finding_count: 6 })

    const findings = await call(app.url, 'GET', `/v1/billing/reconciliation-findings?reconciliation_id=${r.body.id}`, { token: adminA })
    expect(findings.body.items.map(strip).sort((x: any, y: any) => x.kind.localeCompare(y.kind))).toEqual([
      { kind: 'invoiced_without_usage', meter: 'diff_runs', measure: 'quantity', expected: '0', actual: '2', difference: '2' },
      { kind: 'minimum_commitment_shortfall', meter: null, measure: 'amount', expected: '16.15', actual: '10.00', difference: '-6.15' },
      { kind: 'quantity_mismatch', meter: 'evaluations_succeeded', measure: 'quantity', expected: '437', actual: '436', difference: '-1' },
      { kind: 'unit_price_mismatch', meter: 'reports_generated', measure: 'unit_price', expected: '0.125', actual: '0.15', difference: '0.025' },
      { kind: 'usage_not_invoiced', meter: 'pages_ocr', measure: 'quantity', expected: '1234', actual: '0', difference: '-1234' },
      { kind: 'usage_outside_contract', meter: 'generation_runs', measure: 'quantity', expected: '0', actual: '4', difference: '4' },
    ])
    for (const f of findings.body.items) expect(f).toMatchObject({ reconciliation_id: r.body.id, period: '2026-02', currency: 'EUR', status: 'open' })

    const deliveries = await deliveriesOf(app, adminA, 'billing_reconciliation', r.body.id)
    expect(deliveries[0].payload).toMatchObject({
      event_type: 'task.completed', task_kind: 'billing_reconciliation', task_id: r.body.id, tenant_id: a.id,
      outcome: { status: 'succeeded', summary: 'billing reconciliation completed, review the findings', error_code: null },
    })
    expect(deliveries[0].payload.links.resource).toEndWith(`/v1/billing/reconciliations/${r.body.id}`)

    // Filters and the page.
    const byKind = await call(app.url, 'GET', '/v1/billing/reconciliation-findings?kind=quantity_mismatch&period=2026-02', { token: adminA })
    expect(byKind.body.items.map((f: any) => f.meter)).toEqual(['evaluations_succeeded'])
    const first = await call(app.url, 'GET', `/v1/billing/reconciliation-findings?reconciliation_id=${r.body.id}&limit=4`, { token: adminA })
    const rest = await call(app.url, 'GET', `/v1/billing/reconciliation-findings?reconciliation_id=${r.body.id}&limit=4&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: adminA })
    expect([...first.body.items, ...rest.body.items].map((f: any) => f.id)).toEqual(findings.body.items.map((f: any) => f.id))
    expect(rest.body.next_cursor).toBeNull()
    expect(problemOf(await call(app.url, 'GET', `/v1/billing/reconciliation-findings?reconciliation_id=${r.body.id}&limit=4&kind=usage_not_invoiced&cursor=${encodeURIComponent(first.body.next_cursor)}`, { token: adminA })).type).toBe('urn:svc:error:invalid_cursor')

    // Acknowledge, then resolve: admins in person, audited in the hash chain; keys refused at any scope.
    const target = findings.body.items.find((f: any) => f.kind === 'quantity_mismatch')
    const allScopes = await app.apiKey(a.id, ['billing:read', 'billing:write', 'settings:write', 'notifications:write'])
    expect(problemOf(await call(app.url, 'POST', `/v1/billing/reconciliation-findings/${target.id}/acknowledge`, { token: allScopes, body: { note: 'x' } })).type).toBe('urn:svc:error:forbidden')
    expect(problemOf(await call(app.url, 'POST', `/v1/billing/reconciliation-findings/${target.id}/acknowledge`, { token: adminB, body: { note: 'x' } })).type).toBe('urn:svc:error:not_found')
    const ack = await call(app.url, 'POST', `/v1/billing/reconciliation-findings/${target.id}/acknowledge`, { token: adminA, body: { note: 'one evaluation finished after the invoice run' } })
    expect(ack.body).toMatchObject({ status: 'acknowledged', note: 'one evaluation finished after the invoice run', acknowledged_at: expect.any(String), acknowledged_by: { kind: 'user' } })
    expect(problemOf(await call(app.url, 'POST', `/v1/billing/reconciliation-findings/${target.id}/acknowledge`, { token: adminA, body: { note: 'again' } })).type).toBe('urn:svc:error:conflict')
    const res = await call(app.url, 'POST', `/v1/billing/reconciliation-findings/${target.id}/resolve`, { token: adminA, body: { note: 'credited on the next invoice' } })
    expect(res.body).toMatchObject({ status: 'resolved', note: 'credited on the next invoice', resolved_at: expect.any(String) })
    expect((await call(app.url, 'GET', '/v1/billing/reconciliation-findings?status=resolved', { token: adminA })).body.items.map((f: any) => f.id)).toEqual([target.id])
    const audit = await call(app.url, 'GET', '/v1/audit-events', { token: adminA })
    expect(audit.body.items.slice(0, 2).map((e: any) => [e.kind, e.data.finding_id, e.data.status])).toEqual([
      ['billing.finding.resolved', target.id, 'resolved'], ['billing.finding.acknowledged', target.id, 'acknowledged'],
    ])
    const verify = await runCli(app, ['audit', 'verify', '--tenant', a.slug])
    expect(verify.json).toMatchObject({ ok: true })

    // Another workspace sees none of it.
    expect((await call(app.url, 'GET', `/v1/billing/reconciliation-findings/${target.id}`, { token: adminB })).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/billing/reconciliations/${r.body.id}`, { token: adminB })).status).toBe(404)
    expect((await call(app.url, 'GET', '/v1/billing/reconciliation-findings', { token: adminB })).body.items).toEqual([])
  })

  test('a CSV invoice through the two-phase upload gives the same findings; a broken CSV fails the task naming the line', async () => {
    const csv = [
      'kind,meter,quantity,unit_price,amount,description',
      'usage,evaluations_succeeded,436,0.35,117.60,Evaluations',
      'usage,pages_text_layer,7523,,12.28,Pages',
      'usage,reports_generated,17,0.15,2.55,Reports',
      'usage,model_cost_micro,12345678,0.0000012,14.81,Model',
      'usage,diff_runs,2,1.00,2.00,Diff runs',
      'minimum_commitment,,,,10.00,Minimum',
    ].join('\n') + '\n'
    const bytes = new TextEncoder().encode(csv)
    const start = await reconcile(adminA, { period: '2026-02', invoice_upload: { filename: 'invoice-2026-02.csv', size_bytes: bytes.byteLength, currency: 'EUR' } })
    expect(start.status).toBe(201)
    expect(start.body).toMatchObject({ status: 'awaiting_upload', invoice_source: 'csv', filename: 'invoice-2026-02.csv', invoice_currency: 'EUR', upload: { method: 'PUT' } })
    expect(problemOf(await call(app.url, 'POST', `/v1/billing/reconciliations/${start.body.id}/complete`, { token: adminA })).type).toBe('urn:svc:error:conflict')
    expect((await putBytes(app, start.body.upload, bytes)).status).toBe(204)
    const done = await call(app.url, 'POST', `/v1/billing/reconciliations/${start.body.id}/complete`, { token: adminA })
    expect(done.status).toBe(202)
    expect(await ended(adminA, start.body.id)).toMatchObject({ status: 'succeeded', finding_count: 6, invoice_lines: 6 })
    const findings = await call(app.url, 'GET', `/v1/billing/reconciliation-findings?reconciliation_id=${start.body.id}`, { token: adminA })
    expect(findings.body.items.map((f: any) => f.kind).sort()).toEqual([
      'invoiced_without_usage', 'minimum_commitment_shortfall', 'quantity_mismatch', 'unit_price_mismatch', 'usage_not_invoiced', 'usage_outside_contract',
    ])
    expect(problemOf(await reconcile(adminA, { period: '2026-02', invoice: { lines: [] }, invoice_upload: { filename: 'x.csv', size_bytes: 1 } })).detail).toContain('exactly one of invoice')

    const broken = new TextEncoder().encode('kind,meter,quantity\nusage,evaluations_succeeded,lots\n')
    const b2 = await reconcile(adminA, { period: '2026-02', invoice_upload: { filename: 'broken.csv', size_bytes: broken.byteLength } })
    expect((await putBytes(app, b2.body.upload, broken)).status).toBe(204)
    expect((await call(app.url, 'POST', `/v1/billing/reconciliations/${b2.body.id}/complete`, { token: adminA })).status).toBe(202)
    expect(await ended(adminA, b2.body.id)).toMatchObject({ status: 'failed', error: 'line 2: quantity must be a whole number' })
  })

  test('a matching invoice produces no findings', async () => {
    const key = await app.apiKey(b.id, ['billing:write'])
    const r = await reconcile(key, { period: '2026-02', invoice: { currency: 'JPY', lines: [
      { meter: 'evaluations_succeeded', quantity: 123, unit_price: '12.5', amount: '1538' },
      { meter: 'reports_generated', quantity: 3, unit_price: '99.50', amount: '299' },
      { kind: 'minimum_commitment', amount: '3163' },
    ] } })
    expect(r.status).toBe(202)
    expect(await ended(key, r.body.id)).toMatchObject({ status: 'succeeded', finding_count: 0 })
    expect((await call(app.url, 'GET', `/v1/billing/reconciliation-findings?reconciliation_id=${r.body.id}`, { token: key })).body).toEqual({ items: [], next_cursor: null })
    // An invoice in another currency than the contract's fails the task, naming why.
    const other = await reconcile(key, { period: '2026-02', invoice: { currency: 'EUR', lines: [] } })
    expect(await ended(key, other.body.id)).toMatchObject({ status: 'failed', error: 'the invoice is in EUR, the contract in JPY' })
  })
})
