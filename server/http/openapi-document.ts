/**
 * The OpenAPI 3.1 document at GET /v1/openapi.json, generated from the routes' TypeBox schemas by
 * @elysiajs/openapi's generator. The generator is loaded on the first request for the document and
 * its result cached: mounting the plugin itself measurably slowed every other request (see README,
 * Benchmarks), and the document only changes when the code does.
 */
import type { AnyElysia } from 'elysia'
import { Problem } from '../../schemas/common'
import { queryReferences } from './query'
import pkg from '../../package.json' with { type: 'json' }

/** The document's fixed parts: info, the Problem schema and the bearer security scheme. */
const DOCUMENTATION = {
  openapi: '3.1.0',
  info: {
    title: 'Underwriting Case Service',
    version: pkg.version,
    description: 'Multi-tenant API for underwriting cases. Every error is application/problem+json.',
  },
  components: {
    schemas: { Problem },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A user access token (JWT) or an API key (svc_live_..., svc_test_...).' } },
  },
}

/** Builds the document of every visible route of `app` (hidden routes, like this one, are left out). */
export async function buildOpenApiDocument(app: AnyElysia): Promise<Record<string, unknown>> {
  const { toOpenAPISchema } = await import('@elysiajs/openapi')
  const { paths, components } = toOpenAPISchema(app, undefined, [queryReferences as never], undefined, '3.1.0' as never) as {
    paths: Record<string, unknown>
    components: { schemas?: Record<string, unknown> }
  }
  return {
    ...DOCUMENTATION,
    paths,
    components: { ...DOCUMENTATION.components, schemas: { ...components.schemas, ...DOCUMENTATION.components.schemas } },
  }
}

/** Adds GET /v1/openapi.json to `app`; the document is built once, on its first request. */
export function serveOpenApiDocument<A extends AnyElysia>(app: A): A {
  let document: Promise<Record<string, unknown>> | undefined
  return app.get('/v1/openapi.json', () => (document ??= buildOpenApiDocument(app)), { detail: { hide: true } }) as unknown as A
}
