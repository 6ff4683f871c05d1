/**
 * The suite-wide rule that no log line carries a credential. The preload (tests/setup.ts) watches
 * every line the service's logger makes in the test process (onLogLine), everything written through
 * console, and the output of every service and worker process the tests spawn; a global afterAll
 * fails the run naming the first offending lines. Credentials are recognised by shape (API keys,
 * webhook secrets, invitation tokens, bearer headers, JWTs, presigned query strings, URL passwords)
 * and by value (every API key and token the helpers mint is remembered).
 */
import { onLogLine } from '../../server/observability/log'

/** Shapes of credentials the service issues or accepts. */
export const CREDENTIAL_SHAPES: readonly (readonly [string, RegExp])[] = [
  ['API key', /svc_(live|test)_[A-Za-z0-9_-]{20,}/],
  ['webhook signing secret', /whsec_[A-Za-z0-9_-]{20,}/],
  ['invitation token', /inv_[A-Za-z0-9_-]{40,}/],
  ['bearer credential', /bearer\s+[A-Za-z0-9._~+/=-]{16,}/i],
  ['JWT', /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./],
  ['presigned S3 query', /X-Amz-(Signature|Credential|Security-Token)=/i],
  ['upload URL signature', /[?&]signature=[A-Za-z0-9_-]{16,}/],
  ['password in a URL', /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"'?#]+:[^\s@/"'?#]+@/i],
  ['private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
]

const known = new Set<string>()

/** Remembers a credential's plaintext (helpers call it for every key and token they mint). */
export function rememberCredential(value: string | undefined | null): void {
  if (value && value.length >= 16) known.add(value)
}

/** What credential a line holds, if any (the shape's name, or "a minted credential"). */
export function credentialIn(line: string): string | undefined {
  for (const [name, shape] of CREDENTIAL_SHAPES) if (shape.test(line)) return name
  for (const value of known) if (line.includes(value)) return 'a minted credential'
  return undefined
}

const violations: string[] = []

/** Checks one line; a credential in it is recorded (redacted) against `source`. */
export function checkLine(line: string, source: string): void {
  const found = credentialIn(line)
  if (found) violations.push(`${source}: ${found} in: ${line.slice(0, 160).replace(/[A-Za-z0-9_-]{16,}/g, (m) => `${m.slice(0, 4)}…`)}`)
}

/** A chunk-wise scanner of a child process's output (checks complete lines). */
export function outputScanner(source: string): (chunk: string) => void {
  let rest = ''
  return (chunk) => {
    const text = rest + chunk
    const lines = text.split('\n')
    rest = lines.pop() ?? ''
    if (rest.length > 65_536) { lines.push(rest); rest = '' }
    for (const line of lines) if (line) checkLine(line, source)
  }
}

/** The lines found so far. */
export function logViolations(): readonly string[] {
  return violations
}

let watching = false

/** Starts watching this process's log lines and console output (once). */
export function watchLogs(): void {
  if (watching) return
  watching = true
  onLogLine((line) => checkLine(line, 'log'))
  for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[m].bind(console)
    console[m] = (...args: unknown[]) => {
      checkLine(args.map((a) => (typeof a === 'string' ? a : (() => { try { return JSON.stringify(a) } catch { return String(a) } })())).join(' '), `console.${m}`)
      original(...args)
    }
  }
}
