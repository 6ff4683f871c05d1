/**
 * Member routes: the roster and its changes (role, deactivation), a human-only surface (API keys
 * are refused whatever their scopes). The `users` table is the store's
 * (server/workspaces/users-store.ts).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { problems } from '../http/problem'
import { accessControl, ANY_ROLE, tenantOf } from '../auth/access'
import { readQuery, withQuery } from '../http/query'
import { BODY_PROBLEMS, LIST_PROBLEMS, PATH_PROBLEMS, responses } from '../http/docs'
import { cursorScope } from '../http/pagination'
import { PageOf } from '../../schemas/common'
import { User, UserListQuery, UserParams, UserUpdate } from '../../schemas/user'
import { actorOf, appendAudit } from '../workspaces/audit-store'
import { findUser, listUsers, renderUser, updateMember } from '../workspaces/users-store'

/** GET /v1/users, GET /v1/users/{userId}, PATCH /v1/users/{userId}. */
export function userRoutes(deps: AppDeps) {
  const { sql, cursors } = deps
  return new Elysia({ name: 'users' })
    .use(accessControl(deps.authenticate))
    .get('/v1/users', async ({ principal, query }) => {
      const tenantId = tenantOf(principal)
      const q = readQuery(UserListQuery, query)
      const list = cursors.open(q, cursorScope(tenantId, `users|${q.status ?? ''}`))
      return list.page(await listUsers(sql, tenantId, q.status, list), (r) => r.id, renderUser)
    }, {
      access: { roles: ANY_ROLE, humanOnly: true },
      detail: withQuery(UserListQuery, { summary: 'The user roster (human-only)', tags: ['Users'], responses: responses({ 200: PageOf(User) }, LIST_PROBLEMS) }),
    })
    .get('/v1/users/:userId', async ({ principal, params }) => {
      const row = await findUser(sql, tenantOf(principal), params.userId)
      if (!row) throw problems.notFound('user')
      return renderUser(row)
    }, {
      access: { roles: ANY_ROLE, humanOnly: true },
      params: UserParams,
      detail: { summary: 'One member (human-only)', tags: ['Users'], responses: responses({ 200: User }, PATH_PROBLEMS) },
    })
    .patch('/v1/users/:userId', async ({ principal, params, body }) => {
      const tenantId = tenantOf(principal)
      return sql.begin(async (tx) => {
        const { before, after } = await updateMember(tx, tenantId, params.userId, body)
        await appendAudit(tx, tenantId, 'user.updated', actorOf(principal), {
          user_id: after.id,
          before: { role: before.role, status: before.status },
          after: { role: after.role, status: after.status },
        })
        return renderUser(after)
      })
    }, {
      access: { roles: ['admin'], humanOnly: true },
      params: UserParams,
      body: UserUpdate,
      detail: {
        summary: "Change a member's role, deactivate or reactivate (admins, human-only)",
        tags: ['Users'],
        responses: responses({ 200: User }, [...PATH_PROBLEMS, ...BODY_PROBLEMS, 'conflict']),
      },
    })
}
