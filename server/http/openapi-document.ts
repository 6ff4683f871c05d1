/**
 * The OpenAPI 3.1 document at GET /v1/openapi.json, built from the app's own route table: the same
 * TypeBox schemas the routes validate with (body, path parameters, the query each declares in its detail), the responses and
 * problems each route declares, and the access rule of each. It is built once, on the first request
 * for it (the document only changes when the code does).
 *
 * Why not @elysiajs/openapi's generator: it drops every request body of an app whose JSON parser is
 * a function (ours is, see body.ts), inlines every shape (no components to import), and its
 * operationIds carry hyphens. The shaping rules live in openapi-schemas.ts; this file assembles
 * operations.
 */
import { OptionalKind, type TObject, type TSchema } from '@sinclair/typebox'
import type { AnyElysia } from 'elysia'
import { Problem } from '../../schemas/common'
import { declaredQuery } from './query'
import { SchemaWriter } from './openapi-schemas'
import { HEADERS, operationHeaders, responseHeaders } from './openapi-headers'
import pkg from '../../package.json' with { type: 'json' }

/** A route as the built app lists it. */
interface Route { method: string; path: string; hooks: { body?: TSchema; params?: TObject; detail?: Record<string, any> } }

const DESCRIPTION = [
  'Multi-tenant API for underwriting cases. Every error is application/problem+json (`Problem`); branch on `type`, and on the HTTP status when the type is unknown.',
  '',
  'Versioning: from 1.0.0 nothing inside /v1 is removed or renamed (paths, operations, response fields, enum members sent to clients, error types). Additions ship without a bump: clients ignore unknown response fields and tolerate unknown enum members and error types. A regretted item is kept, marked `deprecated: true`, and its description names its replacement.',
].join('\n')

/** OpenAPI path template of an Elysia path (`:id` -> `{id}`). */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

const pascal = (word: string) => word.split(/[-_.]/).filter(Boolean).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')

/**
 * The operationId of a route: method, then each path segment (a parameter as `By<Name>`), without
 * the `/v1` prefix: `GET /v1/scenarios/{scenarioId}/documents` -> `getScenariosByScenarioIdDocuments`.
 * A valid identifier in every common generator, and stable because /v1 paths never change.
 */
export function operationIdOf(method: string, path: string): string {
  const segments = path.split('/').filter((s) => s !== '' && s !== 'v1')
  return method.toLowerCase() + segments.map((s) => (s.startsWith(':') ? `By${pascal(s.slice(1))}` : pascal(s))).join('')
}

const isOptional = (schema: TSchema) => (schema as unknown as Record<symbol, unknown>)[OptionalKind] === 'Optional'

/** Builds the document of every visible route (hidden routes, like the document itself, are left out). */
export function buildOpenApiDocument(routes: readonly Route[], options: { baseUrl: string }): Record<string, unknown> {
  const schemas = new SchemaWriter()
  schemas.name('Problem', Problem)
  const paths: Record<string, Record<string, unknown>> = {}

  for (const route of routes) {
    const detail = route.hooks.detail ?? {}
    if (detail.hide || route.method === 'ALL') continue
    const method = route.method.toLowerCase()
    const path = openApiPath(route.path)
    const responses: Record<string, any> = { ...(detail.responses ?? {}) }
    // Elysia merges the access macro's responses with the route's, concatenating these lists.
    const problemTypes = (status: string): string[] => [...new Set<string>(responses[status]?.['x-svc-problem-types'] ?? [])]
    const headers = operationHeaders({ method, path, problemTypes: Object.keys(responses).flatMap(problemTypes) })

    const parameters: unknown[] = []
    const pathParams = route.hooks.params?.properties ?? {}
    for (const name of [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!)) {
      parameters.push({ name, in: 'path', required: true, schema: schemas.write(pathParams[name] ?? { type: 'string' }) })
    }
    const query = declaredQuery(detail)
    for (const [name, prop] of Object.entries(query?.properties ?? {})) {
      const { description, ...schema } = schemas.write(prop) as Record<string, unknown>
      parameters.push({ name, in: 'query', required: query!.required?.includes(name) ?? false, ...(description ? { description } : {}), schema })
    }
    for (const name of headers.request) parameters.push({ $ref: `#/components/parameters/${name}` })
    parameters.push(...(detail.parameters ?? []))

    const body = route.hooks.body
    const requestBody = detail.requestBody ?? (body ? {
      required: !isOptional(body),
      ...(isOptional(body) ? { description: 'Optional: send no body, or a JSON object.' } : {}),
      content: { 'application/json': { schema: schemas.write(body) } },
    } : undefined)

    if (!responses['500']) responses['500'] = { description: 'urn:svc:error:internal', 'x-svc-problem-types': ['urn:svc:error:internal'] }
    const written: Record<string, unknown> = {}
    for (const [status, response] of Object.entries(responses)) {
      const content = response.content
        ? Object.fromEntries(Object.entries(response.content as Record<string, { schema?: TSchema }>).map(([type, media]) => [type, { ...media, schema: media.schema ? schemas.write(media.schema) : undefined }]))
        : /^[45]/.test(status) ? { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } : undefined
      const types = problemTypes(status)
      written[status] = {
        // A description that only lists the types (merged route and access lists) names each once.
        description: types.length && /^(urn:svc:error:[a-z_]+(, )?)+$/.test(response.description ?? '') ? types.join(', ') : response.description ?? `Status ${status}`,
        headers: Object.fromEntries(responseHeaders({ status, method, path, headers }).map((h) => [HEADERS[h].name, { $ref: `#/components/headers/${h}` }])),
        ...(content ? { content } : {}),
        ...(types.length ? { 'x-svc-problem-types': types } : {}),
      }
    }

    ;(paths[path] ??= {})[method] = {
      operationId: detail.operationId ?? operationIdOf(method, route.path),
      ...(detail.summary ? { summary: detail.summary } : {}),
      ...(detail.description ? { description: detail.description } : {}),
      ...(detail.tags ? { tags: detail.tags } : {}),
      ...(detail.deprecated ? { deprecated: true } : {}),
      security: detail.security ?? [],
      ...(detail['x-svc-access'] ? { 'x-svc-access': detail['x-svc-access'] } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: written,
    }
  }

  return {
    openapi: '3.1.0',
    info: { title: 'Underwriting Case Service', version: pkg.version, description: DESCRIPTION },
    servers: [{ url: options.baseUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: schemas.components(),
      parameters: Object.fromEntries(Object.entries(HEADERS).filter(([, h]) => h.request).map(([key, h]) => [key, { name: h.name, in: 'header', required: false, description: h.description, schema: h.schema }])),
      headers: Object.fromEntries(Object.entries(HEADERS).filter(([, h]) => h.response).map(([key, h]) => [key, { description: h.description, schema: h.schema }])),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A user access token (JWT) or an API key (svc_live_..., svc_test_...).' } },
    },
  }
}

/** Adds GET /v1/openapi.json to `app`; the document is built once, on its first request. */
export function serveOpenApiDocument<A extends AnyElysia>(app: A, baseUrl: string): A {
  let document: Record<string, unknown> | undefined
  return app.get('/v1/openapi.json', () => (document ??= buildOpenApiDocument(app.routes as never, { baseUrl })), { detail: { hide: true } }) as unknown as A
}
