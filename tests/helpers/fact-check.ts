/**
 * Reading a case as an underwriter would: evaluate it, then each question's answer and the
 * evidence that cites it (the document and page it came from), and the text of a document.
 */
import { expect } from 'bun:test'
import { call, type TestApp } from './app'
import { allBlocks } from './samples'
import { evaluationEnded } from './underwriting-pack'

/** An answer and the places its evidence cites. */
export interface CitedAnswer { value: unknown; cited: { document_id: string; page: number; block_id: string }[] }

/** Evaluates a case with the workspace's published set; returns each question's answer and its evidence. */
export async function evaluateCase(app: TestApp, token: string, scenarioId: string): Promise<Record<string, CitedAnswer>> {
  const run = await call(app.url, 'POST', `/v1/scenarios/${scenarioId}/evaluate`, { token, body: {} })
  expect(run.status).toBe(202)
  expect((await evaluationEnded(app, token, scenarioId, run.body.id)).status).toBe('succeeded')
  const answers = (await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/answers`, { token })).body.items as any[]
  const evidence = (await call(app.url, 'GET', `/v1/scenarios/${scenarioId}/evidence`, { token })).body.items as any[]
  return Object.fromEntries(answers.map((a) => [a.question_key, {
    value: a.value,
    cited: evidence.filter((e) => e.question_key === a.question_key).map((e) => ({ document_id: e.document_id, page: e.page, block_id: e.block_id })),
  }]))
}

/** The text of a document's blocks, joined (blocks by a blank line), with the blocks. */
export async function documentText(app: TestApp, token: string, scenarioId: string, documentId: string, limit = 200) {
  const blocks = await allBlocks(app, token, scenarioId, documentId, limit)
  return { blocks, text: blocks.map((b) => b.text).join('\n\n') }
}
