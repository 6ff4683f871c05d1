// The one helper of list routes: `cursors.open` gives the page size (the spec's default 50 when the
// query names none), the rows to fetch (one more), the position a cursor continues after (checked
// against the list's workspace scope), and the page; and a route's query schema travels in its own
// `detail` (withQuery), where the OpenAPI builder reads it, with no module-level registry.
import { expect, setDefaultTimeout, test } from 'bun:test'
import { Elysia } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Cursors, cursorScope } from '../../server/http/pagination'
import { declaredQuery, readQuery, withQuery } from '../../server/http/query'
import { buildOpenApiDocument } from '../../server/http/openapi-document'
import { ProblemError } from '../../server/http/problem'
import { DEFAULT_PAGE_LIMIT, pageQuery, PageQuery } from '../../schemas/common'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const cursors = new Cursors(new Uint8Array(32).fill(7))
const scope = cursorScope('tenant-a', 'things|x')

test('without limit or cursor a list opens on the first page of the default size', () => {
  expect(DEFAULT_PAGE_LIMIT).toBe(50)
  const list = cursors.open({}, scope)
  expect(list.limit).toBe(50)
  expect(list.fetch).toBe(51)
  expect(list.after).toBeNull()
})

test('a page of limit + 1 rows has a cursor that opens the next page after its last item, in its own scope only', () => {
  const rows = ['r5', 'r4', 'r3']
  const first = cursors.open({ limit: 2 }, scope)
  const page = first.page(rows, (r) => r, (r) => ({ id: r }))
  expect(page.items).toEqual([{ id: 'r5' }, { id: 'r4' }])
  expect(page.next_cursor).toBeString()
  const next = cursors.open({ limit: 2, cursor: page.next_cursor! }, scope)
  expect(next.after).toBe('r4')
  expect(next.page(['r3'], (r) => r, (r) => r)).toEqual({ items: ['r3'], next_cursor: null })
  for (const other of [cursorScope('tenant-b', 'things|x'), cursorScope('tenant-a', 'things|y')]) {
    let thrown: unknown
    try { cursors.open({ cursor: page.next_cursor! }, other) } catch (e) { thrown = e }
    expect(thrown).toBeInstanceOf(ProblemError)
    expect((thrown as ProblemError).code).toBe('invalid_cursor')
  }
})

test('the page part of a list query is the shared one, read with the spec split (400 malformed, 422 validation)', () => {
  const query = Type.Object({ ...pageQuery, status: Type.Optional(Type.String()) })
  expect(readQuery(query, { limit: '7', cursor: 'c', status: 's' })).toEqual({ limit: 7, cursor: 'c', status: 's' })
  expect(() => readQuery(query, { limit: 'seven' })).toThrow(ProblemError)
  let thrown: unknown
  try { readQuery(query, { limit: '201' }) } catch (e) { thrown = e }
  expect((thrown as ProblemError).code).toBe('validation')
  expect(PageQuery.properties.limit.default).toBe(DEFAULT_PAGE_LIMIT)
})

test('a route declares its query in its detail; the OpenAPI builder shows it there and nowhere else', () => {
  const query = Type.Object({ ...pageQuery, kind: Type.Optional(Type.String({ description: 'Only this kind' })) })
  const detail = withQuery(query, { summary: 'List things' })
  expect(declaredQuery(detail)).toBe(query)
  expect(declaredQuery({ summary: 'x' })).toBeUndefined()
  const app = new Elysia()
    .get('/v1/things', () => ({ items: [], next_cursor: null }), { detail })
    .get('/v1/other-things', () => ({ items: [], next_cursor: null }), { detail: { summary: 'No query' } })
  const doc = buildOpenApiDocument(app.routes as never, { baseUrl: 'http://localhost' }) as any
  const params = doc.paths['/v1/things'].get.parameters.filter((p: { in?: string }) => p.in === 'query')
  expect(params.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor', 'kind'])
  expect(params[0].schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  expect(params[2]).toMatchObject({ required: false, description: 'Only this kind' })
  expect(doc.paths['/v1/things'].get['x-svc-query']).toBeUndefined()
  const other = doc.paths['/v1/other-things'].get.parameters ?? []
  expect(other.filter((p: { in?: string }) => p.in === 'query')).toEqual([])
})
