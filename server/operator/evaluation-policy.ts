/**
 * The workspace evaluation policy (operator surface, outside the /v1 promise): which engine a
 * workspace may use (`any`: the deployment's; `builtin`: never the model), how many questions one
 * evaluation may have, how many pages of one document are read, and whether OCR runs. Evaluation
 * (start and run) and document ingestion read it; no row means no limits. Owns
 * `workspace_evaluation_policies`.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import { appendAudit, type AuditActor } from '../workspaces/audit-store'

/** A workspace's evaluation policy. */
export interface EvaluationPolicy {
  engine: 'any' | 'builtin'
  max_questions: number | null
  max_pages_per_document: number | null
  ocr: boolean
}

/** The policy of a workspace without a row: the deployment's engine, no caps, OCR on. */
export const DEFAULT_POLICY: EvaluationPolicy = { engine: 'any', max_questions: null, max_pages_per_document: null, ocr: true }

/** The policy in force for a workspace. */
export async function readPolicy(sql: Tx, tenantId: string): Promise<EvaluationPolicy> {
  const [row] = await sql<(EvaluationPolicy & { updated_at: Date })[]>`
    select engine, max_questions, max_pages_per_document, ocr, updated_at from workspace_evaluation_policies where tenant_id = ${tenantId}`
  if (!row) return { ...DEFAULT_POLICY }
  return { engine: row.engine, max_questions: row.max_questions, max_pages_per_document: row.max_pages_per_document, ocr: row.ocr }
}

/** Replaces a workspace's policy (full replace: omitted fields take their defaults), audited as `evaluation_policy.updated`. */
export async function writePolicy(sql: Tx, tenantId: string, input: Partial<EvaluationPolicy>, actor: AuditActor): Promise<EvaluationPolicy> {
  const policy: EvaluationPolicy = { ...DEFAULT_POLICY, ...input }
  const before = await readPolicy(sql, tenantId)
  await appendAudit(sql, tenantId, 'evaluation_policy.updated', actor, { before, after: policy })
  await sql`
    insert into workspace_evaluation_policies (tenant_id, engine, max_questions, max_pages_per_document, ocr)
    values (${tenantId}, ${policy.engine}, ${policy.max_questions}, ${policy.max_pages_per_document}, ${policy.ocr})
    on conflict (tenant_id) do update set engine = excluded.engine, max_questions = excluded.max_questions,
      max_pages_per_document = excluded.max_pages_per_document, ocr = excluded.ocr, updated_at = now()`
  return policy
}

/** The engine an evaluation of this workspace uses: the deployment's, unless the policy pins the built-in one. */
export function engineFor(policy: EvaluationPolicy, deployment: 'builtin' | 'model'): 'builtin' | 'model' {
  return policy.engine === 'builtin' ? 'builtin' : deployment
}

/** Refuses (422) an evaluation whose pinned version has more questions than the policy allows. */
export function checkQuestionCap(policy: EvaluationPolicy, questions: number): void {
  if (policy.max_questions !== null && questions > policy.max_questions) {
    throw problems.rule(`The pinned question-set version has ${questions} questions; this workspace's evaluation policy allows at most ${policy.max_questions} (max_questions).`)
  }
}

/** The parse limits the policy sets for one document (within the deployment's own). */
export function parseOverrides(policy: EvaluationPolicy): { maxPages?: number; ocr?: boolean } {
  return {
    ...(policy.max_pages_per_document !== null ? { maxPages: policy.max_pages_per_document } : {}),
    ...(policy.ocr ? {} : { ocr: false }),
  }
}
