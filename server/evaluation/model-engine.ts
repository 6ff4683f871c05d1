/**
 * The model-backed answer engine: per question, the best retrieved blocks (the block of the
 * question's fact first, when there is one) go to an OpenAI-compatible chat-completions endpoint,
 * which replies with a JSON answer and citations. A citation is kept only when it names a block the
 * model was given and its quote is in that block's text; otherwise the answer is downgraded (lower
 * confidence, or not_found when nothing valid remains) and its note says why. A vendor outage
 * (ModelOutageError) is left to the caller: the evaluation fails.
 */
import { chatJson, ModelResponseError, type ChatMessage, type ModelSettings } from './model-client'
import { judge, type AnswerEngine, type CaseContext, type EngineAnswer, type EvidenceRef, type Question } from './engine'
import type { CaseBlock } from './facts'
import { readAnswerValue } from './values'

/** Blocks sent with one question. */
export const MODEL_PASSAGES = 8

const SYSTEM = [
  'You answer one underwriting question using only the document passages you are given.',
  'Reply with one JSON object and nothing else:',
  '{"status": "answered" | "not_found", "value": <the answer, or null>, "confidence": <number 0..1>,',
  ' "citations": [{"block_id": "<the id of a passage>", "quote": "<words copied exactly from that passage>"}]}',
  'Value by answer type: boolean -> true or false; number -> a decimal string such as "1250000.00";',
  'date -> "YYYY-MM-DD"; text -> a short string.',
  'An answered reply cites at least one passage. Never cite a passage you were not given; quote it exactly.',
  'When the passages do not answer the question, reply {"status": "not_found", "value": null, "confidence": 0, "citations": []}.',
].join('\n')

/** The blocks a question is answered from: its fact's block first, then the best retrieved ones. */
export function passagesFor(question: Question, context: CaseContext, limit = MODEL_PASSAGES): CaseBlock[] {
  const out: CaseBlock[] = []
  const fact = question.fact_path ? context.facts.lookup(question.fact_path) : undefined
  if (fact) out.push(context.byId.get(fact.blockId)!)
  const query = [question.text, question.guidance ?? '', (question.fact_path ?? '').replace(/[._]/g, ' ')].join(' ')
  for (const hit of context.index.search(query, limit)) {
    if (out.length >= limit) break
    if (!out.some((b) => b.id === hit.block.id)) out.push(hit.block)
  }
  return out
}

/** The messages of one question. */
export function questionMessages(question: Question, passages: readonly CaseBlock[]): ChatMessage[] {
  const lines = [
    `Question (key ${question.key}, answer type ${question.answer_type}): ${question.text}`,
    ...(question.guidance ? [`Guidance: ${question.guidance}`] : []),
    '',
    'Passages:',
    ...passages.flatMap((b) => [`[block_id: ${b.id}] document "${b.filename}", page ${b.page}`, b.text, '---']),
  ]
  return [{ role: 'system', content: SYSTEM }, { role: 'user', content: lines.join('\n') }]
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The span of `text` a quote stands for (whitespace and case aside), or null when it is not there. */
export function findQuote(text: string, quote: string): string | null {
  const words = quote.trim().split(/\s+/).filter(Boolean)
  if (words.length === 0) return null
  const m = new RegExp(words.map(escape).join('\\s+'), 'iu').exec(text)
  return m ? m[0] : null
}

const round2 = (n: number) => Math.round(n * 100) / 100

/** Checks a reply's citations against the passages given; returns the evidence kept and the problems. */
export function checkCitations(citations: unknown, passages: readonly CaseBlock[], context: CaseContext): { evidence: EvidenceRef[]; problems: string[] } {
  const evidence: EvidenceRef[] = []
  const problems: string[] = []
  const list = Array.isArray(citations) ? citations : []
  if (!Array.isArray(citations) && citations !== undefined) problems.push('citations is not a list')
  list.forEach((c, i) => {
    const blockId = c && typeof c === 'object' ? (c as Record<string, unknown>).block_id : undefined
    const quote = c && typeof c === 'object' ? (c as Record<string, unknown>).quote : undefined
    if (typeof blockId !== 'string' || typeof quote !== 'string') { problems.push(`citation ${i + 1} lacks block_id or quote`); return }
    const block = passages.find((b) => b.id === blockId)
    if (!block) {
      problems.push(context.byId.has(blockId)
        ? `citation ${i + 1} names block ${blockId}, which the model was not given`
        : `citation ${i + 1} names block ${blockId}, which does not exist`)
      return
    }
    const span = findQuote(block.text, quote)
    if (!span) { problems.push(`citation ${i + 1}: the quote is not in block ${blockId}`); return }
    if (!evidence.some((e) => e.blockId === block.id && e.quote === span)) {
      evidence.push({ documentId: block.documentId, blockId: block.id, page: block.page, quote: span })
    }
  })
  return { evidence, problems }
}

/** Turns a model reply into an answer, downgrading it when its citations or value do not hold. */
export function readReply(question: Question, reply: Record<string, unknown>, passages: readonly CaseBlock[], context: CaseContext): EngineAnswer {
  const base = { questionKey: question.key, source: 'model' as const }
  const { evidence, problems } = checkCitations(reply.citations, passages, context)
  const said = typeof reply.confidence === 'number' && Number.isFinite(reply.confidence) ? Math.min(1, Math.max(0, reply.confidence)) : 0.5
  if (reply.status !== 'answered') {
    return { ...base, status: 'not_found', value: null, confidence: 0, evidence, downgraded: false, ...(reply.status === 'not_found' ? {} : { note: 'the model reply has no valid status' }) }
  }
  const value = readAnswerValue(reply.value, question.answer_type)
  if (value === null) {
    return { ...base, status: 'not_found', value: null, confidence: 0, evidence, downgraded: true, note: `downgraded: the model's value is not a ${question.answer_type}` }
  }
  if (evidence.length === 0) {
    const why = problems.length ? problems.join('; ') : 'the answer cites no passage'
    return { ...base, status: 'not_found', value: null, confidence: 0, evidence: [], downgraded: true, note: `downgraded to not_found: ${why}` }
  }
  if (problems.length) {
    return { ...base, status: 'answered', value, confidence: round2(said * 0.5), evidence, downgraded: true, note: `downgraded: ${problems.join('; ')}` }
  }
  return { ...base, status: 'answered', value, confidence: round2(said), evidence, downgraded: false }
}

/** The model-backed engine over the configured endpoint. */
export function modelEngine(settings: ModelSettings): AnswerEngine {
  return {
    name: 'model',
    async answer(question, context, options = {}) {
      const passages = passagesFor(question, context)
      if (passages.length === 0) {
        return judge(question, { questionKey: question.key, source: 'model', status: 'not_found', value: null, confidence: 0, evidence: [], downgraded: false, note: 'no passage matches the question' })
      }
      try {
        const { json, usage } = await chatJson(settings, questionMessages(question, passages), { signal: options.signal })
        return { ...judge(question, readReply(question, json, passages, context)), usage: { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 } }
      } catch (e) {
        // A refused request (a 4xx: wrong key, unknown model) fails the evaluation like an outage.
        if (!(e instanceof ModelResponseError) || (e.status ?? 0) >= 400) throw e
        return judge(question, { questionKey: question.key, source: 'model', status: 'not_found', value: null, confidence: 0, evidence: [], downgraded: true, note: `downgraded to not_found: ${e.message}` })
      }
    },
  }
}
