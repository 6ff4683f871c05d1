// The embedded frame in Chromium, its messages: every rule of the Frame messages tables, theming,
// and the example host. The frame's life (states, session expiry) is in embed.test.ts; the harness
// is tests/helpers/embed-frame.ts.
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call } from '../helpers/app'
import { settled, uploadAndComplete, allBlocks } from '../helpers/samples'
import { hostSite, testCertificate, type HttpsServer } from '../helpers/https-host'
import { startExampleHost } from '../../frame/example-host/backend'
import { launchBrowser, type TestBrowser } from '../helpers/browser'
import { count, cssVar, embedService, errorsAfter, frameTools, mortgageCase, newCase, ofType, post, received, textFile, until, waitFor, type Service } from '../helpers/embed-frame'

// The preload's default does not reach every file of a multi-file run: set it here too.
setDefaultTimeout(60_000)

let host: HttpsServer
let browser: TestBrowser
let main: Service
let caseId: string
let otherCaseId: string
let docId: string
let otherDocId: string
let blockId: string
const { mint, open, readyPage } = frameTools(() => ({ host, browser, main, caseId }))

beforeAll(async () => {
  host = await hostSite()
  ;[main, browser] = await Promise.all([
    // The app's own origin is listed too: its example host page (SVC_EXAMPLE_HOST=1) embeds it.
    embedService(host, { SVC_EXAMPLE_HOST: '1' }, (own) => [own]),
    launchBrowser(),
  ])
  ;({ caseId, docId } = await mortgageCase(main))
  otherCaseId = await newCase(main, 'Another case')
  otherDocId = (await uploadAndComplete(main.app, main.writeKey, otherCaseId, textFile('other.txt', 'Other case document.\n'))).doc.id
  await settled(main.app, main.writeKey, otherCaseId, otherDocId)
  blockId = (await allBlocks(main.app, main.writeKey, caseId, docId)).find((x) => x.page === 2)?.id
  expect(blockId).toBeDefined()
}, 240_000) // a service, a browser and three documents: minutes on a loaded machine with the embedded database
afterAll(async () => {
  await browser?.close()
  await main?.app.stop()
  await Promise.all([main?.proxy.stop(), host?.stop()])
})

