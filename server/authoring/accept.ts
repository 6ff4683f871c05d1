/**
 * Accepting a run's drafted questions into a new draft version of its question set, so the usual
 * edit and publish flow takes over: the kept drafts (all, or the keys named), with edits applied,
 * on top of the newest published version's questions (a draft replaces a question with its key).
 * Where each accepted question came from (its guideline citations) is kept in `question_provenance`
 * and carried forward with the questions a new version keeps; diff runs read it.
 */
import type { Tx } from '../db/connect'
import { problems } from '../http/problem'
import type { Question } from '../evaluation/engine'
import { assertQuestions, normaliseQuestions } from '../question-sets/validate'
import { newestPublishedVersion, type VersionRow } from '../question-sets/store'
import { runDrafts, type RunRow } from './generation-store'

/** What an accept request carries. */
export interface AcceptInput {
  keys?: string[]
  edits?: ({ key: string; new_key?: string } & Partial<Omit<Question, 'key'>>)[]
  include_published?: boolean
}

/** The provenance of a version's questions by key. */
export async function provenanceOf(sql: Tx, tenantId: string, versionId: string): Promise<Map<string, { run_id: string | null; citations: unknown[] }>> {
  const rows = await sql<{ question_key: string; run_id: string | null; citations: unknown[] }[]>`
    select question_key, run_id, citations from question_provenance where tenant_id = ${tenantId} and version_id = ${versionId}`
  return new Map(rows.map((r) => [r.question_key, { run_id: r.run_id, citations: r.citations }]))
}

/** Creates the draft version in the caller's transaction; returns it. 422 for unknown keys or invalid questions. */
export async function acceptDrafts(tx: Tx, tenantId: string, run: RunRow, input: AcceptInput): Promise<VersionRow> {
  const drafts = await runDrafts(tx, tenantId, run.id)
  const byKey = new Map(drafts.map((d) => [d.key, d]))
  input.keys?.forEach((k, i) => { if (!byKey.has(k)) throw problems.rule(`keys/${i} "${k}" names no drafted question of this run.`) })
  const kept = input.keys ? [...new Set(input.keys)].map((k) => byKey.get(k)!) : drafts
  const keptKeys = new Set(kept.map((d) => d.key))
  const edits = new Map<string, NonNullable<AcceptInput['edits']>[number]>()
  input.edits?.forEach((e, i) => {
    if (!keptKeys.has(e.key)) throw problems.rule(`edits/${i}/key "${e.key}" names no kept draft of this run.`)
    edits.set(e.key, e)
  })
  const accepted = kept.map((d) => {
    const { key: _k, new_key, ...fields } = edits.get(d.key) ?? { key: d.key }
    const q = { ...(d.question as unknown as Question), ...fields, key: new_key ?? d.key }
    return { question: q, citations: d.citations }
  })
  const base = input.include_published === false ? null : await newestPublishedVersion(tx, tenantId, { questionSetId: run.question_set_id })
  const replaced = new Set(accepted.map((a) => a.question.key))
  const questions = normaliseQuestions([...(base?.questions ?? []).filter((q) => !replaced.has(q.key)), ...accepted.map((a) => a.question)])
  if (questions.length > 500) throw problems.rule('the version would hold more than 500 questions.')
  assertQuestions(questions)

  await tx`select 1 from question_sets where tenant_id = ${tenantId} and id = ${run.question_set_id} for update`
  const [latest] = await tx<{ number: number }[]>`
    select number from question_set_versions where tenant_id = ${tenantId} and question_set_id = ${run.question_set_id} order by number desc limit 1`
  const [version] = await tx<VersionRow[]>`
    insert into question_set_versions (tenant_id, id, question_set_id, number, questions)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${run.question_set_id}, ${(latest?.number ?? 0) + 1}, ${tx.json(questions as never)})
    returning id, question_set_id, number, status, questions, revision, failure_reason, published_at, created_at, updated_at`
  await tx`update question_sets set updated_at = now() where tenant_id = ${tenantId} and id = ${run.question_set_id}`

  const carried = base ? await provenanceOf(tx, tenantId, base.id) : new Map()
  const rows = [
    ...questions.filter((q) => !replaced.has(q.key) && carried.has(q.key)).map((q) => ({ key: q.key, run_id: carried.get(q.key)!.run_id, citations: carried.get(q.key)!.citations })),
    ...accepted.map((a) => ({ key: a.question.key, run_id: run.id, citations: a.citations })),
  ]
  for (const r of rows) {
    await tx`
      insert into question_provenance (tenant_id, version_id, question_key, run_id, citations)
      values (${tenantId}, ${version!.id}, ${r.key}, ${r.run_id}, ${tx.json(r.citations as never)})
      on conflict do nothing`
  }
  await tx`
    update generation_runs set accepted_version_ids = array_append(accepted_version_ids, ${version!.id}::uuid), updated_at = now()
    where tenant_id = ${tenantId} and id = ${run.id}`
  return version!
}
