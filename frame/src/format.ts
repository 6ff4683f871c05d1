/**
 * Display helpers: dates in the reader's locale, byte sizes, status labels.
 */

/** A timestamp as a short local date and time. */
export function when(iso: string | number | undefined): string {
  if (iso === undefined) return ''
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

/** A byte count for people. */
export function size(bytes: number | undefined): string {
  if (typeof bytes !== 'number') return ''
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/** A machine status as words ("ready_degraded" -> "ready degraded"). */
export const label = (status: string | undefined) => (status ?? 'unknown').replaceAll('_', ' ')

/** The status colour family of a status (fixed colours, not themeable). */
export function tone(status: string | undefined): 'ok' | 'warn' | 'bad' | 'info' {
  switch (status) {
    case 'ready': case 'succeeded': case 'approve': case 'answered': return 'ok'
    case 'ready_degraded': case 'refer': case 'unsupported_pending': case 'not_found': return 'warn'
    case 'failed': case 'decline': case 'canceled': return 'bad'
    default: return 'info'
  }
}
