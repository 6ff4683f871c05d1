/**
 * What the service finds about a document once it is read: its type (document-types.ts) and the
 * results of the arithmetic checks that type allows (checks.ts). Run at the end of a document's
 * ingestion, in the job's transaction, from the blocks just stored; the evaluation reads them back
 * with the case's blocks. Owns the `document_type`, `document_type_confidence` and `checks` columns
 * of `documents` (migration 023), and `document_type_source` and `document_type_note` (migration 027).
 */
import type { Tx } from '../db/connect'
import type { Block } from '../documents/blocks'
import { classifyDocument, type Classification } from './document-types'
import { runChecks, type CheckResult } from './checks'
import type { CaseBlock } from './facts'
import type { TypedDocument } from './model-typing'
import { recordUsage } from '../billing/budgets'

/** A document's findings. */
export interface DocumentFindings extends Classification { checks: CheckResult[] }

/**
 * Classifies a document (or takes `typed`, the type found before, by the model when the rules
 * were unsure: model-typing.ts) and runs its checks (pure: the blocks of one document in reading order).
 */
export function findDocumentFindings(doc: { id: string; filename: string; content_type: string }, blocks: readonly Pick<Block, 'id' | 'page' | 'kind' | 'text'>[], typed?: Classification): DocumentFindings {
  const classification = typed ? { type: typed.type, confidence: typed.confidence } : classifyDocument(doc.content_type, blocks)
  const caseBlocks: CaseBlock[] = blocks.map((b, i) => ({ id: b.id, documentId: doc.id, filename: doc.filename, contentType: doc.content_type, order: i, page: b.page, kind: b.kind, text: b.text, documentType: classification.type }))
  return { ...classification, checks: runChecks(classification.type, caseBlocks) }
}

/**
 * Finds and stores a document's type and check results (in the ingestion's transaction); with
 * `typed`, its type's source and note are stored too, and the model call behind it is metered
 * (a `model_usage` row of run kind `runKind`, run the document).
 */
export async function recordDocumentFindings(tx: Tx, doc: { tenant_id: string; id: string; filename: string; content_type: string }, blocks: readonly Block[], typed?: TypedDocument, runKind = 'document_ingestion'): Promise<DocumentFindings> {
  const found = findDocumentFindings(doc, blocks, typed)
  await tx`
    update documents set document_type = ${found.type}, document_type_confidence = ${found.confidence},
      document_type_source = ${typed?.source ?? 'rules'}, document_type_note = ${typed?.note ?? null},
      checks = ${tx.json(found.checks as never)}
    where tenant_id = ${doc.tenant_id} and id = ${doc.id}`
  if (typed?.usage) {
    const { inputTokens, outputTokens, costMicro } = typed.usage
    await recordUsage(tx, doc.tenant_id, { runKind, runId: doc.id, input_tokens: inputTokens, output_tokens: outputTokens, cost_micro: costMicro })
  }
  return found
}

/** The stored findings of every document of a case, oldest first (the order of caseCoverage). */
export async function caseFindings(sql: Tx, tenantId: string, scenarioId: string): Promise<{ id: string; filename: string; type: string | null; confidence: number | null; checks: CheckResult[] }[]> {
  const rows = await sql<{ id: string; filename: string; document_type: string | null; document_type_confidence: string | null; checks: CheckResult[] | null }[]>`
    select id, filename, document_type, document_type_confidence, checks from documents
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId}
    order by id`
  return rows.map((r) => ({ id: r.id, filename: r.filename, type: r.document_type, confidence: r.document_type_confidence === null ? null : Number(r.document_type_confidence), checks: r.checks ?? [] }))
}
