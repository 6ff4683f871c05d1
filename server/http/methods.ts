/**
 * Which methods a path has: the route table of the built app read as path templates, so a request
 * for a known path with a method it does not have is answered 405 with `Allow` (RFC 9110 15.5.6)
 * instead of a 404 that would say the path does not exist.
 */

/** A route as the app lists it: its method and its path template (`/v1/scenarios/:scenarioId`). */
export interface RouteEntry { method: string; path: string }

/** The methods of each path template of an app, looked up by concrete path. */
export class RouteMethods {
  private templates: Array<{ pattern: RegExp; methods: Set<string> }> = []

  /** Indexes the routes of the built app (call once every plugin is mounted). */
  load(routes: readonly RouteEntry[]): void {
    const byPath = new Map<string, Set<string>>()
    for (const { method, path } of routes) {
      if (method === 'ALL' || path.includes('*')) continue
      const methods = byPath.get(path) ?? new Set<string>()
      methods.add(method.toUpperCase())
      if (method.toUpperCase() === 'GET') methods.add('HEAD')
      byPath.set(path, methods)
    }
    this.templates = [...byPath].map(([path, methods]) => ({ pattern: templatePattern(path), methods }))
  }

  /** The methods a concrete path allows, sorted; empty when no route has that path. */
  allowed(path: string): string[] {
    const out = new Set<string>()
    for (const { pattern, methods } of this.templates) if (pattern.test(path)) for (const m of methods) out.add(m)
    return [...out].sort()
  }
}

const templatePattern = (path: string) =>
  new RegExp(`^${path.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`)
