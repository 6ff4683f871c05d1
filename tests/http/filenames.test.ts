/**
 * File names that would show spoofed (bidirectional overrides and isolates, C1 controls, zero-width
 * and other invisible characters) are refused where they are given, documents and guideline
 * sources alike: 422 with the pointer /filename naming the character, nothing stored. Each character
 * is tried. Names derived or stored otherwise are neutralised where they are shown (the download's
 * Content-Disposition, an email's attachments).
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { uploadAndComplete } from '../helpers/samples'
import { filenameProblem, neutraliseFilename } from '../../server/documents/filenames'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

let app: TestApp
let tenantId: string
let key: string
let scenarioId: string
let groupId: string

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`

/** Every character the rule names, by family. */
const FAMILIES: Record<string, number[]> = {
  'bidirectional embedding or override': range(0x202a, 0x202e),
  'bidirectional isolate': range(0x2066, 0x2069),
  'C1 control': range(0x80, 0x9f),
  'zero-width or mark': [...range(0x200b, 0x200f), 0xfeff, 0x2060],
}

beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  tenantId = t.id
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'])
  scenarioId = (await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Filenames' } })).body.id
  const g = await call(app.url, 'POST', '/v1/question-groups', { token: key, body: { name: 'Filenames' } })
  expect(g.status).toBe(201)
  groupId = g.body.id
})
afterAll(() => app.stop())

const createDocument = (filename: string) => call(app.url, 'POST', `/v1/scenarios/${scenarioId}/documents`, {
  token: key, body: { filename, content_type: 'application/pdf', size_bytes: 10 },
})
const createGuideline = (filename: string) => call(app.url, 'POST', `/v1/question-groups/${groupId}/guidelines`, {
  token: key, body: { filename, content_type: 'application/pdf', size_bytes: 10 },
})
const stored = async () => {
  const [d] = await app.sql`select count(*)::int as n from documents where tenant_id = ${tenantId}`
  const [g] = await app.sql`select count(*)::int as n from guidelines where tenant_id = ${tenantId}`
  return d!.n + g!.n
}

describe('refused where given', () => {
  for (const [family, points] of Object.entries(FAMILIES)) {
    test(`every ${family} (${hex(points[0]!)}-${hex(points.at(-1)!)}) is 422 at /filename, documents and guideline sources`, async () => {
      const before = await stored()
      for (const cp of points) {
        const ch = String.fromCodePoint(cp)
        // The classic spoof: "invoice_<RLO>fdp.exe" reads "invoice_exe.pdf"; the character in the middle and at either end.
        for (const name of [`invoice_${ch}fdp.exe`, `${ch}report.pdf`, `report.pdf${ch}`]) {
          for (const [route, r] of [['document', await createDocument(name)], ['guideline', await createGuideline(name)]] as const) {
            const p = problemOf(r)
            expect({ route, cp: hex(cp), status: r.status, type: p.type }).toEqual({ route, cp: hex(cp), status: 422, type: 'urn:svc:error:validation' })
            expect(p.errors).toHaveLength(1)
            expect(p.errors![0]!.pointer).toBe('/filename')
            expect(p.errors![0]!.message).toContain(hex(cp))
          }
        }
      }
      expect(await stored()).toBe(before)
    })
  }

  test('the other invisible characters (soft hyphen, invisible operators, tags, line separators) and C0 controls, too', async () => {
    for (const cp of [0xad, 0x061c, 0x180e, 0x2061, 0x2064, 0x206a, 0x206f, 0xfff9, 0xe0001, 0xe0041, 0x2028, 0x2029, 0x00, 0x09, 0x0a, 0x1b, 0x7f]) {
      const r = await createDocument(`a${String.fromCodePoint(cp)}b.pdf`)
      expect({ cp: hex(cp), status: r.status, pointer: problemOf(r).errors?.[0]?.pointer }).toEqual({ cp: hex(cp), status: 422, pointer: '/filename' })
    }
    for (const name of ['dir/file.pdf', 'dir\\file.pdf', '   ']) {
      const r = await createGuideline(name)
      expect(problemOf(r)).toMatchObject({ status: 422, errors: [{ pointer: '/filename' }] })
    }
  })

  test('ordinary names in any script pass, right-to-left ones included', async () => {
    for (const name of ['statement 2024.pdf', 'Café résumé.pdf', 'תעודה.pdf', 'تقرير مالي.pdf', '報告書.pdf', 'emoji 😀.pdf', 'a-b_c (1).pdf']) {
      const r = await createDocument(name)
      expect({ name, status: r.status }).toEqual({ name, status: 201 })
      expect(r.body.filename).toBe(name)
    }
    expect((await createGuideline('تقرير.pdf')).status).toBe(201)
  })
})

describe('neutralised where shown', () => {
  test('a stored name with an override downloads under a neutralised name', async () => {
    const { doc } = await uploadAndComplete(app, key, scenarioId, { filename: 'plain.txt', contentType: 'text/plain', bytes: new TextEncoder().encode('hello') })
    // A name stored before the rule existed.
    await app.sql`update documents set filename = ${'invoice_\u202Efdp.exe'} where tenant_id = ${tenantId} and id = ${doc.id}`
    const r = await fetch(`${app.url}/v1/scenarios/${scenarioId}/documents/${doc.id}/download`, { headers: { authorization: `Bearer ${key}` } })
    expect(r.status).toBe(200)
    const disposition = r.headers.get('content-disposition')!
    expect(disposition).toContain('invoice__fdp.exe')
    expect(decodeURIComponent(disposition)).not.toContain('\u202E')
    await r.body?.cancel()
  })

  test('derived names (an email attachment) lose every refused character and keep the rest', () => {
    for (const cp of Object.values(FAMILIES).flat()) {
      const name = neutraliseFilename(`invoice_${String.fromCodePoint(cp)}fdp.exe`, 'attachment')
      expect(name).toBe('invoice__fdp.exe')
      expect(filenameProblem(name)).toBeNull()
    }
    expect(neutraliseFilename('\u202E\u200B', 'attachment')).toBe('__')
    expect(neutraliseFilename('', 'attachment')).toBe('attachment')
    expect(neutraliseFilename('تقرير.pdf')).toBe('تقرير.pdf')
  })
})
