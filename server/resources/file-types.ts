/**
 * The file-type registry: every content type a document may have, its extensions and whether an
 * ingestion adapter reads it. A bounded list (no cursor).
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE } from '../auth/access'
import { responses } from '../http/docs'
import { FileTypeEntry } from '../../schemas/document'
import { FILE_TYPES, renderFileType } from '../documents/registry'

/** GET /v1/file-types. */
export function fileTypeRoutes(deps: AppDeps) {
  const page = { items: FILE_TYPES.map(renderFileType), next_cursor: null }
  return new Elysia({ name: 'file-types' })
    .use(accessControl(deps.authenticate))
    .get('/v1/file-types', () => page, {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'] },
      detail: {
        summary: 'The file-type registry (bounded, no cursor)',
        tags: ['Documents'],
        responses: responses({ 200: t.Object({ items: t.Array(FileTypeEntry), next_cursor: t.Null() }) }),
      },
    })
}
