/**
 * ZIP bundles, as brokers send a whole file: the archive is a document and each member a document
 * of the same case (linked by parent_document_id), read by its own type, a ZIP inside recursing to
 * the depth limit; folders and operating-system clutter are skipped, encrypted members named as
 * unreadable. Hostile archives are bounded: a ZIP bomb, and 10,000 members named "../../...".
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { deflateSync } from 'fflate'
import { call, startApp, type TestApp } from '../helpers/app'
import { allBlocks, pdfSample, settled, uploadAndComplete } from '../helpers/samples'
import { repeatedDeflate, zipOf, type ZipEntry } from '../helpers/hostile-files'
import { evaluationEnded, publishedSet } from '../helpers/underwriting-pack'
import { createGroup, guidelineSettled, uploadGuideline } from '../helpers/authoring'

setDefaultTimeout(120_000)

const utf8 = (s: string) => new TextEncoder().encode(s)

/** A ZIP entry of bytes, deflated (method 8) or stored (0). */
const entry = (name: string, data: Uint8Array, method: 0 | 8 = 8): ZipEntry =>
  ({ name, data: method === 8 ? deflateSync(data) : data, crc32: Bun.hash.crc32(data) >>> 0, size: data.length, method })

/** The archive with the general-purpose "encrypted" flag set on the named member (central and local headers). */
function markEncrypted(zip: Uint8Array, name: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(zip)
  const v = new DataView(out.buffer)
  const wanted = utf8(name)
  for (let i = 0; i + 46 < out.length; i++) {
    const sig = v.getUint32(i, true)
    const nameAt = sig === 0x02014b50 ? i + 46 : sig === 0x04034b50 ? i + 30 : -1
    if (nameAt < 0) continue
    const len = v.getUint16(sig === 0x02014b50 ? i + 28 : i + 26, true)
    if (len === wanted.length && out.subarray(nameAt, nameAt + len).every((b, k) => b === wanted[k])) v.setUint16(sig === 0x02014b50 ? i + 8 : i + 6, 1, true)
  }
  return out
}

const SCHEDULE = 'property,insured_value,year_built\nWarehouse 12 Harbor Road,640000,1998\nOffice 4 Quay Street,1150000,2005\n'
const APPLICATION = [['Business Loan Application', 'Applicant: Acme Holdings LLC', 'Annual revenue: 1,250,000.00']]

let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ env: { SVC_EMAIL_MAX_ATTACHMENTS: '20', SVC_EMAIL_MAX_DEPTH: '2' } })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'notifications:write'])
})
afterAll(() => app?.stop())

async function documentsOf(sc: string) {
  return (await call(app.url, 'GET', `/v1/scenarios/${sc}/documents?limit=200`, { token: key })).body.items as any[]
}

/** Waits until the case has at least `count` documents and none is processing. */
async function allSettled(sc: string, count: number, ms = 90_000) {
  const until = Date.now() + ms
  for (;;) {
    const docs = await documentsOf(sc)
    if (docs.length >= count && docs.every((d) => d.status !== 'processing')) return docs
    if (Date.now() > until) throw new Error(`documents: ${JSON.stringify(docs.map((d) => [d.filename, d.status]))}`)
    await Bun.sleep(50)
  }
}

/** Share of the expected words found in the text. */
function recall(expected: string, text: string): number {
  const words = expected.split(/[\s,|:]+/).filter(Boolean)
  const have = new Set(text.split(/[\s,|:]+/).filter(Boolean))
  return words.filter((w) => have.has(w)).length / words.length
}

