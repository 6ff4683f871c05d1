/**
 * Structure tasks: a proposal for how to split or regroup one question of a version, and the
 * `structure_task` job (task_id = the task) that makes it. Built-in and deterministic:
 *  - split: a question asking for several things at once ("What is the annual revenue and the net
 *    profit?", several question marks, a list after a colon or semicolons) becomes one question per
 *    part, keys from the parts, criticality and answer type kept (an accept rule is not split);
 *  - regroup: otherwise, the other questions sharing its fact namespace (the first fact_path
 *    segment) or at least two significant words form a group with it;
 *  - keep: neither applies.
 * Owns `structure_tasks`.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { defineJobKind, enqueue, jobType } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import type { Question } from '../evaluation/engine'
import { slug } from '../evaluation/facts'
import { findVersionById } from '../question-sets/store'

/** The job kind name (also the task kind). */
export const STRUCTURE_TASK = 'structure_task'

/** The structure_task job's type (its payload names the row the job works on). */
export const StructureTaskJob = jobType({
  name: STRUCTURE_TASK,
  payload: Type.Object({ taskId: Type.String() }),
  tenantScoped: true,
})

/** A structure proposal. */
export interface StructureProposal {
  action: 'split' | 'regroup' | 'keep'
  rationale: string
  questions: Question[]
  group?: { name: string; question_keys: string[] }
}

const STOP = new Set(['what', 'which', 'is', 'are', 'the', 'a', 'an', 'of', 'in', 'for', 'to', 'and', 'or', 'does', 'do', 'has', 'have', 'there', 'any', 'this', 'that', 'how', 'many', 'much', 'applicant', 'applicants'])
const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g)?.filter((w) => w.length > 2 && !STOP.has(w)) ?? []

/** The parts of a compound question, or [] when it asks one thing. */
export function splitParts(text: string): { prefix: string; parts: string[] } {
  const marks = text.split('?').map((s) => s.trim()).filter(Boolean)
  if (marks.length > 1) return { prefix: '', parts: marks.map((m) => `${m}?`) }
  const m = /^(what (?:is|are|was|were)(?: the)?|is there(?: any)?|are there(?: any)?|does the applicant have|has the applicant(?: had)?|how many|which)\s+(.+?)\??$/i.exec(text.trim())
  if (!m) return { prefix: '', parts: [] }
  const parts = m[2]!.split(/\s*(?:;|,\s*and\s+|,|\s+and\s+(?:the\s+|any\s+|a\s+)?)\s*/i).map((p) => p.trim()).filter(Boolean)
  return parts.length > 1 ? { prefix: m[1]!, parts } : { prefix: '', parts: [] }
}

/** The proposal for one question of a version's questions. */
export function proposeStructure(question: Question, all: readonly Question[]): StructureProposal {
  const { prefix, parts } = splitParts(question.text)
  if (parts.length > 1) {
    const taken = new Set(all.filter((q) => q.key !== question.key).map((q) => q.key))
    const questions = parts.map((part) => {
      let key = slug(part.replace(/\?$/, '')) || question.key
      for (let n = 2; taken.has(key); n++) key = `${slug(part).slice(0, 56)}_${n}`
      taken.add(key)
      const text = prefix ? `${prefix.charAt(0).toUpperCase()}${prefix.slice(1)} ${part.replace(/\?$/, '')}?` : part
      return { key, text, criticality: question.criticality, answer_type: question.answer_type, ...(question.guidance ? { guidance: question.guidance } : {}) }
    })
    return { action: 'split', rationale: `the question asks for ${parts.length} things at once; one question per thing can be answered and judged separately`, questions }
  }
  const namespace = question.fact_path?.split('.')[0]
  const mine = new Set(words(question.text))
  const related = all.filter((q) => q.key !== question.key && (
    (namespace !== undefined && q.fact_path?.split('.')[0] === namespace) || words(q.text).filter((w) => mine.has(w)).length >= 2))
  if (related.length) {
    const shared = [...mine].filter((w) => related.every((q) => words(q.text).includes(w)))
    const name = shared.length ? shared.join(' ') : namespace ?? question.key
    return {
      action: 'regroup', rationale: `${related.length} other question${related.length === 1 ? '' : 's'} cover the same subject; group them together`,
      questions: [], group: { name, question_keys: [question.key, ...related.map((q) => q.key)] },
    }
  }
  return { action: 'keep', rationale: 'the question asks one thing and shares its subject with no other question', questions: [] }
}