describe('frame messages', () => {
  test('unknown svc value: unsupported_version at most three times before pinning, then silence', async () => {
    const { page } = await open(main)
    for (let i = 0; i < 5; i++) await post(page, { svc: 2, type: 'svc:init', handoff: 'x' })
    await post(page, { svc: '1', type: 'svc:init' })
    const errors = await errorsAfter(page, 0)
    expect(errors).toEqual(Array(3).fill({ svc: 1, type: 'svc:error', code: 'unsupported_version' }))
    await page.close()
  })

  test('svc:init: missing handoff is invalid_message (not pinned); the first well-formed one pins; a second is ignored', async () => {
    const { page, frame } = await open(main)
    await post(page, { svc: 1, type: 'svc:init' })
    await post(page, { svc: 1, type: 'svc:init', handoff: '' })
    expect(await errorsAfter(page, 0)).toEqual([
      { svc: 1, type: 'svc:error', code: 'invalid_message' },
      { svc: 1, type: 'svc:error', code: 'invalid_message' },
    ])
    await post(page, { svc: 1, type: 'svc:init', handoff: await mint(main, caseId) })
    await waitFor(page, 'svc:ready')
    const before = await count(page)
    await post(page, { svc: 1, type: 'svc:init', handoff: await mint(main, otherCaseId) })
    await post(page, { svc: 1, type: 'svc:init' })
    await Bun.sleep(400)
    expect((await received(page)).slice(before).filter((m) => m.type !== 'svc:resize')).toEqual([])
    expect(await frame.textContent('.title')).toBe('Mortgage application — Jane Doe')
    // After pinning, an unknown svc value from the host is still answered; an unknown type is ignored.
    await post(page, { svc: 7, type: 'svc:theme' })
    await post(page, { svc: 1, type: 'svc:wat', x: 1 })
    expect(await errorsAfter(page, before)).toEqual([{ svc: 1, type: 'svc:error', code: 'unsupported_version' }])
    await page.close()
  })

  test('messages posted together on load are all handled, in order (init, then theme)', async () => {
    const page = await browser.context.newPage()
    await page.goto(host.origin + '/')
    const handoff = await mint(main, caseId)
    await page.evaluate(([url, h]) => new Promise<void>((resolve) => {
      const frame = document.getElementById('case') as HTMLIFrameElement
      const origin = new URL(url).origin
      ;(window as any).openFrame(url, null)
      frame.addEventListener('load', () => {
        frame.contentWindow!.postMessage({ svc: 1, type: 'svc:init', handoff: h }, origin)
        frame.contentWindow!.postMessage({ svc: 1, type: 'svc:theme', mode: 'dark', tokens: { accent: '#7aa2ff', text: 'red' } }, origin)
        resolve()
      }, { once: true })
    }), [main.frameUrl, handoff] as const)
    await waitFor(page, 'svc:ready')
    const frame = page.frames().find((f) => f.url().startsWith(main.frameUrl))!
    expect(await frame.evaluate(() => document.documentElement.dataset.mode)).toBe('dark')
    expect(await ofType(page, 'svc:error')).toEqual([{ svc: 1, type: 'svc:error', code: 'invalid_token', key: 'text' }])
    await page.close()
  })

  test('svc:navigate is ignored with no reply before svc:ready; svc:theme is ignored entirely before init', async () => {
    const { page, frame } = await open(main)
    await post(page, { svc: 1, type: 'svc:navigate', view: { tab: 'nope' } })
    await post(page, { svc: 1, type: 'svc:theme', tokens: { accent: 'red', surface: '#000' }, mode: 'dark' })
    expect(await errorsAfter(page, 0)).toEqual([])
    expect(await cssVar(frame, '--svc-surface')).toBe('rgb(255 255 255)')
    expect(await frame.evaluate(() => document.documentElement.dataset.mode)).toBe('light')
    await page.close()
  })

  test('navigate host -> frame: documents, viewer, pane, block highlight; no echo', async () => {
    const { page, frame } = await readyPage()
    const before = await count(page)
    await post(page, { svc: 1, type: 'svc:navigate', view: { tab: 'documents', documentId: docId, blockId, documentPane: 'text', scenarioId: caseId } })
    await frame.waitForSelector(`[data-viewer="${docId}"] .text [data-block="${blockId}"].hl`)
    expect(await frame.textContent(`[data-block="${blockId}"]`)).toContain('Page two: signed by HR.')
    await post(page, { svc: 1, type: 'svc:navigate', view: { tab: 'documents', documentId: docId, blockId, documentPane: 'pages' } })
    await frame.waitForSelector(`[data-page="2"] [data-block="${blockId}"].hl`)
    await post(page, { svc: 1, type: 'svc:navigate', view: { tab: 'activity' } })
    await frame.waitForSelector('.tab.on[data-tab="activity"]')
    await post(page, { svc: 1, type: 'svc:navigate', view: { tab: 'documents', documentId: null } })
    await frame.waitForSelector('[data-list="documents"]')
    await Bun.sleep(200)
    expect((await received(page)).slice(before).filter((m) => m.type === 'svc:navigate' || m.type === 'svc:error')).toEqual([])
    await page.close()
  })

  test('navigate frame -> host: the reader changes tab, opens and closes the viewer', async () => {
    const { page, frame } = await readyPage()
    const view = (v: Record<string, unknown>) => ({ svc: 1, type: 'svc:navigate', view: { tab: 'documents', documentId: null, blockId: null, factPath: null, documentPane: 'pages', scenarioId: caseId, ...v } })
    await frame.click(`[data-document="${docId}"]`)
    await frame.waitForSelector(`[data-viewer="${docId}"]`)
    await frame.click('[data-pane="text"]')
    await frame.click('[data-action="close"]')
    await frame.click('[data-tab="evaluation"]')
    await frame.click('[data-tab="activity"]')
    await waitFor(page, 'svc:navigate', 5)
    // The activity view follows the case's event stream (the uploads' status events).
    await frame.waitForSelector('[data-list="activity"] [data-event="document.status"]', { state: 'attached' })
    expect(await ofType(page, 'svc:navigate')).toEqual([
      view({ documentId: docId }),
      view({ documentId: docId, documentPane: 'text' }),
      view({ documentPane: 'text' }),
      view({ tab: 'evaluation', documentPane: 'text' }),
      view({ tab: 'activity', documentPane: 'text' }),
    ])
    await page.close()
  })

  test('refusals are atomic: invalid_message for an unexpressible view, not_in_scope alike for another case and a nonexistent document', async () => {
    const { page, frame } = await readyPage()
    await post(page, { svc: 1, type: 'svc:navigate', view: { tab: 'documents', documentId: docId } })
    await frame.waitForSelector(`[data-viewer="${docId}"]`)
    const before = await count(page)
    const bad = [
      undefined, 'documents', { tab: 'settings' }, { tab: 'documents', documentId: 5 }, { tab: 'documents', blockId },
      { tab: 'activity', documentId: docId }, { tab: 'documents', documentId: docId, documentPane: 'pdf' }, { tab: 'documents', extra: 1 },
      { tab: 'documents', factPath: 'income' },
    ]
    for (const v of bad) await post(page, { svc: 1, type: 'svc:navigate', view: v })
    const out = [
      { tab: 'documents', documentId: otherDocId },
      { tab: 'documents', documentId: crypto.randomUUID() },
      { tab: 'documents', documentId: 'not-a-uuid' },
      { tab: 'documents', documentId: docId, blockId: crypto.randomUUID() },
      { tab: 'documents', scenarioId: otherCaseId },
      { tab: 'activity', scenarioId: crypto.randomUUID() },
    ]
    for (const v of out) await post(page, { svc: 1, type: 'svc:navigate', view: v })
    const errors = await until('all refusals', async () => {
      const e = (await received(page)).slice(before).filter((m) => m.type === 'svc:error')
      return e.length >= bad.length + out.length ? e : undefined
    })
    expect(errors).toEqual([
      ...bad.map(() => ({ svc: 1, type: 'svc:error', code: 'invalid_message' })),
      ...out.map(() => ({ svc: 1, type: 'svc:error', code: 'not_in_scope' })),
    ])
    // Nothing moved.
    expect(await frame.$(`[data-viewer="${docId}"]`)).not.toBeNull()
    expect(await frame.$('.tab.on[data-tab="documents"]')).not.toBeNull()
    await page.close()
  })

  test('svc:resize: throttled to 100 ms, ceiling 2400 px with bounded, trailing value delivered', async () => {
    const { page, frame } = await readyPage()
    await page.evaluate(() => { (window as any).autoResize = false })
    await Bun.sleep(300)
    const before = await count(page)
    // Grow the content 40 times, each change rendered (a busy machine may render few frames, and the
    // resize observer only sees rendered sizes), about 10 ms apart.
    const elapsed = await frame.evaluate(async () => {
      const started = performance.now()
      const root = document.getElementById('svc-root')!
      const pad = document.createElement('div')
      root.appendChild(pad)
      for (let i = 1; i <= 40; i++) {
        pad.style.height = `${i * 10}px`
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 10)))
      }
      return performance.now() - started
    })
    await Bun.sleep(300)
    const burst = (await page.evaluate(() => (window as any).received)).slice(before).filter((r: any) => r.data.type === 'svc:resize')
    expect(burst.length).toBeGreaterThanOrEqual(3)
    // At most one per 100 ms of growth, plus the first and the trailing one (unthrottled: one per change, 40).
    expect(burst.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2)
    expect(burst.length).toBeLessThan(40)
    // 40 changes 10 ms apart give at most one message per 100 ms. Gaps are measured on arrival at
    // the host, where a loaded machine delays each message by its own amount, so a single gap says
    // little (one measured 41 ms under two suites); their mean telescopes to (last - first) / (n - 1),
    // which only the first and last delays move (unthrottled it would be about 10 ms).
    const gaps = burst.slice(1).map((m: any, i: number) => m.at - burst[i].at)
    expect(gaps.reduce((a: number, b: number) => a + b, 0) / gaps.length).toBeGreaterThanOrEqual(80)
    const contentHeight = await frame.evaluate(() => Math.ceil(document.getElementById('svc-root')!.getBoundingClientRect().height))
    expect(burst.at(-1).data).toEqual({ svc: 1, type: 'svc:resize', height: contentHeight, bounded: false })
    await frame.evaluate(() => { (document.getElementById('svc-root')!.lastElementChild as HTMLElement).style.height = '5000px' })
    const tall = await until('bounded resize', async () => (await ofType(page, 'svc:resize')).find((m) => m.bounded))
    expect(tall).toEqual({ svc: 1, type: 'svc:resize', height: 2400, bounded: true })
    await frame.evaluate(() => { document.getElementById('svc-root')!.lastElementChild!.remove() })
    const back = await until('unbounded again', async () => {
      const last = (await ofType(page, 'svc:resize')).at(-1)
      return last && !last.bounded ? last : undefined
    })
    expect(back.height).toBeLessThan(2400)
    await page.close()
  })
})

