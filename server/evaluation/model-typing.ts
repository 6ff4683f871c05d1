/**
 * Document types from the model when one is configured (SVC_MODEL_URL). The deterministic rules
 * (document-types.ts) type every document first; a document they type `other`, or below
 * MODEL_TYPE_BELOW confidence, is shown to the model in one bounded request: its first blocks (at
 * most MODEL_TYPE_BLOCKS blocks and MODEL_TYPE_CHARS characters; never its file name), one attempt,
 * no retry, the configured per-call time limit. The reply must be a JSON object naming one of the
 * fixed types; then that type stands with the model's confidence (capped at MODEL_TYPE_MAX_CONFIDENCE,
 * MODEL_TYPE_DEFAULT_CONFIDENCE when it gives none) and the document's `document_type_source` is
 * `model`. Otherwise (a reply naming no fixed type, a vendor error, a timeout, the workspace's cost
 * budget reached) the rules' type stands, `document_type_source` is `rules` and
 * `document_type_note` says why the model's type is not used; ingestion never fails for it. The
 * call's tokens are metered like every model call (run kind `document_ingestion`).
 */
import { DOCUMENT_TYPES, type Classification, type ClassifiedBlock, type DocumentType } from './document-types'
import { chatJson, ModelOutageError, ModelResponseError, type ChatMessage, type ModelSettings } from './model-client'

/** A rules' confidence under which the model is asked (a type of `other` always is). */
export const MODEL_TYPE_BELOW = 0.6
/** At most this many of a document's first blocks go to the model. */
export const MODEL_TYPE_BLOCKS = 40
/** At most this many characters of them (a block is cut at the bound). */
export const MODEL_TYPE_CHARS = 6_000
/** The highest confidence a type from the model is given. */
export const MODEL_TYPE_MAX_CONFIDENCE = 0.9
/** The confidence of a type from a model that states none. */
export const MODEL_TYPE_DEFAULT_CONFIDENCE = 0.7

/** Where a document's type came from: the rules, or the model (only when the rules were unsure). */
export type TypeSource = 'rules' | 'model'

/** A document's type with its source, a note when the model was asked and not followed, and the call's tokens. */
export interface TypedDocument extends Classification {
  source: TypeSource
  /** Why the rules' type stands although the model was asked (content-free). */
  note?: string
  /** Tokens the endpoint reported for the call, when one was made, and their cost in micro-units (priced by the caller). */
  usage?: { inputTokens: number; outputTokens: number; costMicro: number }
}

/** Whether the rules' type is unsure enough to ask the model: `other`, or below MODEL_TYPE_BELOW. */
export function needsModelType(rules: Classification): boolean {
  return rules.type === 'other' || rules.confidence < MODEL_TYPE_BELOW
}

const TYPE_HINTS: Record<DocumentType, string> = {
  bank_statement: 'a bank or account statement (balances, transactions)',
  pay_stub: 'a pay stub or earnings statement (gross pay, deductions, net pay)',
  tax_return: 'a tax return or tax form (income, tax due)',
  identity_document: 'a passport, driver licence or identity card',
  rent_roll: 'a rent roll (units, tenants, rents)',
  loss_run: 'a loss run or claims history (claims, incurred, paid)',
  application_form: 'an application form (a loan, credit or insurance application)',
  insurance_declaration: 'an insurance declarations page or certificate of insurance',
  email: 'an email message',
  other: 'none of the above',
}

/** The request: the fixed types, then the document's first blocks within the bounds. */
export function typingMessages(contentType: string, blocks: readonly ClassifiedBlock[]): ChatMessage[] {
  const parts: string[] = []
  let chars = 0
  for (const b of blocks.slice(0, MODEL_TYPE_BLOCKS)) {
    if (chars >= MODEL_TYPE_CHARS) break
    const text = b.text.slice(0, MODEL_TYPE_CHARS - chars)
    chars += text.length
    parts.push(text)
  }
  const system = [
    'You classify one document of an underwriting case by its content.',
    'Reply with a JSON object {"type": T, "confidence": C}: T is exactly one of these types, C how sure you are (0 to 1).',
    ...DOCUMENT_TYPES.map((t) => `- ${t}: ${TYPE_HINTS[t]}`),
  ].join('\n')
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Document type to classify (content type ${contentType}). Its first blocks:\n---\n${parts.join('\n---\n')}\n---` },
  ]
}

/** Reads the model's reply: a fixed type with a confidence, or null when it names none. */
export function readTypingReply(json: Record<string, unknown>): Classification | null {
  const type = typeof json.type === 'string' ? json.type.trim() : ''
  if (!(DOCUMENT_TYPES as readonly string[]).includes(type)) return null
  const c = typeof json.confidence === 'number' && Number.isFinite(json.confidence) && json.confidence >= 0 && json.confidence <= 1 ? json.confidence : MODEL_TYPE_DEFAULT_CONFIDENCE
  return { type: type as DocumentType, confidence: Math.round(Math.min(MODEL_TYPE_MAX_CONFIDENCE, c) * 100) / 100 }
}

const stands = "the rules' type stands"

/** Why a failed call's type is the rules' (content-free: a status, `timeout`, never a reply). */
function failureNote(e: unknown): string {
  if (e instanceof ModelOutageError) return `the model could not be reached to type the document (${e.lastFailure}); ${stands}`
  if (e instanceof ModelResponseError) return `the model's reply could not be used to type the document (${e.message}); ${stands}`
  return `the model could not type the document; ${stands}`
}

/**
 * Types a document the rules are unsure of with the model (see the file comment). Returns the
 * rules' type (source `rules`) when they are sure; never throws for a vendor error. Rethrows the
 * signal's reason when `signal` aborts (a reingest superseded the parse).
 */
export async function typeDocument(settings: ModelSettings | null, contentType: string, blocks: readonly ClassifiedBlock[], rules: Classification, options: { signal?: AbortSignal; budgetReached?: () => Promise<boolean>; price?: (inputTokens: number, outputTokens: number) => number } = {}): Promise<TypedDocument> {
  if (!settings || !needsModelType(rules) || blocks.length === 0) return { ...rules, source: 'rules' }
  if (await options.budgetReached?.()) return { ...rules, source: 'rules', note: `the workspace's cost budget is reached, the model was not asked to type the document; ${stands}` }
  try {
    const { json, usage } = await chatJson(settings, typingMessages(contentType, blocks), { retries: 0, signal: options.signal, maxTokens: 50 })
    const [inputTokens, outputTokens] = [usage?.prompt_tokens ?? 0, usage?.completion_tokens ?? 0]
    const tokens = { inputTokens, outputTokens, costMicro: options.price?.(inputTokens, outputTokens) ?? 0 }
    const found = readTypingReply(json)
    if (!found) return { ...rules, source: 'rules', note: `the model's reply named no known document type; ${stands}`, usage: tokens }
    return { ...found, source: 'model', usage: tokens }
  } catch (e) {
    if (options.signal?.aborted) throw options.signal.reason
    return { ...rules, source: 'rules', note: failureNote(e) }
  }
}
