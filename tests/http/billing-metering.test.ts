/**
 * The usage ledger fed by real work: a case's documents (text-layer pages), a succeeded evaluation,
 * a findings report, a built-in generation run and metered model calls each leave their usage
 * events, written with the state change; and the migration's backfill, run over the same rows with
 * the ledger emptied, rebuilds exactly the events the code wrote.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { call, startApp, type TestApp } from '../helpers/app'
import { caseWith, evaluationEnded, packFiles, publishedSet } from '../helpers/underwriting-pack'
import { createGroup, createSet, guidelineDocx, readyGuideline, runReaches } from '../helpers/authoring'
import { recordUsage } from '../../server/billing/budgets'

setDefaultTimeout(90_000)

let app: TestApp
beforeAll(async () => { app = await startApp({ env: { SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1' } }) })
afterAll(() => app.stop())

const ledger = (tenantId: string) => app.sql<{ meter: string; quantity: string; source_kind: string; source_id: string; source_ref: string }[]>`
  select meter, quantity::text as quantity, source_kind, source_id, source_ref from usage_events
  where tenant_id = ${tenantId} order by meter, source_kind, source_id, source_ref`

describe('metering', () => {
  test('documents, an evaluation, a report, a generation run and model calls are metered once each; the backfill rebuilds the same ledger', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
    const { set } = await publishedSet(app, key)
    const { scenario, docs } = await caseWith(app, key, await packFiles())
    const ev = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
    expect((await evaluationEnded(app, key, scenario.id, ev.body.id)).status).toBe('succeeded')
    const report = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/reports`, { token: key, body: {} })
    expect(report.status).toBe(202)
    for (let i = 0; i < 400; i++) {
      if ((await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/reports/${report.body.id}`, { token: key })).body.status === 'succeeded') break
      await Bun.sleep(25)
    }
    const group = await createGroup(app, key)
    const guideline = await readyGuideline(app, key, group.id, await guidelineDocx())
    const genSet = await createSet(app, key)
    const run = await call(app.url, 'POST', `/v1/question-sets/${genSet.id}/generate`, { token: key, body: { guideline_ids: [guideline.id], generator: 'builtin' } })
    expect((await runReaches(app, key, genSet.id, run.body.id)).status).toBe('succeeded')
    const modelRun = crypto.randomUUID()
    await app.sql.begin(async (tx) => {
      await recordUsage(tx, t.id, { runKind: 'generation_run', runId: modelRun, step: 0, input_tokens: 100, output_tokens: 10, cost_micro: 700 })
      await recordUsage(tx, t.id, { runKind: 'generation_run', runId: modelRun, step: 1, input_tokens: 100, output_tokens: 10, cost_micro: 300 })
    })

    const events = await ledger(t.id)
    const docRows = await app.sql<{ id: string; pages: any; g: number }[]>`select id, page_summary as pages, ingestion_generation as g from documents where tenant_id = ${t.id} and scenario_id = ${scenario.id}`
    expect(docRows.length).toBe(Object.keys(docs).length)
    const expected = [
      ...docRows.flatMap((d) => (d.pages.text_layer > 0 ? [{ meter: 'pages_text_layer', quantity: String(d.pages.text_layer), source_kind: 'document_ingestion', source_id: d.id, source_ref: `generation:${d.g}` }] : [])),
      { meter: 'evaluations_succeeded', quantity: '1', source_kind: 'evaluation_run', source_id: ev.body.id, source_ref: '' },
      { meter: 'reports_generated', quantity: '1', source_kind: 'report_generated', source_id: report.body.id, source_ref: '' },
      { meter: 'generation_runs', quantity: '1', source_kind: 'generation_run', source_id: run.body.id, source_ref: '' },
      { meter: 'model_cost_micro', quantity: '700', source_kind: 'generation_run', source_id: modelRun, source_ref: 'step:0' },
      { meter: 'model_cost_micro', quantity: '300', source_kind: 'generation_run', source_id: modelRun, source_ref: 'step:1' },
    ]
    const key4 = (e: any) => `${e.meter}|${e.source_kind}|${e.source_id}|${e.source_ref}|${e.quantity}`
    expect(events.map(key4).sort()).toEqual(expected.map(key4).sort())
    expect(docRows.reduce((n, d) => n + d.pages.text_layer, 0)).toBeGreaterThan(2)

    // The backfill of sql/016_billing.sql, over the same rows with the ledger emptied, rebuilds it.
    const migration = readFileSync(`${import.meta.dir}/../../sql/016_billing.sql`, 'utf8')
    const backfill = migration.slice(migration.indexOf('-- Backfill'), migration.indexOf('-- Billing contracts'))
    expect(backfill.match(/insert into usage_events/g)?.length).toBe(7)
    await app.sql.begin(async (tx) => {
      await tx`alter table usage_events disable trigger usage_events_no_update`
      await tx`delete from usage_events where tenant_id = ${t.id}`
      await tx`alter table usage_events enable trigger usage_events_no_update`
    })
    expect((await ledger(t.id)).length).toBe(0)
    await app.sql.unsafe(backfill)
    expect((await ledger(t.id)).map(key4).sort()).toEqual(expected.map(key4).sort())
  })
})
