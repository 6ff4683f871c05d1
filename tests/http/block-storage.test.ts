/**
 * Block storage (sql/029_block_chunks.sql): a document's blocks are kept as chunks of consecutive
 * blocks, and every reader sees them exactly as the adapter cut them: the blocks route page by page
 * across chunk boundaries, with and without a page filter, and the case's blocks an evaluation reads.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks } from '../helpers/samples'
import { chunkBlocks, replaceBlocks } from '../../server/documents/store'
import { blockId, type Block } from '../../server/documents/blocks'
import { loadCaseBlocks } from '../../server/evaluation/store'

setDefaultTimeout(60_000)

let app: TestApp
let key: string
let otherKey: string
beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:write', 'scenarios:read'])
  otherKey = await app.apiKey((await app.tenant()).id, ['scenarios:read'])
}, 60_000)
afterAll(() => app?.stop(), 60_000)

/** 1,000 blocks over 9 pages (page 5 has none), with every optional field and the characters JSON and text escape, and a run of long blocks that ends chunks early. */
function manyBlocks(documentId: string): Block[] {
  return Array.from({ length: 1_000 }, (_, i) => {
    const page = i < 400 ? 1 + Math.floor(i / 100) : 6 + Math.floor((i - 400) / 150)
    const long = i >= 600 && i < 620 ? 'x'.repeat(40_000) : ''
    return {
      id: blockId(documentId, i), position: i, page, kind: i % 10 === 0 ? 'table_row' : 'paragraph',
      text: `Block ${i}\ttab "quoted" back\\slash \\N 🏠 Größe\nline ${long}`, charStart: i * 10, charEnd: i * 10 + 9,
      source: i % 3 === 0 ? 'ocr' : 'text', confidence: i % 3 === 0 ? 87.5 : null,
      cells: i % 10 === 0 ? [{ column: 'Rent', value: `${i}.00` }, { column: 'Note', value: 'a "b" \\ c' }] : null, sheet: i % 10 === 0 ? 'Rent roll' : null,
    }
  })
}

/** A block as the route shows it (renderBlock). */
const shown = (b: Block, documentId: string) => ({
  id: b.id, document_id: documentId, position: b.position, page: b.page, kind: b.kind, text: b.text, char_start: b.charStart, char_end: b.charEnd,
  source: b.source, ...(b.confidence !== null ? { confidence: Math.round(b.confidence) } : {}), ...(b.cells ? { cells: b.cells } : {}), ...(b.sheet !== null ? { sheet: b.sheet } : {}),
})

test('chunks hold at most 256 blocks or about 256 KiB, in order, with their position and page ranges', () => {
  const blocks = manyBlocks(crypto.randomUUID())
  const chunks = chunkBlocks(blocks)
  expect(chunks[0]).toMatchObject({ firstPosition: 0, lastPosition: 255, minPage: 1, maxPage: 3 })
  expect(chunks.map((c) => c.firstPosition)).toEqual([0, ...chunks.slice(0, -1).map((c) => c.lastPosition + 1)])
  expect(chunks.at(-1)!.lastPosition).toBe(999)
  // The long blocks (600-619, 40 KB each) end chunks after about 256 KiB.
  expect(chunks.some((c) => c.firstPosition >= 512 && c.lastPosition - c.firstPosition + 1 < 256 && c.json.length >= 256 * 1024)).toBe(true)
  expect(chunks.flatMap((c) => JSON.parse(c.json) as { position: number }[]).map((b) => b.position)).toEqual(blocks.map((b) => b.position))
})

test('the blocks route pages through chunk boundaries, with and without a page filter; another workspace gets 404', async () => {
  const scenario = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Block storage' } })).body.id as string
  const doc = (await call(app.url, 'POST', `/v1/scenarios/${scenario}/documents`, { token: key, body: { filename: 'roll.txt', content_type: 'text/plain', size_bytes: 10 } })).body.id as string
  const tenant = (await app.sql<{ tenant_id: string }[]>`select tenant_id from documents where id = ${doc}`)[0]!.tenant_id
  const blocks = manyBlocks(doc)
  await app.sql.begin((tx) => replaceBlocks(tx, tenant, doc, blocks))
  expect(await allBlocks(app, key, scenario, doc, 37)).toEqual(blocks.map((b) => shown(b, doc)))
  expect(await allBlocks(app, key, scenario, doc, 200)).toEqual(blocks.map((b) => shown(b, doc)))

  for (const page of [1, 3, 5, 7, 9]) {
    const want = blocks.filter((b) => b.page === page).map((b) => shown(b, doc))
    const got: unknown[] = []
    let cursor: string | null = null
    do {
      const r: { status: number; body: any } = await call(app.url, 'GET', `/v1/scenarios/${scenario}/documents/${doc}/blocks?page=${page}&limit=40${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: key })
      expect(r.status).toBe(200)
      got.push(...r.body.items)
      cursor = r.body.next_cursor
    } while (cursor)
    expect(got).toEqual(want)
  }
  expect((await call(app.url, 'GET', `/v1/scenarios/${scenario}/documents/${doc}/blocks`, { token: otherKey })).status).toBe(404)

  // A second write replaces every chunk (a reingest with fewer blocks leaves none of the old).
  await app.sql.begin((tx) => replaceBlocks(tx, tenant, doc, blocks.slice(0, 300)))
  expect((await allBlocks(app, key, scenario, doc)).map((b) => b.position)).toEqual(blocks.slice(0, 300).map((b) => b.position))
  await app.sql.begin((tx) => replaceBlocks(tx, tenant, doc, []))
  expect(await allBlocks(app, key, scenario, doc)).toEqual([])
  expect((await app.sql`select count(*)::int as n from document_block_chunks where tenant_id = ${tenant} and document_id = ${doc}`)[0]!.n).toBe(0)
})

test("an evaluation reads every block of the case's processed documents in order, and none of another status or workspace", async () => {
  const scenario = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Case blocks' } })).body.id as string
  const newDoc = async () => (await call(app.url, 'POST', `/v1/scenarios/${scenario}/documents`, { token: key, body: { filename: 'a.txt', content_type: 'text/plain', size_bytes: 10 } })).body.id as string
  const docs = [await newDoc(), await newDoc(), await newDoc()].sort()
  const tenant = (await app.sql<{ tenant_id: string }[]>`select tenant_id from documents where id = ${docs[0]!}`)[0]!.tenant_id
  const written = docs.map((d) => manyBlocks(d).slice(0, 600))
  for (const [i, d] of docs.entries()) await app.sql.begin((tx) => replaceBlocks(tx, tenant, d, written[i]!))
  await app.sql`update documents set status = 'ready' where tenant_id = ${tenant} and id = ${docs[0]!}`
  await app.sql`update documents set status = 'ready_degraded' where tenant_id = ${tenant} and id = ${docs[2]!}`
  const { blocks, documentCount } = await loadCaseBlocks(app.sql, tenant, scenario)
  expect(documentCount).toBe(2)
  expect(blocks.map((b) => [b.documentId, b.id, b.page, b.kind, b.text])).toEqual(
    [0, 2].flatMap((i) => written[i]!.map((b) => [docs[i]!, b.id, b.page, b.kind, b.text])))
  expect((await loadCaseBlocks(app.sql, crypto.randomUUID(), scenario)).blocks).toEqual([])
})