describe('theming', () => {
  const TOKENS_DEFAULT_LIGHT = { surface: 'rgb(255 255 255)', accent: 'rgb(37 83 201)', border: 'rgb(203 207 216)' }

  test('every theme rule: valid tokens, invalid_token per key, translucency, contrast with cascade, replace, reset, mode', async () => {
    const { page, frame } = await readyPage()
    const theme = async (payload: Record<string, unknown>) => {
      const before = await count(page)
      await post(page, { svc: 1, type: 'svc:theme', ...payload })
      return (await errorsAfter(page, before, 250)).map(({ code, key }) => (key === undefined ? { code } : { code, key }))
    }
    const badgeColour = () => frame.$eval('.badge', (el) => getComputedStyle(el).color)
    const attribution = () => frame.$eval('.attribution', (el) => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor, getComputedStyle(el).fontFamily].join('|'))
    const font = () => frame.evaluate(() => getComputedStyle(document.body).fontFamily)
    const [badge0, attr0, font0] = [await badgeColour(), await attribution(), await font()]

    // Valid tokens apply; accent-hover may be translucent.
    expect(await theme({ tokens: { accent: '#0a3d91', 'accent-hover': 'rgba(10, 61, 145, 0.5)', text: 'hsl(220 30% 12%)' } })).toEqual([])
    expect(await cssVar(frame, '--svc-accent')).toBe('rgb(10 61 145)')
    expect(await cssVar(frame, '--svc-accent-hover')).toBe('rgb(10 61 145 / 0.5)')
    expect(await frame.$eval('.tab.on', (el) => getComputedStyle(el).borderBottomColor)).toBe('rgb(10, 61, 145)')

    // invalid_token per bad key or value (unknown keys, refused forms, too long, translucent paired); good keys apply.
    expect(await theme({ tokens: {
      accent: '#0a3d91', font: 'serif', 'status-ok': '#0f0', text: 'red', border: 'var(--x)', surface: 'currentColor',
      'surface-subtle': 'rgba(255, 255, 255, 0.5)', 'text-muted': 'rgba(100.000, 100.000, 100.000, 1)', 'accent-subtle': '#fff;}',
    } })).toEqual(['font', 'status-ok', 'text', 'border', 'surface', 'surface-subtle', 'text-muted', 'accent-subtle'].map((key) => ({ code: 'invalid_token', key })))
    expect(await cssVar(frame, '--svc-accent')).toBe('rgb(10 61 145)')
    // The override set was replaced: accent-hover and text are back to their defaults.
    expect(await cssVar(frame, '--svc-accent-hover')).toBe('rgb(29 68 168)')
    expect(await cssVar(frame, '--svc-text')).toBe('rgb(26 31 41)')

    // Contrast guard: only the sender's keys of a failing pair; cascade until stable.
    expect(await theme({ tokens: { surface: '#000000', 'text-muted': '#ffffff', border: '#333333' } })).toEqual([
      { code: 'insufficient_contrast', key: 'surface' },
      { code: 'insufficient_contrast', key: 'text-muted' },
    ])
    expect(await cssVar(frame, '--svc-surface')).toBe(TOKENS_DEFAULT_LIGHT.surface)
    expect(await cssVar(frame, '--svc-border')).toBe('rgb(51 51 51)')
    expect(await theme({ tokens: { 'accent-foreground': '#ffffff', accent: '#dddddd' } })).toEqual([
      { code: 'insufficient_contrast', key: 'accent' },
      { code: 'insufficient_contrast', key: 'accent-foreground' },
    ])
    expect(await theme({ tokens: { border: '#d5d5d5' } })).toEqual([{ code: 'insufficient_contrast', key: 'border' }])
    expect(await theme({ tokens: { border: '#c8c8c8' } })).toEqual([]) // under 3:1, above the relaxed 1.56:1

    // Host tokens win in both modes; a mode-only message leaves the palette alone.
    expect(await theme({ tokens: { accent: '#0a3d91' } })).toEqual([])
    expect(await theme({ mode: 'dark' })).toEqual([])
    expect(await frame.evaluate(() => document.documentElement.dataset.mode)).toBe('dark')
    expect(await cssVar(frame, '--svc-surface')).toBe('rgb(22 26 34)')
    expect(await cssVar(frame, '--svc-accent')).toBe('rgb(10 61 145)')
    expect(await theme({ mode: 'light' })).toEqual([])
    expect(await cssVar(frame, '--svc-accent')).toBe('rgb(10 61 145)')
    // In dark mode the guard measures against the dark defaults.
    expect(await theme({ mode: 'dark', tokens: { text: '#1a1f29', 'text-muted': '#b0b6c3' } })).toEqual([{ code: 'insufficient_contrast', key: 'text' }])
    expect(await cssVar(frame, '--svc-text-muted')).toBe('rgb(176 182 195)')
    // tokens: {} is a full reset; a bad mode refuses the whole message.
    expect(await theme({ tokens: {} })).toEqual([])
    expect(await cssVar(frame, '--svc-text-muted')).toBe('rgb(163 170 184)')
    expect(await theme({ mode: 'light' })).toEqual([])
    for (const [k, v] of Object.entries(TOKENS_DEFAULT_LIGHT)) expect(await cssVar(frame, `--svc-${k}`)).toBe(v)
    expect(await theme({ mode: 'sepia', tokens: { accent: '#0a3d91' } })).toEqual([{ code: 'invalid_message' }])
    expect(await cssVar(frame, '--svc-accent')).toBe(TOKENS_DEFAULT_LIGHT.accent)

    // Status colours, fonts and the attribution line never change.
    await theme({ tokens: { text: '#000000', surface: '#ffffff', accent: '#5b0a91', 'accent-subtle': '#f3e8fc' } })
    expect([await badgeColour(), await attribution(), await font()]).toEqual([badge0, attr0, font0])
    await page.close()
  })
})

