/**
 * The model-backed generator: one chunk of guideline blocks goes to the OpenAI-compatible endpoint
 * (the answer engine's client, chatJson, with its back-off and typed outage error), which replies
 * with drafted questions citing the blocks. A draft is kept only when it cites a block it was given
 * with a quote that block contains; a rule that does not parse for its answer type is dropped.
 */
import { chatJson, findQuote, ModelResponseError, ruleProblem, slug, type ChatMessage, type ModelSettings } from '../evaluation'
import type { Question } from '../evaluation/engine'
import { thresholdsOf, type Draft, type GenBlock } from './obligations'

const SYSTEM = [
  'You turn underwriting guideline passages into review questions. Each obligation (must, shall, required,',
  'thresholds with numbers or money) becomes one question. Reply with one JSON object and nothing else:',
  '{"questions": [{"key": "<snake_case>", "text": "<the question>", "criticality": "critical" | "major" | "minor",',
  ' "answer_type": "boolean" | "text" | "number" | "date", "fact_path": "<snake_case fact, optional>",',
  ' "accept": "<rule such as value >= 1000000, optional; needs fact_path>",',
  ' "citations": [{"block_id": "<the id of a passage>", "quote": "<words copied exactly from it>"}]}]}',
  'Numbers in rules are plain decimals (1000000.00). Cite only passages you were given; quote them exactly.',
  'When the passages hold no obligation, reply {"questions": []}.',
].join('\n')

/** The messages of one chunk. */
export function chunkMessages(blocks: readonly (GenBlock & { filename?: string })[]): ChatMessage[] {
  const lines = ['Guideline passages:', ...blocks.flatMap((b) => [`[block_id: ${b.id}] document "${b.filename ?? 'guideline'}", page ${b.page}`, b.text, '---'])]
  return [{ role: 'system', content: SYSTEM }, { role: 'user', content: lines.join('\n') }]
}

const CRIT = new Set(['critical', 'major', 'minor'])
const TYPES = new Set(['boolean', 'text', 'number', 'date'])
const FACT = /^[a-z0-9_]+(\.[a-z0-9_]+)*$/

/** Reads a reply into drafts (see the file comment); throws ModelResponseError when it has no question list. */
export function readDrafts(reply: Record<string, unknown>, blocks: readonly GenBlock[]): Draft[] {
  if (!Array.isArray(reply.questions)) throw new ModelResponseError('the model reply has no questions list')
  const out: Draft[] = []
  for (const raw of reply.questions as unknown[]) {
    if (!raw || typeof raw !== 'object') continue
    const q = raw as Record<string, unknown>
    const text = typeof q.text === 'string' ? q.text.trim().slice(0, 2000) : ''
    if (!text || !CRIT.has(q.criticality as string) || !TYPES.has(q.answer_type as string)) continue
    const citations: Draft['citations'] = []
    for (const c of Array.isArray(q.citations) ? q.citations : []) {
      const block = blocks.find((b) => b.id === (c as Record<string, unknown>)?.block_id)
      const quote = (c as Record<string, unknown>)?.quote
      const span = block && typeof quote === 'string' ? findQuote(block.text, quote) : null
      if (block && span) citations.push({ guideline_id: block.guidelineId, block_id: block.id, page: block.page, quote: span })
    }
    if (citations.length === 0) continue
    const key = slug(typeof q.key === 'string' && q.key ? q.key : text).slice(0, 60) || 'question'
    const answerType = q.answer_type as Question['answer_type']
    const factPath = typeof q.fact_path === 'string' && FACT.test(q.fact_path) && q.fact_path.length <= 200 ? q.fact_path : undefined
    const accept = typeof q.accept === 'string' && factPath && q.accept.length <= 500 && ruleProblem(q.accept, answerType) === null ? q.accept : undefined
    out.push({
      key,
      text,
      criticality: q.criticality as Question['criticality'],
      answer_type: answerType,
      ...(typeof q.guidance === 'string' && q.guidance ? { guidance: q.guidance.slice(0, 4000) } : {}),
      ...(factPath ? { fact_path: factPath } : {}),
      ...(accept ? { accept } : {}),
      thresholds: accept ? thresholdsOf(citations[0]!.quote)?.thresholds ?? [] : [],
      citations,
    })
  }
  return out
}

/** Drafts one chunk through the model; returns the drafts and the tokens the endpoint reported. */
export async function modelDraftChunk(settings: ModelSettings, blocks: readonly (GenBlock & { filename?: string })[], options: { signal?: AbortSignal } = {}) {
  const result = await chatJson(settings, chunkMessages(blocks), { signal: options.signal })
  return {
    drafts: readDrafts(result.json, blocks),
    inputTokens: result.usage?.prompt_tokens ?? 0,
    outputTokens: result.usage?.completion_tokens ?? 0,
  }
}
