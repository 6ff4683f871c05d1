/**
 * Evaluations in the database: the evaluation rows, their answers, evidence and decision, the
 * case's blocks as an evaluation reads them, and the case status that follows the work. Owns
 * `evaluations`, `evaluation_answers`, `evaluation_evidence` and `evaluation_decisions`.
 */
import type { Tx } from '../db/connect'
import { chunkRows } from '../documents/store'
import type { CaseBlock } from './facts'
import type { EngineAnswer, Question } from './engine'
import type { Decision, DecisionReason } from './decision'
import type { AnswerValue } from './values'
import type { CheckResult } from './checks'

/** The states of an evaluation; the last three are terminal. */
export type EvaluationStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'canceled'

/** A row of `evaluations`. */
export interface EvaluationRow {
  id: string
  scenario_id: string
  question_set_id: string
  question_set_version_id: string
  status: EvaluationStatus
  engine: 'builtin' | 'model'
  answered: number
  total: number
  document_count: number | null
  block_count: number | null
  error_code: string | null
  error_detail: string | null
  started_at: Date | null
  finished_at: Date | null
  created_at: Date
  updated_at: Date
}

/** The resource path of an evaluation (links.resource and Location). */
export const evaluationPath = (scenarioId: string, evaluationId: string) => `/v1/scenarios/${scenarioId}/evaluations/${evaluationId}`

/** The API shape of an evaluation. */
export function renderEvaluation(row: EvaluationRow) {
  return {
    id: row.id,
    scenario_id: row.scenario_id,
    status: row.status,
    question_set_id: row.question_set_id,
    question_set_version_id: row.question_set_version_id,
    engine: row.engine,
    progress: { answered: row.answered, total: row.total },
    ...(row.document_count !== null ? { document_count: row.document_count } : {}),
    ...(row.block_count !== null ? { block_count: row.block_count } : {}),
    ...(row.error_code !== null ? { error_code: row.error_code } : {}),
    ...(row.error_detail !== null ? { error: row.error_detail } : {}),
    created_at: row.created_at.toISOString(),
    ...(row.started_at !== null ? { started_at: row.started_at.toISOString() } : {}),
    ...(row.finished_at !== null ? { finished_at: row.finished_at.toISOString() } : {}),
    updated_at: row.updated_at.toISOString(),
  }
}

const COLUMNS = (sql: Tx) => sql`id, scenario_id, question_set_id, question_set_version_id, status, engine, answered, total,
  document_count, block_count, error_code, error_detail, started_at, finished_at, created_at, updated_at`

