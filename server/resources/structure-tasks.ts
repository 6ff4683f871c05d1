/**
 * Structure tasks of a version: POST a question key -> 202 and a `structure_task` proposing how to
 * split or regroup that question (unit-of-work rate class, Idempotency-Key, inline notifications);
 * list and read at the task-kind path.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, tenantOf } from '../auth/access'
import { problems } from '../http/problem'
import { readQuery, withQuery } from '../http/query'
import { idempotencyKeyOf, runIdempotent, replyWith } from '../http/idempotency'
import { consumeRate, RATE_PROBLEMS } from '../http/rate-limit'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { subscribeInline } from '../notifications/inline'
import { PageOf } from '../../schemas/common'
import { VersionParams } from '../../schemas/question-set'
import { RunListQuery, StructureTask, StructureTaskCreate, StructureTaskParams } from '../../schemas/authoring'
import { findVersion } from '../question-sets/store'
import { QUESTION_SET_READ, QUESTION_SET_WRITE } from './question-sets'
import {
  enqueueStructureTask, findStructureTask, insertStructureTask, listStructureTasks, renderStructureTask, STRUCTURE_TASK, structureTaskPath,
} from '../authoring/structure'

const TAGS = ['Structure tasks']

/** Structure-task routes. */
export function structureTaskRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  return new Elysia({ name: 'structure-tasks' })
    .use(accessControl(deps.authenticate))
    .post('/v1/question-sets/:questionSetId/versions/:versionId/structure-tasks', async ({ principal, params, body, request, path, set }) => {
      const tenantId = tenantOf(principal)
      const version = await findVersion(sql, tenantId, params.questionSetId, params.versionId)
      if (!version) throw problems.notFound('version')
      if (!version.questions.some((q) => q.key === body.question_key)) throw problems.rule(`question_key "${body.question_key}" is not a question of this version.`)
      const result = await runIdempotent({ sql, tenantId, method: 'POST', path, body, key: idempotencyKeyOf(request) }, async (tx) => {
        await consumeRate(deps, tenantId, 'unit', tx)
        const id = Bun.randomUUIDv7()
        await subscribeInline(tx, principal, { tenantId, taskKind: STRUCTURE_TASK, taskId: id, items: body.notifications })
        const row = await insertStructureTask(tx, tenantId, { id, questionSetId: params.questionSetId, versionId: params.versionId, questionKey: body.question_key })
        await enqueueStructureTask(tx, tenantId, id)
        return { status: 202, body: renderStructureTask(row), location: structureTaskPath(row) }
      })
      return replyWith(set, result) as ReturnType<typeof renderStructureTask>
    }, {
      access: QUESTION_SET_WRITE,
      params: VersionParams,
      body: StructureTaskCreate,
      detail: {
        summary: 'Ask how to split or regroup a question: 202 and a structure_task (unit-of-work rate class)',
        tags: TAGS,
        responses: responses({ 202: StructureTask }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, ...RATE_PROBLEMS, 'idempotency_conflict', 'conflict']),
      },
    })
    .get('/v1/question-sets/:questionSetId/versions/:versionId/structure-tasks', async ({ principal, params, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(RunListQuery, query)
      if (!(await findVersion(sql, tenantId, params.questionSetId, params.versionId))) throw problems.notFound('version')
      const list = cursors.open(q, cursorScope(tenantId, `structure-tasks|${params.versionId}`))
      return list.page(await listStructureTasks(sql, tenantId, params.versionId, list), (r) => r.id, renderStructureTask)
    }, {
      access: QUESTION_SET_READ,
      params: VersionParams,
      detail: withQuery(RunListQuery, { summary: 'List the structure tasks of a version, newest first', tags: TAGS, responses: responses({ 200: PageOf(StructureTask) }, [...LIST_PROBLEMS, ...PATH_PROBLEMS]) }),
    })
    .get('/v1/question-sets/:questionSetId/versions/:versionId/structure-tasks/:taskId', async ({ principal, params }) => {
      const row = await findStructureTask(sql, tenantOf(principal), params.taskId, { versionId: params.versionId })
      if (!row || row.question_set_id !== params.questionSetId) throw problems.notFound('structure task')
      return renderStructureTask(row)
    }, {
      access: QUESTION_SET_READ,
      params: StructureTaskParams,
      detail: { summary: 'Read a structure task and its proposal', tags: TAGS, responses: responses({ 200: StructureTask }, PATH_PROBLEMS) },
    })
}
