/**
 * Display helpers: dates in the reader's locale and the workspace's time zone, byte sizes, status
 * labels.
 */

/** The zone itself when this browser knows it, else UTC (the service only stores zones it knows). */
export function knownZone(timeZone: string | undefined): string {
  if (!timeZone) return 'UTC'
  try {
    return new Intl.DateTimeFormat('en', { timeZone }).resolvedOptions().timeZone
  } catch {
    return 'UTC'
  }
}

/**
 * A timestamp as a short date and time in the workspace's time zone (tenant settings `time_zone`,
 * from the session exchange), written in the reader's locale; the page names the zone once.
 */
export function when(iso: string | number | undefined, timeZone: string, locale?: string): string {
  if (iso === undefined) return ''
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: knownZone(timeZone) })
}

/** A byte count for people. */
export function size(bytes: number | undefined): string {
  if (typeof bytes !== 'number') return ''
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/**
 * How much of a document was read, from its status and page counts ("3 pages, 3 by OCR",
 * "not read"), so a reader sees which documents the service did not read.
 */
export function coverage(doc: { status?: string; pages?: { total: number; text_layer: number; ocr: number; blank: number; unreadable: number } }): string {
  const p = doc.pages
  if (doc.status === 'unsupported_pending' || doc.status === 'failed') return 'not read'
  if (doc.status === 'processing' || doc.status === 'awaiting_upload') return 'not read yet'
  if (!p) return ''
  const parts = [
    p.text_layer > 0 ? `${p.text_layer} from text` : '',
    p.ocr > 0 ? `${p.ocr} by OCR` : '',
    p.blank > 0 ? `${p.blank} blank` : '',
    p.unreadable > 0 ? `${p.unreadable} not read` : '',
  ].filter(Boolean)
  return `${p.total} page${p.total === 1 ? '' : 's'}${parts.length ? `, ${parts.join(', ')}` : ''}`
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
