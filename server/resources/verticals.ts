/**
 * The vertical catalog, shipped as data: a bounded list, no cursor; exactly one entry has no key,
 * and that entry is what an absent `vertical` means.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE } from '../auth/access'
import { Vertical, VERTICALS } from '../../schemas/vertical'
import { responses } from '../http/docs'

// The catalog lives with its schemas (schemas/vertical.ts), where the OpenAPI document states its keys.
export { VERTICALS, VERTICAL_KEYS } from '../../schemas/vertical'

/** GET /v1/verticals. */
export function verticalRoutes(deps: AppDeps) {
  return new Elysia({ name: 'verticals' })
    .use(accessControl(deps.authenticate))
    .get('/v1/verticals', () => ({ items: VERTICALS, next_cursor: null }), {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'] },
      detail: { summary: 'The vertical catalog (bounded, no cursor)', tags: ['Verticals'], responses: responses({ 200: t.Object({ items: t.Array(Vertical), next_cursor: t.Null() }) }) },
    })
}