describe('ZIP bundles', () => {
  test('a ZIP of a PDF, a CSV and a nested ZIP: each member a document of the case, read by its type; a fact in the PDF is answered citing it', async () => {
    await publishedSet(app, key, [{ key: 'revenue', text: 'What is the annual revenue?', criticality: 'major', answer_type: 'number', fact_path: 'annual_revenue' }])
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Broker bundle' } })).body.id
    const inner = zipOf([entry('notes.txt', utf8('Sprinklered building with a monitored alarm.\n'))])
    const bundle = markEncrypted(zipOf([
      entry('submission/', new Uint8Array(0), 0),
      entry('submission/application.pdf', await pdfSample(APPLICATION)),
      entry('submission/schedule.csv', utf8(SCHEDULE)),
      entry('submission/inner.zip', inner, 0),
      entry('__MACOSX/submission/._application.pdf', utf8('resource fork')),
      entry('submission/secret.pdf', utf8('not really encrypted bytes')),
    ]), 'submission/secret.pdf')
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'bundle.zip', contentType: 'application/zip', bytes: bundle })
    const zip = await settled(app, key, sc, doc.id)
    expect(zip).toMatchObject({ status: 'ready_degraded', error_detail: '1 member is encrypted and could not be read: submission_secret.pdf' })
    expect((await allBlocks(app, key, sc, doc.id)).map((b) => b.text)).toEqual(['ZIP bundle of 4 files: submission_application.pdf, submission_schedule.csv, submission_inner.zip, submission_secret.pdf'])

    const docs = await allSettled(sc, 5)
    expect(docs.length).toBe(5)
    const by = Object.fromEntries(docs.map((d) => [d.filename, d]))
    expect(by['submission_application.pdf']).toMatchObject({ parent_document_id: doc.id, content_type: 'application/pdf', status: 'ready' })
    expect(by['submission_schedule.csv']).toMatchObject({ parent_document_id: doc.id, content_type: 'text/csv', status: 'ready' })
    expect(by['submission_inner.zip']).toMatchObject({ parent_document_id: doc.id, content_type: 'application/zip', status: 'ready' })
    expect(by['notes.txt']).toMatchObject({ parent_document_id: by['submission_inner.zip'].id, content_type: 'text/plain', status: 'ready' })
    // Each member's `processing` event: appended together, at consecutive sequence numbers in the
    // archive's order, the case's counter at the last event (no number skipped or taken twice).
    const memberEvents = await app.sql<{ seq: number; document_id: string }[]>`
      select seq::int, data->>'document_id' as document_id from case_events
      where scenario_id = ${sc} and type = 'document.status' and data->>'parent_document_id' = ${doc.id} and data->>'status' = 'processing'
      order by seq`
    expect(memberEvents.map((e) => e.document_id)).toEqual(['submission_application.pdf', 'submission_schedule.csv', 'submission_inner.zip'].map((n) => by[n].id))
    expect(memberEvents.map((e) => e.seq - memberEvents[0]!.seq)).toEqual([0, 1, 2])
    const [seqs] = await app.sql<{ n: number; distinct_n: number; max: number; first: number; last_seq: number }[]>`
      select count(*)::int as n, count(distinct seq)::int as distinct_n, max(seq)::int as max, min(seq)::int as first,
             (select last_seq::int from case_event_counters where scenario_id = ${sc}) as last_seq
      from case_events where scenario_id = ${sc}`
    expect(seqs).toMatchObject({ n: seqs!.max, distinct_n: seqs!.max, first: 1, last_seq: seqs!.max })
    const text = async (name: string) => (await allBlocks(app, key, sc, by[name].id)).map((b) => b.text).join('\n')
    expect(recall(APPLICATION[0]!.join(' '), await text('submission_application.pdf'))).toBeGreaterThanOrEqual(0.95)
    expect(recall(SCHEDULE.replace(/\n/g, ' '), await text('submission_schedule.csv'))).toBeGreaterThanOrEqual(0.95)
    expect(await text('notes.txt')).toBe('Sprinklered building with a monitored alarm.')

    // Reading the bundle again stores no member twice.
    expect((await call(app.url, 'POST', `/v1/scenarios/${sc}/documents/${doc.id}/reingest`, { token: key })).status).toBe(202)
    expect((await settled(app, key, sc, doc.id)).status).toBe('ready_degraded')
    expect((await allSettled(sc, 5)).length).toBe(5)

    const run = await call(app.url, 'POST', `/v1/scenarios/${sc}/evaluate`, { token: key, body: {} })
    expect((await evaluationEnded(app, key, sc, run.body.id)).status).toBe('succeeded')
    const [answer] = (await call(app.url, 'GET', `/v1/scenarios/${sc}/answers`, { token: key })).body.items
    expect(answer).toMatchObject({ question_key: 'revenue', value: '1250000.00', status: 'answered' })
    const [evidence] = (await call(app.url, 'GET', `/v1/scenarios/${sc}/evidence`, { token: key })).body.items
    expect(evidence).toMatchObject({ document_id: by['submission_application.pdf'].id, page: 1, quote: 'Annual revenue: 1,250,000.00' })
  })

  test('ZIPs nested past the depth limit keep their members to themselves, saying so', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Nested bundles' } })).body.id
    let zip = zipOf([entry('deep.txt', utf8('Deep file\n'))])
    for (const level of [3, 2]) zip = zipOf([entry(`level${level}.zip`, zip, 0)])
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'level1.zip', contentType: 'application/zip', bytes: zip })
    await settled(app, key, sc, doc.id)
    const docs = await allSettled(sc, 3)
    const by = Object.fromEntries(docs.map((d) => [d.filename, d]))
    expect(docs.length).toBe(3)
    expect(by['level3.zip']).toMatchObject({ status: 'ready_degraded', error_detail: '1 member of a ZIP nested 2 deep was not kept (SVC_EMAIL_MAX_DEPTH)' })
  })
})

