// `bun run build` makes one executable that starts the same service (migrations and assets inside):
// it is copied away from the source tree and node_modules, started on the embedded database, and
// must answer /healthz and /readyz and serve the CLI.
import { afterAll, expect, test, setDefaultTimeout } from 'bun:test'
import { mkdtempSync, rmSync, copyFileSync, existsSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnService, type ServiceProcess } from '../helpers/service-process'
import { docxSample, pdfSample } from '../helpers/samples'
import { scheduleBook, writeBook } from '../helpers/spreadsheets'
import { PROPOSAL_RTF, surveyOdt, wordFixture } from '../helpers/word-processing'
import iconv from 'iconv-lite'
import { imageOnlyPdf, scanned, textPage } from '../helpers/scans'
import { CJK_TEXT, cjkPdf } from '../helpers/pdf-fixtures'
import { faxTiff } from '../helpers/tiff'
import { heicOf, heifEncoder } from '../helpers/heic'
import { zipOf } from '../helpers/hostile-files'

setDefaultTimeout(400_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const dir = mkdtempSync(join(tmpdir(), 'svc-binary-'))
let svc: ServiceProcess | undefined
afterAll(async () => {
  await svc?.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('the compiled binary starts and answers /healthz', async () => {
  const build = Bun.spawnSync(['bun', 'run', 'build'], { stdout: 'pipe', stderr: 'pipe' })
  expect(build.exitCode).toBe(0)
  expect(existsSync('dist/svc')).toBe(true)
  // Issue 29's size target: at most 140 MiB (the Bun runtime alone is about 100 MiB).
  expect(statSync('dist/svc').size).toBeLessThanOrEqual(140 * 1_048_576)
  const bin = join(dir, 'svc')
  copyFileSync('dist/svc', bin)
  Bun.spawnSync(['chmod', '+x', bin])
  // The WebAssembly OCR engine: the binary must OCR with what it carries, whatever is installed here.
  const env = { DATABASE_URL: undefined, SVC_DATA_DIR: join(dir, 'data'), SVC_SECRET_KEY: undefined, SVC_OCR_ENGINE: 'wasm' }
  svc = await spawnService([bin], env)
  const health = await fetch(`${svc.url}/healthz`)
  expect(health.status).toBe(200)
  expect(await health.json()).toEqual({ status: 'ok' })
  expect((await fetch(`${svc.url}/readyz`)).status).toBe(200)
  // A fresh data directory is unpacked from the binary's initialised one, not made by initdb (which
  // raised the process to about 1.1 GB): the service's high-water mark stays far below that.
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${svc.proc.pid}/status`, 'utf8'))![1]) * 1024
  expect(hwm).toBeLessThan(600 * 1_000_000)
  const cli = Bun.spawnSync([bin, 'tenant', 'create', '--slug', 'from-binary'], { env: { ...process.env, ...env, DATABASE_URL: '' }, cwd: dir, stdout: 'pipe' })
  expect(cli.exitCode).toBe(0)
  expect(JSON.parse(cli.stdout.toString())).toMatchObject({ slug: 'from-binary', created: true })
})

test('the compiled binary parses documents, OCR included, in its own parser processes (itself, with --parse-worker)', async () => {
  const env = { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: join(dir, 'data'), SVC_SECRET_KEY: '' }
  const made = Bun.spawnSync([join(dir, 'svc'), 'api-key', 'create', '--tenant', 'from-binary', '--name', 'b', '--scopes', 'scenarios:read,scenarios:write'], { env, cwd: dir, stdout: 'pipe' })
  expect(made.exitCode).toBe(0)
  const key = JSON.parse(made.stdout.toString()).key as string
  const api = (method: string, path: string, body?: unknown) => fetch(`${svc!.url}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  }).then(async (r) => ({ status: r.status, body: await r.json() as any }))
  const scenario = await api('POST', '/v1/scenarios', { name: 'Binary case' })
  expect(scenario.status).toBe(201)
  const files: { filename: string; content_type: string; bytes: Uint8Array<ArrayBuffer>; text: string; last?: string }[] = [
    { filename: 'a.pdf', content_type: 'application/pdf', bytes: await pdfSample([['Compiled parser page']]), text: 'Compiled parser page' },
    // pdf.js's predefined CMaps travel inside the binary (a non-embedded Chinese font, GBK-EUC-H).
    { filename: 'cn.pdf', content_type: 'application/pdf', bytes: await cjkPdf('GBK-EUC-H'), text: 'Cover page', last: `Invoice 2024\n${CJK_TEXT}` },
    { filename: 'a.docx', content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: await docxSample(), text: 'Applicant Summary' },
    // SheetJS, word-extractor, the RTF tokenizer, the ODT reader and the encodings travel inside the binary too.
    { filename: 'a.xls', content_type: 'application/vnd.ms-excel', bytes: writeBook(scheduleBook(), 'biff8'), text: 'Schedule' },
    { filename: 'a.doc', content_type: 'application/msword', bytes: await wordFixture('test04.doc'), text: 'This is a fairly simple word document, over two pages, with headers and footers.' },
    { filename: 'a.rtf', content_type: 'application/rtf', bytes: new TextEncoder().encode(PROPOSAL_RTF), text: 'Proposal form' },
    { filename: 'a.odt', content_type: 'application/vnd.oasis.opendocument.text', bytes: surveyOdt(), text: 'Survey report' },
    { filename: 'a.txt', content_type: 'text/plain', bytes: new Uint8Array(iconv.encode('火災保険 申込書 保険契約者 東京港 株式会社 の 本社ビル です。', 'shift_jis')), text: '火災保険 申込書 保険契約者 東京港 株式会社 の 本社ビル です。' },
    // OCR: the engine and the English model travel inside the binary.
    { filename: 'a.png', content_type: 'image/png', bytes: new Uint8Array(textPage(['Compiled OCR reads this line']).toBuffer('image/png')), text: 'Compiled OCR reads this line' },
    { filename: 'scan.pdf', content_type: 'application/pdf', bytes: await imageOnlyPdf([scanned(textPage(['A scanned page inside the binary']))]), text: 'A scanned page inside the binary' },
    // A CCITT G4 fax TIFF (directories at the end), a HEIC (libheif's WebAssembly inside the binary) and a ZIP bundle.
    { filename: 'fax.tif', content_type: 'image/tiff', bytes: faxTiff([textPage(['A faxed page inside the binary'], { fontPx: 36 })]), text: 'A faxed page inside the binary' },
    ...(heifEncoder() ? [{ filename: 'photo.heic', content_type: 'image/heic', bytes: heicOf(textPage(['A HEIC photo inside the binary'], { fontPx: 36 })), text: 'A HEIC photo inside the binary' }] : []),
    { filename: 'bundle.zip', content_type: 'application/zip', bytes: zipOf([{ name: 'inside.txt', data: new TextEncoder().encode('Inside the bundle\n'), crc32: Bun.hash.crc32(new TextEncoder().encode('Inside the bundle\n')) >>> 0, size: 18, method: 0 }]), text: 'ZIP bundle of 1 file: inside.txt' },
  ]
  for (const file of files) {
    const start = await api('POST', `/v1/scenarios/${scenario.body.id}/documents`, { filename: file.filename, content_type: file.content_type, size_bytes: file.bytes.length })
    expect(start.status).toBe(201)
    const target = new URL(start.body.upload.url)
    const put = await fetch(`${svc!.url}${target.pathname}${target.search}`, { method: 'PUT', headers: start.body.upload.headers, body: file.bytes })
    expect(put.status).toBe(204)
    expect((await api('POST', `/v1/scenarios/${scenario.body.id}/documents/${start.body.id}/complete`, {})).status).toBe(202)
    let doc: any
    for (let i = 0; i < 400; i++) {
      doc = (await api('GET', `/v1/scenarios/${scenario.body.id}/documents/${start.body.id}`)).body
      if (doc.status !== 'processing') break
      await Bun.sleep(50)
    }
    if (doc.status !== 'ready') console.error(svc!.output().slice(-3000))
    expect({ file: file.filename, status: doc.status, detail: doc.error_detail }).toEqual({ file: file.filename, status: 'ready', detail: undefined })
    const blocks = await api('GET', `/v1/scenarios/${scenario.body.id}/documents/${start.body.id}/blocks`)
    expect(blocks.body.items[0].text).toBe(file.text)
    if (file.last) expect(blocks.body.items.at(-1).text).toBe(file.last)
  }
})
