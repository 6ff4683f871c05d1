/**
 * Evaluation speed with the built-in engine: a 50-question set (25 fact questions with accept rules,
 * 25 text questions answered from retrieved passages) over a 200-page case (a 200-page PDF, an
 * application form PDF and a bank statement CSV), through the real service: POST evaluate, the
 * evaluation_run job, answers stored. Reports time per evaluation (POST to succeeded) and per
 * question, and the engine's own share (index build + answering, in process). Target: under 1 s
 * per evaluation on this machine. Also the cost of what ingestion mines beside the blocks (the
 * document type and its checks, document-findings.ts) against the 200-page PDF's ingestion:
 * target at most 10% of the adapter's pages/s.
 *
 *   bun tests/bench/evaluate.bench.ts                 (embedded database)
 *   DATABASE_URL=postgres://... bun tests/bench/evaluate.bench.ts
 *   BENCH_RUNS=5 (default)
 */
import { call, startApp } from '../helpers/app'
import { longPdfSample } from '../helpers/samples'
import { caseWith, applicationForm, bankStatement, publishedSet } from '../helpers/underwriting-pack'
import { loadCaseBlocks } from '../../server/evaluation/store'
import { buildCaseContext, builtinEngine } from '../../server/evaluation/engine'
import { findDocumentFindings } from '../../server/evaluation/document-findings'

const runs = Number(process.env.BENCH_RUNS ?? 5)
const app = await startApp({ env: { SVC_RATE_RUN: '1000/1' }, runner: { pollMs: 5 } })
try {
  const t = await app.tenant()
  const key = await app.apiKey(t.id, ['scenarios:write', 'question_sets:write'])

  const facts = ['annual_revenue', 'years_in_business', 'prior_bankruptcy', 'requested_amount', 'bank_statement.balance.min', 'bank_statement.balance.last', 'amount.sum', 'date.max', 'credit_score', 'applicant']
  const questions = Array.from({ length: 50 }, (_, i) => i < 25
    ? { key: `fact_${i}`, text: `Fact question ${i}`, criticality: (['critical', 'major', 'minor'] as const)[i % 3], answer_type: 'text', fact_path: facts[i % facts.length]!, accept: 'present' }
    : { key: `text_${i}`, text: ['What does the applicant declare about income and assets?', 'Which liabilities are listed in section ' + i + '?', 'Is there any statement about outstanding litigation?', 'What is stated on line ' + (i % 20) + ' of the applicant statement?'][i % 4]!, criticality: 'minor', answer_type: 'text' })
  await publishedSet(app, key, questions, { name: 'bench set' })

  const csv = bankStatement()
  const long = { filename: 'statements.pdf', contentType: 'application/pdf', bytes: await longPdfSample(200) }
  const t0 = performance.now()
  const { scenario } = await caseWith(app, key, [await applicationForm(), csv, long])
  console.log(`case prepared (3 documents, ingestion included) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  // The 200-page PDF's ingestion on its own (upload complete -> ready), against the findings mined from its blocks.
  const i0 = performance.now()
  const { docs: timed } = await caseWith(app, key, [{ ...long, filename: 'statements-again.pdf' }], { name: 'ingestion timing' })
  const ingestMs = performance.now() - i0
  const longDoc = timed['statements-again.pdf']
  const longBlocks = await app.sql<{ id: string; page: number; kind: string; text: string }[]>`select b.id, b.page, b.kind, b.text from document_block_chunks c, json_to_recordset(c.blocks::json) as b(id uuid, position int, page int, kind text, text text) where c.document_id = ${longDoc.id} order by c.first_position, b.position`
  const f0 = performance.now()
  const findingRuns = 5
  for (let i = 0; i < findingRuns; i++) findDocumentFindings({ id: longDoc.id, filename: 'statements-again.pdf', content_type: 'application/pdf' }, [...longBlocks] as never)
  const findingsMs = (performance.now() - f0) / findingRuns

  const wall: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    const e = await call(app.url, 'POST', `/v1/scenarios/${scenario.id}/evaluate`, { token: key })
    if (e.status !== 202) throw new Error(`evaluate: ${e.status} ${e.text}`)
    for (;;) {
      const r = await call(app.url, 'GET', `/v1/scenarios/${scenario.id}/evaluations/${e.body.id}`, { token: key })
      if (r.body.status === 'succeeded') { if (i === 0) console.log(`blocks: ${r.body.block_count}, documents: ${r.body.document_count}, questions: ${r.body.progress.total}`); break }
      if (r.body.status === 'failed' || r.body.status === 'canceled') throw new Error(`evaluation ${r.body.status}`)
      await Bun.sleep(5)
    }
    wall.push(performance.now() - start)
  }

  // The engine's own share, in process: load the blocks, build the index and facts, answer 50 questions.
  const e0 = performance.now()
  const { blocks } = await loadCaseBlocks(app.sql, t.id, scenario.id)
  const e1 = performance.now()
  const context = buildCaseContext(blocks)
  const e2 = performance.now()
  for (const q of questions) await builtinEngine.answer(q as never, context)
  const e3 = performance.now()

  const sorted = [...wall].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  const max = sorted[sorted.length - 1]!
  console.log(`per evaluation (POST evaluate -> succeeded, ${runs} runs): median ${median.toFixed(0)} ms, max ${max.toFixed(0)} ms; per question ${(median / questions.length).toFixed(1)} ms`)
  console.log(`engine only: load ${blocks.length} blocks ${(e1 - e0).toFixed(0)} ms, index + facts ${(e2 - e1).toFixed(0)} ms, answer 50 questions ${(e3 - e2).toFixed(0)} ms (${((e3 - e2) / questions.length).toFixed(2)} ms per question)`)
  console.log(median < 1000 ? 'PASS: under 1 s per evaluation' : 'MISS: over the 1 s target')
  const share = findingsMs / ingestMs
  console.log(`ingestion of the 200-page PDF: ${ingestMs.toFixed(0)} ms (${(200 / (ingestMs / 1000)).toFixed(0)} pages/s); type + checks over its ${longBlocks.length} blocks: ${findingsMs.toFixed(1)} ms (${(share * 100).toFixed(1)}% of the ingestion; pages/s with them ${(200 / ((ingestMs + findingsMs) / 1000)).toFixed(0)})`)
  console.log(share <= 0.1 ? 'PASS: type and checks cost at most 10% of the ingestion' : 'MISS: type and checks cost over 10% of the ingestion')
} finally {
  await app.stop()
}
