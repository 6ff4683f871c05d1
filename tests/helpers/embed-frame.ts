/**
 * The embedded frame's browser harness (tests/browser/embed*.test.ts): an app behind its own HTTPS
 * proxy with a workspace that allows the host site, and the tools a test drives the host page and
 * the frame with (mint a handoff, open the frame, read the messages the host received, post one).
 * The host page is on another origin and site (https://localhost:P) than the frame
 * (https://127.0.0.1:Q; an http frame in an https page is mixed content).
 */
import { expect } from 'bun:test'
import type { Frame, Page } from 'playwright-core'
import { call, startApp, type TestApp } from './app'
import { settled, uploadAndComplete, type SampleFile } from './samples'
import { httpsProxy, type HttpsServer } from './https-host'
import type { TestBrowser } from './browser'

/** One app behind its own HTTPS proxy, with a workspace that allows the host site. */
export interface Service { app: TestApp; proxy: HttpsServer; slug: string; tenantId: string; mintKey: string; writeKey: string; frameUrl: string }

/** A plain-text upload. */
export const textFile = (name: string, text: string): SampleFile => ({ filename: name, contentType: 'text/plain', bytes: new TextEncoder().encode(text) })

/** Starts an app behind an HTTPS proxy with a workspace whose embed origins are the host's (and `extraOrigins`). */
export async function embedService(host: HttpsServer, env: Record<string, string> = {}, extraOrigins: (proxyOrigin: string) => string[] = () => []): Promise<Service> {
  let target = ''
  const proxy = await httpsProxy(() => target)
  const app = await startApp({ env: { SVC_BASE_URL: proxy.origin, ...env } })
  target = app.url
  const t = await app.tenant()
  const mintKey = await app.apiKey(t.id, ['embed:mint'])
  const writeKey = await app.apiKey(t.id, ['scenarios:write', 'settings:write'])
  await app.member(t.id, `reader-${t.slug}`, 'viewer', 'reader@example.test')
  const put = await call(app.url, 'PUT', '/v1/tenant-settings', { token: writeKey, body: { embed_allowed_origins: [host.origin, ...extraOrigins(proxy.origin)] } })
  expect(put.status).toBe(200)
  return { app, proxy, slug: t.slug, tenantId: t.id, mintKey, writeKey, frameUrl: `${proxy.origin}/embed/${t.slug}` }
}

/** Creates a case in the service's workspace; returns its id. */
export const newCase = async (s: Service, name: string) => (await call(s.app.url, 'POST', '/v1/scenarios', { token: s.writeKey, body: { name, external_ref: 'LN-2041' } })).body.id as string

/**
 * The case the frame tests show: "Mortgage application — Jane Doe" with a two-page employment letter
 * (read when this resolves) and a one-page bank statement. Returns the case's id and the letter's.
 */
export async function mortgageCase(s: Service): Promise<{ caseId: string; docId: string }> {
  const caseId = await newCase(s, 'Mortgage application — Jane Doe')
  const letter = await uploadAndComplete(s.app, s.writeKey, caseId, textFile('employment-letter.txt',
    'Employment letter.\nJane Doe has worked here since 2015.\n\nSalary is 5,000 EUR per month.\n\fPage two: signed by HR.\n'))
  await uploadAndComplete(s.app, s.writeKey, caseId, textFile('bank-statement.txt', 'Bank statement March.\nBalance 12,400 EUR.\n'))
  await settled(s.app, s.writeKey, caseId, letter.doc.id)
  return { caseId, docId: letter.doc.id }
}

/** Polls `fn` every 25 ms until it returns something truthy. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(25)
  }
}

/** The messages the host page received from the frame, oldest first. */
export const received = (page: Page): Promise<any[]> => page.evaluate(() => (window as any).received.map((r: any) => r.data))
/** The received messages of one type. */
export const ofType = async (page: Page, type: string) => (await received(page)).filter((m) => m.type === type)
/** Posts a message from the host page to the frame. */
export const post = (page: Page, message: unknown) => page.evaluate((m) => (window as any).post(m), message)
/** How many messages the host page has received. */
export const count = async (page: Page) => (await received(page)).length
/** Waits until `count` messages of `type` have arrived; returns them. */
export const waitFor = (page: Page, type: string, count = 1) => until(`${count} × ${type}`, async () => {
  const m = await ofType(page, type)
  return m.length >= count ? m : undefined
})
/** The svc:error messages that arrive after `before` messages, once the frame has had time to reply. */
export async function errorsAfter(page: Page, before: number, settleMs = 300) {
  await Bun.sleep(settleMs)
  return (await received(page)).slice(before).filter((m) => m.type === 'svc:error')
}
/**
 * A fake clock that moves only when the test moves it. After clock.install() alone the page's time
 * still flows with the wall clock, so a timer the test counts in fake milliseconds also ran on
 * during however long the machine took between steps (the 10 s no-handshake timer fired before
 * the test's 9.5 s when the page took more than 0.5 s to load on a busy machine).
 */
export async function pausedClock(page: Page) {
  await page.clock.install({ time: new Date('2030-01-01T00:00:00Z') })
  await page.clock.pauseAt(new Date('2030-01-01T00:00:01Z'))
}
/** A CSS custom property's computed value in the frame. */
export const cssVar = (frame: Frame, name: string) => frame.evaluate((n) => getComputedStyle(document.documentElement).getPropertyValue(n).trim(), name)

/**
 * Tools bound to one test file's host site, browser and main case (read when called, so they may be
 * set in beforeAll).
 */
export function frameTools(world: () => { host: HttpsServer; browser: TestBrowser; main: Service; caseId: string }) {
  /** Mints a handoff for the case, for the reader of the service's workspace. */
  async function mint(s: Service, scenarioId: string): Promise<string> {
    const r = await call(s.app.url, 'POST', '/v1/embed/handoffs', { token: s.mintKey, body: { scenario_id: scenarioId, host_origin: world().host.origin, subject_email: 'reader@example.test' } })
    expect(r.status).toBe(201)
    return r.body.handoff
  }
  /** A host page with the frame loaded; `handoff` is posted in svc:init on the iframe's load. */
  async function open(s: Service, handoff?: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; frame: Frame }> {
    const page = await world().browser.context.newPage()
    await page.setViewportSize(viewport)
    await page.goto(world().host.origin + '/')
    await page.evaluate(([url, h]) => (window as any).openFrame(url, h), [s.frameUrl, handoff ?? null] as const)
    const frame = page.frames().find((f) => f.url().startsWith(s.frameUrl))!
    expect(frame).toBeDefined()
    return { page, frame }
  }
  /** The frame opened with a fresh handoff for the case (the file's main case by default), once it has said svc:ready. */
  async function readyPage(s = world().main, id = world().caseId) {
    const o = await open(s, await mint(s, id))
    await waitFor(o.page, 'svc:ready')
    return o
  }
  return { mint, open, readyPage }
}
