/**
 * Built-in generator speed: pages of guideline per second.
 *  1. The generator alone, in this process: obligation drafting over the blocks of a 100-page
 *     guideline PDF (generated with pdf-lib, parsed once by the PDF adapter), chunk by chunk.
 *  2. End to end through a running app: POST generate -> generation_run job (plan, one checkpointed
 *     step per chunk, drafts) -> succeeded, timed from the request to the run's end.
 *
 *   bun tests/bench/generate.bench.ts                               # embedded database
 *   DATABASE_URL=postgres://... bun tests/bench/generate.bench.ts   # PostgreSQL
 *   BENCH_PAGES=100 (default)
 */
import { pdfSample } from '../helpers/samples'
import { call, startApp } from '../helpers/app'
import { createGroup, createSet, readyGuideline, runReaches } from '../helpers/authoring'
import { ADAPTERS } from '../../server/documents/adapters'
import { toBlocks } from '../../server/documents/blocks'
import { chunkBlocks, draftFromBlocks } from '../../server/authoring/obligations'

const PAGES = Number(process.env.BENCH_PAGES ?? 100)

const page = (p: number) => [
  `Section ${p}: lending requirements`,
  `Annual revenue for segment ${p} must be at least USD ${(p * 10_000).toLocaleString('en-US')}.`,
  `The debt service coverage ratio of segment ${p} shall be between 1.25 and 10.`,
  `Years in business for segment ${p} should be at least 2.`,
  `The applicant of segment ${p} must not have a prior bankruptcy.`,
  ...Array.from({ length: 12 }, (_, l) => `Line ${l + 1} of page ${p}: background on how the segment is reviewed by the credit team.`),
]
const bytes = await pdfSample(Array.from({ length: PAGES }, (_, i) => page(i + 1)))
const extraction = await ADAPTERS.pdf(bytes)
const blocks = toBlocks(crypto.randomUUID(), extraction).map((b) => ({ id: b.id, guidelineId: 'g', page: b.page, text: b.text }))

const rounds = 5
const t0 = performance.now()
let drafted = 0
for (let r = 0; r < rounds; r++) for (const chunk of chunkBlocks(blocks, 6000)) drafted += draftFromBlocks(chunk).length
const alone = (performance.now() - t0) / rounds
console.log(`generator alone: ${PAGES} pages, ${drafted / rounds} drafts in ${alone.toFixed(1)} ms -> ${(PAGES / (alone / 1000)).toFixed(0)} pages/s`)

const app = await startApp({ env: { SVC_RATE_RUN: '1000/1', SVC_RATE_UNIT: '1000/1' } })
try {
  const key = await app.apiKey((await app.tenant()).id, ['question_sets:write'])
  const group = await createGroup(app, key)
  const guideline = await readyGuideline(app, key, group.id, { filename: 'bench.pdf', contentType: 'application/pdf', bytes })
  const set = await createSet(app, key)
  const t1 = performance.now()
  const r = await call(app.url, 'POST', `/v1/question-sets/${set.id}/generate`, { token: key, body: { guideline_ids: [guideline.id] } })
  const run = await runReaches(app, key, set.id, r.body.id, undefined, 300_000)
  const e2e = performance.now() - t1
  console.log(`end to end (${app.config.databaseUrl ? 'PostgreSQL' : 'embedded'}): ${run.status}, ${run.progress.steps_total} steps, ${run.progress.drafted} drafts in ${e2e.toFixed(0)} ms -> ${(PAGES / (e2e / 1000)).toFixed(1)} pages/s`)
} finally {
  await app.stop()
}