describe('the example host', () => {
  test('served by the app with SVC_EXAMPLE_HOST=1: a pasted handoff opens the case; the theme buttons work', async () => {
    const page = await browser.context.newPage()
    await page.goto(`${main.proxy.origin}/example-host/`)
    const r = await call(main.app.url, 'POST', '/v1/embed/handoffs', { token: main.mintKey, body: { scenario_id: caseId, host_origin: main.proxy.origin, subject_email: 'reader@example.test' } })
    await page.fill('#slug', main.slug)
    await page.fill('#handoff', r.body.handoff)
    await page.click('button[type="submit"]')
    await until('frame ready', async () => (await page.textContent('#log'))?.includes('svc:ready'))
    const frame = page.frames().find((f) => f.url().includes(`/embed/${main.slug}`))!
    await frame.waitForSelector('[data-state="ready"]')
    await page.click('[data-mode="dark"]')
    await until('dark mode', async () => (await frame.evaluate(() => document.documentElement.dataset.mode)) === 'dark')
    expect(await page.inputValue('#handoff')).toBe('')
    await page.close()
  })

  test('the example backend mints for its signed-in user only, same-origin with its CSRF token', async () => {
    const tls = await testCertificate()
    const example = startExampleHost({ serviceUrl: main.proxy.origin, mintKey: main.mintKey, tls, serviceCa: tls.cert, user: { email: 'reader@example.test', cases: [caseId] } })
    const settings = await call(main.app.url, 'PUT', '/v1/tenant-settings', { token: main.writeKey, body: { embed_allowed_origins: [host.origin, main.proxy.origin, example.origin] } })
    expect(settings.status).toBe(200)
    try {
      const insecure = { tls: { rejectUnauthorized: false } } as RequestInit
      expect((await fetch(`${example.origin}/mint`, { method: 'POST', body: '{}', ...insecure })).status).toBe(401)
      const page = await browser.context.newPage()
      await page.goto(example.origin + '/')
      // Without the CSRF token (a forged form post) the backend refuses; another case is refused too.
      expect(await page.evaluate(() => fetch('mint', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then((r) => r.status))).toBe(403)
      await page.fill('#slug', main.slug)
      await page.fill('#case', otherCaseId)
      await page.click('button[type="submit"]')
      await until('refusal shown', async () => (await page.textContent('#status'))?.includes('refused'))
      await page.fill('#case', caseId)
      await page.click('button[type="submit"]')
      await until('frame ready', async () => (await page.textContent('#log'))?.includes('svc:ready'))
      const frame = page.frames().find((f) => f.url().includes(`/embed/${main.slug}`))!
      expect(await frame.textContent('.title')).toBe('Mortgage application — Jane Doe')
      await page.close()
    } finally {
      example.stop()
    }
  })
})