/** A row of `structure_tasks`. */
export interface StructureTaskRow {
  tenant_id: string
  id: string
  question_set_id: string
  version_id: string
  question_key: string
  status: 'queued' | 'running' | 'succeeded' | 'failed'
  proposal: StructureProposal | null
  error_detail: string | null
  finished_at: Date | null
  created_at: Date
  updated_at: Date
}

/** The REST path of a structure task. */
export const structureTaskPath = (r: Pick<StructureTaskRow, 'question_set_id' | 'version_id' | 'id'>) => `/v1/question-sets/${r.question_set_id}/versions/${r.version_id}/structure-tasks/${r.id}`

/** The API shape of a structure task. */
export function renderStructureTask(r: StructureTaskRow) {
  return {
    id: r.id, question_set_id: r.question_set_id, version_id: r.version_id, question_key: r.question_key, status: r.status,
    ...(r.proposal ? { proposal: r.proposal } : {}),
    ...(r.error_detail !== null ? { error_detail: r.error_detail } : {}),
    ...(r.finished_at !== null ? { finished_at: r.finished_at.toISOString() } : {}),
    created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
  }
}

/** Reads a structure task, or null. */
export async function findStructureTask(sql: Tx, tenantId: string, id: string, opts: { versionId?: string; lock?: boolean } = {}): Promise<StructureTaskRow | null> {
  const [row] = await sql<StructureTaskRow[]>`
    select * from structure_tasks where tenant_id = ${tenantId} and id = ${id}
    ${opts.versionId ? sql`and version_id = ${opts.versionId}` : sql``} ${opts.lock ? sql`for update` : sql``}`
  return row ?? null
}

/** Inserts a queued structure task for one question of a version. */
export async function insertStructureTask(tx: Tx, tenantId: string, input: { id: string; questionSetId: string; versionId: string; questionKey: string }): Promise<StructureTaskRow> {
  const [row] = await tx<StructureTaskRow[]>`
    insert into structure_tasks (tenant_id, id, question_set_id, version_id, question_key)
    values (${tenantId}, ${input.id}, ${input.questionSetId}, ${input.versionId}, ${input.questionKey})
    returning *`
  return row!
}

/** One page of a version's structure tasks, newest first (rows of `window`). */
export async function listStructureTasks(sql: Tx, tenantId: string, versionId: string, window: { after: string | null; fetch: number }): Promise<StructureTaskRow[]> {
  return sql<StructureTaskRow[]>`
    select * from structure_tasks where tenant_id = ${tenantId} and version_id = ${versionId}
    ${window.after !== null ? sql`and id < ${window.after}` : sql``} order by id desc limit ${window.fetch}`
}

/** Enqueues a structure task's job in the caller's transaction. */
export const enqueueStructureTask = (tx: Tx, tenantId: string, id: string) => enqueue(tx, StructureTaskJob, { tenantId, payload: { taskId: id } })

async function end(tx: Tx, links: LinkBases, row: StructureTaskRow, outcome: { proposal: StructureProposal } | { reason: string }): Promise<void> {
  const ok = 'proposal' in outcome
  await tx`
    update structure_tasks set status = ${ok ? 'succeeded' : 'failed'}, proposal = ${ok ? tx.json(outcome.proposal as never) : null},
      error_detail = ${ok ? null : outcome.reason}, finished_at = now(), updated_at = now()
    where tenant_id = ${row.tenant_id} and id = ${row.id}`
  await finishTask(tx, { links, tenantId: row.tenant_id, taskKind: 'structure_task', taskId: row.id, resourcePath: structureTaskPath(row), result: ok ? 'succeeded' : 'failed', ...(ok ? {} : { reason: outcome.reason }) })
}

/** The job kind (registered in server/job-kinds.ts). */
export function structureTaskJobKind() {
  return defineJobKind({
    ...StructureTaskJob,
    maxAttempts: 3,
    async handler(tx, job, deps) {
      const row = await findStructureTask(tx, job.tenantId, job.payload.taskId, { lock: true })
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      const version = await findVersionById(tx, row.tenant_id, row.version_id)
      const question = version?.questions.find((q) => q.key === row.question_key)
      if (!version || !question) {
        await end(tx, deps.links, row, { reason: `question ${row.question_key} is not in the version` })
        return
      }
      await end(tx, deps.links, row, { proposal: proposeStructure(question, version.questions) })
    },
    async onGiveUp(tx, job, deps) {
      const row = await findStructureTask(tx, job.tenantId, job.payload.taskId, { lock: true })
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return
      await end(tx, deps.links, row, { reason: 'the proposal could not be made' })
    },
  })
}
