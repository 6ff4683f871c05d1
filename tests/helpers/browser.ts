/**
 * Chromium for the browser tests: the system's /usr/bin/chromium driven by playwright-core (which
 * never downloads a browser), headless, with a fresh profile, and accepting the tests' self-signed
 * certificate.
 */
import { chromium, type BrowserContext } from 'playwright-core'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The system Chromium (Debian package `chromium`). */
export const CHROMIUM = '/usr/bin/chromium'

/** A browser with its own profile directory; close() removes both. */
export interface TestBrowser { context: BrowserContext; close(): Promise<void> }

/** Launches Chromium with a fresh --user-data-dir; `reader` emulates the reader's time zone and locale. */
export async function launchBrowser(reader: { timezoneId?: string; locale?: string } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    ...reader,
    executablePath: CHROMIUM,
    headless: true,
    ignoreHTTPSErrors: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--ignore-certificate-errors',
    ],
  })
  return {
    context,
    async close() {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