/** Reads one evaluation of a case, or null; `lock` holds its row for update. */
export async function findEvaluation(sql: Tx, tenantId: string, scenarioId: string, evaluationId: string, lock = false): Promise<EvaluationRow | null> {
  const [row] = await sql<EvaluationRow[]>`
    select ${COLUMNS(sql)} from evaluations
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and id = ${evaluationId}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/**
 * An evaluation of the workspace by its id alone (ids are unique): for a job that can no longer
 * say which case it was for (a payload an older deploy wrote).
 */
export async function findEvaluationById(sql: Tx, tenantId: string, evaluationId: string, lock = false): Promise<EvaluationRow | null> {
  const [row] = await sql<EvaluationRow[]>`
    select ${COLUMNS(sql)} from evaluations
    where tenant_id = ${tenantId} and id = ${evaluationId}
    ${lock ? sql`for update` : sql``}`
  return row ?? null
}

/** The case's newest succeeded evaluation, or null. */
export async function latestSucceeded(sql: Tx, tenantId: string, scenarioId: string): Promise<EvaluationRow | null> {
  const [row] = await sql<EvaluationRow[]>`
    select ${COLUMNS(sql)} from evaluations
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and status = 'succeeded'
    order by id desc limit 1`
  return row ?? null
}

/** A page of a case's evaluations, newest first (fetch limit + 1). */
export function listEvaluations(sql: Tx, tenantId: string, scenarioId: string, after: string | null, limit: number) {
  return sql<EvaluationRow[]>`
    select ${COLUMNS(sql)} from evaluations
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId} ${after !== null ? sql`and id < ${after}` : sql``}
    order by id desc limit ${limit + 1}`
}

/** Inserts a queued evaluation. */
export async function insertEvaluation(tx: Tx, tenantId: string, e: { scenarioId: string; questionSetId: string; versionId: string; engine: 'builtin' | 'model'; total: number }): Promise<EvaluationRow> {
  const [row] = await tx<EvaluationRow[]>`
    insert into evaluations (tenant_id, id, scenario_id, question_set_id, question_set_version_id, engine, total)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${e.scenarioId}, ${e.questionSetId}, ${e.versionId}, ${e.engine}, ${e.total})
    returning ${COLUMNS(tx)}`
  return row!
}

/** Moves an evaluation to a new status (with progress, counts and error fields as given). */
export async function setEvaluationStatus(tx: Tx, tenantId: string, id: string, status: EvaluationStatus, fields: {
  answered?: number; documentCount?: number; blockCount?: number; errorCode?: string; errorDetail?: string
} = {}): Promise<EvaluationRow> {
  const terminal = status === 'succeeded' || status === 'failed' || status === 'canceled'
  const [row] = await tx<EvaluationRow[]>`
    update evaluations set
      status = ${status},
      answered = coalesce(${fields.answered ?? null}::int, answered),
      document_count = coalesce(${fields.documentCount ?? null}::int, document_count),
      block_count = coalesce(${fields.blockCount ?? null}::int, block_count),
      error_code = coalesce(${fields.errorCode ?? null}, error_code),
      error_detail = coalesce(${fields.errorDetail ?? null}, error_detail),
      started_at = case when ${status} = 'running' then coalesce(started_at, now()) else started_at end,
      finished_at = case when ${terminal} then now() else finished_at end,
      updated_at = now()
    where tenant_id = ${tenantId} and id = ${id}
    returning ${COLUMNS(tx)}`
  return row!
}

/** Records progress of a running evaluation; false when it is no longer running (canceled). */
export async function recordProgress(tx: Tx, tenantId: string, id: string, answered: number): Promise<boolean> {
  const rows = await tx`
    update evaluations set answered = ${answered}, updated_at = now()
    where tenant_id = ${tenantId} and id = ${id} and status = 'running' returning id`
  return rows.length > 0
}

/**
 * Every block of the case's processed documents (ready or ready_degraded), in case order: documents
 * by upload (id), blocks by position. Read-only use of the documents tables of issue 5.
 */
export async function loadCaseBlocks(sql: Tx, tenantId: string, scenarioId: string): Promise<{ blocks: CaseBlock[]; documentCount: number }> {
  const chunks = await sql<{ document_id: string; filename: string; content_type: string; document_type: string | null; blocks: string }[]>`
    select d.id as document_id, d.filename, d.content_type, d.document_type, c.blocks
    from documents d
    join document_block_chunks c on c.tenant_id = d.tenant_id and c.document_id = d.id
    where d.tenant_id = ${tenantId} and d.scenario_id = ${scenarioId} and d.status in ('ready', 'ready_degraded')
    order by d.id, c.first_position`
  const blocks: CaseBlock[] = []
  for (const c of chunks) {
    for (const r of chunkRows(c.blocks)) {
      blocks.push({ id: r.id, documentId: c.document_id, filename: c.filename, contentType: c.content_type, order: blocks.length, page: r.page, kind: r.kind, text: r.text, ...(c.document_type ? { documentType: c.document_type } : {}) })
    }
  }
  return { blocks, documentCount: new Set(chunks.map((c) => c.document_id)).size }
}

/** The case's processed documents that failed an arithmetic check at ingestion, with the failed checks. */
export async function loadFailedChecks(sql: Tx, tenantId: string, scenarioId: string): Promise<Map<string, { filename: string; checks: CheckResult[] }>> {
  const rows = await sql<{ id: string; filename: string; checks: CheckResult[] }[]>`
    select id, filename, checks from documents
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId} and status in ('ready', 'ready_degraded')
      and checks is not null and checks @> '[{"passed": false}]'::jsonb
    order by id`
  return new Map(rows.map((r) => [r.id, { filename: r.filename, checks: r.checks.filter((c) => !c.passed) }]))
}

/**
 * Stores an evaluation's answers, evidence and decision (replacing any from an earlier run of the
 * same job, so a re-run after a crash is harmless).
 */
export async function saveResults(tx: Tx, tenantId: string, evaluationId: string, questions: readonly Question[], answers: readonly EngineAnswer[], decision: Decision): Promise<void> {
  await tx`delete from evaluation_evidence where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}`
  await tx`delete from evaluation_answers where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}`
  await tx`delete from evaluation_decisions where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}`
  const answerRows: Record<string, unknown>[] = []
  const evidenceRows: Record<string, unknown>[] = []
  answers.forEach((a, position) => {
    const q = questions[position]!
    const answerId = Bun.randomUUIDv7()
    const evidenceIds = a.evidence.map((e) => {
      const id = Bun.randomUUIDv7()
      evidenceRows.push({
        tenant_id: tenantId, evaluation_id: evaluationId, id, position: evidenceRows.length, answer_id: answerId,
        question_key: q.key, document_id: e.documentId, block_id: e.blockId, page: e.page, quote: e.quote,
      })
      return id
    })
    answerRows.push({
      tenant_id: tenantId, evaluation_id: evaluationId, id: answerId, position, question_key: q.key,
      criticality: q.criticality, answer_type: q.answer_type, status: a.status, value: tx.json(a.value as never),
      confidence: a.confidence, source: a.source, fact_path: q.fact_path ?? null, accepted: a.accepted ?? null,
      downgraded: a.downgraded, note: a.note ?? null, evidence_ids: `{${evidenceIds.join(',')}}`,
    })
  })
  for (let i = 0; i < answerRows.length; i += 500) {
    await tx`insert into evaluation_answers ${tx(answerRows.slice(i, i + 500) as never)}`
  }
  for (let i = 0; i < evidenceRows.length; i += 500) {
    await tx`insert into evaluation_evidence ${tx(evidenceRows.slice(i, i + 500) as never)}`
  }
  await tx`
    insert into evaluation_decisions (tenant_id, evaluation_id, id, outcome, reasons)
    values (${tenantId}, ${evaluationId}, ${Bun.randomUUIDv7()}, ${decision.outcome}, ${tx.json(decision.reasons as never)})`
}

/** A row of `evaluation_answers`. */
export interface AnswerRow {
  id: string; evaluation_id: string; position: number; question_key: string; criticality: string; answer_type: string
  status: string; value: AnswerValue; confidence: number; source: string; fact_path: string | null
  accepted: boolean | null; downgraded: boolean; note: string | null; evidence_ids: string[]
}

/** The API shape of an answer. */
export function renderAnswer(r: AnswerRow) {
  return {
    id: r.id,
    evaluation_id: r.evaluation_id,
    question_key: r.question_key,
    criticality: r.criticality,
    answer_type: r.answer_type,
    value: r.value,
    confidence: r.confidence,
    status: r.status,
    evidence_ids: r.evidence_ids,
    source: r.source,
    ...(r.fact_path !== null ? { fact_path: r.fact_path } : {}),
    ...(r.accepted !== null ? { accepted: r.accepted } : {}),
    downgraded: r.downgraded,
    ...(r.note !== null ? { note: r.note } : {}),
  }
}

/** The answers of an evaluation, in question order. */
export function listAnswers(sql: Tx, tenantId: string, evaluationId: string) {
  return sql<AnswerRow[]>`
    select id, evaluation_id, position, question_key, criticality, answer_type, status, value, confidence, source,
      fact_path, accepted, downgraded, note, evidence_ids::text[] as evidence_ids
    from evaluation_answers where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}
    order by position`
}

/** A row of `evaluation_evidence`. */
export interface EvidenceRow { id: string; evaluation_id: string; answer_id: string; question_key: string; document_id: string; block_id: string; page: number; quote: string }

/** The API shape of a piece of evidence. */
export function renderEvidence(r: EvidenceRow) {
  return { id: r.id, evaluation_id: r.evaluation_id, answer_id: r.answer_id, question_key: r.question_key, document_id: r.document_id, block_id: r.block_id, page: r.page, quote: r.quote }
}

/** The evidence of an evaluation, in answer order. */
export function listEvidence(sql: Tx, tenantId: string, evaluationId: string) {
  return sql<EvidenceRow[]>`
    select id, evaluation_id, answer_id, question_key, document_id, block_id, page, quote
    from evaluation_evidence where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}
    order by position`
}

/** The computed decision of an evaluation, or null. */
export async function findDecision(sql: Tx, tenantId: string, evaluationId: string): Promise<{ id: string; outcome: string; reasons: DecisionReason[]; created_at: Date } | null> {
  const [row] = await sql<{ id: string; outcome: string; reasons: DecisionReason[]; created_at: Date }[]>`
    select id, outcome, reasons, created_at from evaluation_decisions where tenant_id = ${tenantId} and evaluation_id = ${evaluationId}`
  return row ?? null
}