describe('a ZIP as a guideline source', () => {
  test('gives its own listing and says its files were not read (a guideline source keeps no files)', async () => {
    const group = await createGroup(app, key)
    const bundle = zipOf([entry('policy.txt', utf8('Maximum loan to value: 80%\n')), entry('appendix.txt', utf8('Appendix A\n'))])
    const { start } = await uploadGuideline(app, key, group.id, { filename: 'guidelines.zip', contentType: 'application/zip', bytes: bundle })
    expect(await guidelineSettled(app, key, group.id, start.id)).toMatchObject({
      status: 'ready_degraded', error_detail: '2 files inside were not read: upload them as guideline sources of their own',
    })
  })
})

describe('hostile ZIP bundles are bounded', () => {
  /** Ingests a bundle while probing /healthz; returns the document, its parse and how many probes were answered. */
  async function ingestProbing(sc: string, bytes: Uint8Array) {
    const { doc } = await uploadAndComplete(app, key, sc, { filename: 'hostile.zip', contentType: 'application/zip', bytes: bytes as never })
    let probes = 0
    let done = false
    const probe = (async () => {
      while (!done) {
        expect((await fetch(`${app.url}/healthz`)).status).toBe(200)
        probes++
        await Bun.sleep(10)
      }
    })()
    const settledDoc = await settled(app, key, sc, doc.id, 100_000)
    done = true
    await probe
    // What cannot vary with the machine: every probe answered 200 (above), and probes were answered while it ran.
    return { doc: settledDoc, parse: app.deps.parser.recent().find((r) => r.documentId === doc.id)!, probes }
  }

  test('a ZIP bomb (a member of a few MB inflating to 1.1 GB) keeps nothing of it, stops early, names the limit', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Bomb' } })).body.id
    const zeros = repeatedDeflate(new Uint8Array(0), new Uint8Array(1 << 20), 1100, new Uint8Array(0))
    const bomb = zipOf([{ name: 'statements.csv', data: zeros.deflated, crc32: zeros.crc32, size: zeros.size, method: 8 }, entry('cover.txt', utf8('Cover letter\n'))])
    expect(bomb.length).toBeLessThan(8 * 1_048_576)
    const { doc, parse, probes } = await ingestProbing(sc, bomb)
    expect(doc).toMatchObject({ status: 'ready_degraded', error_detail: '1 member past 50 MiB of members was not kept (SVC_EMAIL_MAX_ATTACHMENT_MB)' })
    expect(parse).toMatchObject({ end: 'done' })
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
    expect(probes).toBeGreaterThan(0)
    const docs = await allSettled(sc, 2)
    expect(docs.map((d) => d.filename).sort()).toEqual(['cover.txt', 'hostile.zip'])
  })

  test('a ZIP of 10,000 members named "../../..." keeps the first 20, every name flattened inside the case', async () => {
    const sc = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Traversal' } })).body.id
    const names = (i: number) => [`../../etc/passwd-${i}.txt`, `/absolute/path-${i}.txt`, `..\\..\\windows\\win-${i}.txt`, `./../.hidden-${i}.txt`][i % 4]!
    const many = zipOf(Array.from({ length: 10_000 }, (_, i) => entry(names(i), utf8(`Member ${i}\n`), 0)))
    const { doc, parse, probes } = await ingestProbing(sc, many)
    expect(doc).toMatchObject({ status: 'ready_degraded', error_detail: '9980 members after the first 20 were not kept (SVC_EMAIL_MAX_ATTACHMENTS)' })
    expect(parse).toMatchObject({ end: 'done' })
    expect(parse.peakRssBytes).toBeLessThan(1024 * 1_048_576)
    expect(probes).toBeGreaterThan(0)
    const children = (await allSettled(sc, 21)).filter((d) => d.parent_document_id === doc.id)
    expect(children.length).toBe(20)
    for (const c of children) {
      expect(c.filename).not.toMatch(/[/\\]|^\.|\.\./)
      expect(c.status).toBe('ready')
    }
    expect(children.map((c) => c.filename).sort().slice(0, 4)).toEqual(['absolute_path-1.txt', 'absolute_path-13.txt', 'absolute_path-17.txt', 'absolute_path-5.txt'])
    expect(children.map((c) => c.filename)).toContain('etc_passwd-0.txt')
    expect(children.map((c) => c.filename)).toContain('windows_win-2.txt')
    expect(children.map((c) => c.filename)).toContain('hidden-3.txt')
  })
})
