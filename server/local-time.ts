/**
 * Timestamps for people: every place that renders a time for a reader (the PDF report, emails)
 * shows it in the workspace's `time_zone` (tenant settings; UTC when cleared). API JSON fields stay
 * RFC 3339 UTC. The embed frame formats in the browser with the zone its session exchange returns.
 */
import type { Tx } from './db/connect'
import { storedTimeZone } from './workspaces/settings-store'

/** A timestamp in a time zone: "2026-01-31 14:05:09 GMT+01:00 (Europe/Berlin)"; an unknown zone is UTC. */
export function formatInZone(date: Date, timeZone: string): string {
  let zone = timeZone
  try { new Intl.DateTimeFormat('en-US', { timeZone: zone }) } catch { zone = 'UTC' }
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
    timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    hourCycle: 'h23', timeZoneName: 'longOffset',
  }).formatToParts(date).map((p) => [p.type, p.value]))
  const offset = parts.timeZoneName === 'GMT' ? 'GMT+00:00' : parts.timeZoneName
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${offset} (${zone})`
}

/** The workspace's time zone for rendering (its setting, UTC when it has none). */
export async function workspaceTimeZone(sql: Tx, tenantId: string): Promise<string> {
  return (await storedTimeZone(sql, tenantId)) ?? 'UTC'
}
