/**
 * The last resort for a promise rejection that nothing handled: a library that starts work nobody
 * awaits (the PostgreSQL client's array-type lookup was one, see the client patch's part 6). Bun,
 * like Node, ends the process on such a rejection, which took every request in flight with it. The
 * process logs the rejection (once per distinct error, with a count every minute after) and keeps
 * serving. A request's own error never comes here: every route's error leaves through the
 * problem path, and a handler that forgot to await is a defect this line makes visible.
 */
import type { Logger } from './log'

/** What a log line may say of an error: its name, code and message, never its query or parameters. */
function describe(reason: unknown): Record<string, unknown> {
  if (!(reason instanceof Error)) return { error: String(reason).slice(0, 300) }
  const code = (reason as { code?: unknown }).code
  return { error_name: reason.name, ...(typeof code === 'string' ? { error_code: code } : {}), error: reason.message.slice(0, 300), stack: reason.stack?.split('\n').slice(1, 6).map((l) => l.trim()) }
}

/** Installs the process-wide handler; returns how many rejections it has seen (for tests and metrics). */
export function keepServingOnUnhandledRejection(log: Logger): () => number {
  let seen = 0
  const logged = new Map<string, number>()
  process.on('unhandledRejection', (reason) => {
    seen++
    const fields = describe(reason)
    const key = `${fields.error_name}:${fields.error_code}:${fields.error}`
    const last = logged.get(key)
    if (last !== undefined && Date.now() - last < 60_000) return
    if (logged.size > 1000) logged.clear()
    logged.set(key, Date.now())
    log.error('unhandled promise rejection; the process keeps serving', { ...fields, unhandled_rejections: seen })
  })
  return () => seen
}
