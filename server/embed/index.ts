/**
 * The embedded read-only case view: handoff mint, session exchange and the frame document.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { handoffRoutes } from './handoffs'
import { sessionRoutes } from './sessions'
import { frameDocumentRoutes } from './frame-document'

export { createEmbedSessionResolver } from './sessions'

/** Every embed route. */
export function embedRoutes(deps: AppDeps) {
  return new Elysia({ name: 'embed' })
    .use(handoffRoutes(deps))
    .use(sessionRoutes(deps))
    .use(frameDocumentRoutes(deps))
}
