/**
 * Publishing a version: the `question_set_publish` task (task_id = the version id). The route moves
 * a draft (or failed) version to `publishing` and enqueues this job; the job re-checks the questions
 * and moves the version to `published` (immutable from then on) or `failed`, and ends the task on
 * the notification channel in the same transaction. What else a publication sets off (supersessions
 * of earlier answers) is handed in by the wiring as `onPublished`, so question sets import nothing
 * of authoring.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import { Type } from '@sinclair/typebox'
import { defineJobKind, jobType } from '../../jobs/define'
import { finishTask } from '../notifications/finish'
import { findVersion } from './store'
import { questionProblems } from './validate'

/** The job kind name (also the task kind). */
export const QUESTION_SET_PUBLISH = 'question_set_publish'

/** The resource path of a version (links.resource of its publish task). */
export const versionPath = (questionSetId: string, versionId: string) => `/v1/question-sets/${questionSetId}/versions/${versionId}`

/** Why a version cannot be published, or null when it can. */
export function publishProblem(questions: Parameters<typeof questionProblems>[0]): string | null {
  if (questions.length === 0) return 'the version has no questions'
  const { fields, rules } = questionProblems(questions)
  if (fields.length) return `${fields[0]!.pointer.slice(1)}: ${fields[0]!.message}`
  return rules[0] ?? null
}

/** Work a publication sets off in its transaction (the wiring passes supersession raising). */
export type OnPublished = (tx: Tx, links: LinkBases, tenantId: string, questionSetId: string, versionId: string) => Promise<unknown>

async function settle(tx: Tx, links: LinkBases, tenantId: string, questionSetId: string, versionId: string, failure: string | null, onPublished: OnPublished): Promise<void> {
  if (failure === null) {
    await tx`
      update question_set_versions
      set status = 'published', published_at = now(), failure_reason = null, revision = revision + 1, updated_at = now()
      where tenant_id = ${tenantId} and id = ${versionId}`
    await onPublished(tx, links, tenantId, questionSetId, versionId)
  } else {
    await tx`
      update question_set_versions
      set status = 'failed', failure_reason = ${failure}, revision = revision + 1, updated_at = now()
      where tenant_id = ${tenantId} and id = ${versionId}`
  }
  await tx`update question_sets set updated_at = now() where tenant_id = ${tenantId} and id = ${questionSetId}`
  await finishTask(tx, {
    links,
    tenantId, taskKind: 'question_set_publish', taskId: versionId,
    resourcePath: versionPath(questionSetId, versionId), result: failure === null ? 'succeeded' : 'failed',
    ...(failure !== null ? { reason: failure } : {}),
  })
}

/** The question_set_publish job's type: the version to publish. */
export const QuestionSetPublishJob = jobType({
  name: QUESTION_SET_PUBLISH,
  payload: Type.Object({ questionSetId: Type.String(), versionId: Type.String() }),
  tenantScoped: true,
})

/** The job kind: payload {questionSetId, versionId}; `onPublished` runs in the publishing transaction. */
export function questionSetPublishJobKind(onPublished: OnPublished) {
  return defineJobKind({
    ...QuestionSetPublishJob,
    maxAttempts: 5,
    async handler(tx, job, deps) {
      const { questionSetId, versionId } = job.payload
      const version = await findVersion(tx, job.tenantId, questionSetId, versionId, true)
      if (!version || version.status !== 'publishing') return // already settled (a re-run after a crash)
      await settle(tx, deps.links, job.tenantId, questionSetId, versionId, publishProblem(version.questions), onPublished)
    },
    async onGiveUp(tx, job, deps) {
      const { questionSetId, versionId } = job.payload
      const version = await findVersion(tx, job.tenantId, questionSetId, versionId, true)
      if (!version || version.status !== 'publishing') return
      await settle(tx, deps.links, job.tenantId, questionSetId, versionId, 'publishing failed repeatedly', onPublished)
    },
  })
}
