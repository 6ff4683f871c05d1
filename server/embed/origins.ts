/**
 * Host origins of the embedded view: the exact-https-origin rule of a mint, and the workspace's
 * allow-list as it stands now (read from `tenant_settings`, owned by the workspace settings).
 */
import type { Tx } from '../db/connect'
import { charLength } from '../http/json-text'

/** Longest origin accepted (the allow-list's own limit). */
export const ORIGIN_MAX_LENGTH = 255

/**
 * Why a string is not an exact https origin (scheme, lower-case host, optional non-default port;
 * no path, query, fragment, userinfo or wildcard), or null when it is one. "Exact" means the
 * string equals its own serialised origin, the form a browser reports in `MessageEvent.origin`.
 */
export function originProblem(value: string): string | null {
  if (charLength(value) > ORIGIN_MAX_LENGTH) return `must be at most ${ORIGIN_MAX_LENGTH} characters`
  if (value.includes('*')) return 'must not contain a wildcard'
  let url: URL
  try { url = new URL(value) } catch { return 'must be an https origin such as https://host.example' }
  if (url.protocol !== 'https:') return 'must use https'
  if (url.username !== '' || url.password !== '') return 'must not contain userinfo'
  if (url.origin !== value) return 'must be an exact origin: lower-case scheme and host, optional port, no path (not even a trailing /), query or fragment'
  return null
}

/** The origins a workspace allows to embed it now; empty when embedding is off. */
export async function allowedOrigins(sql: Tx, tenantId: string): Promise<string[]> {
  const [row] = await sql<{ embed_allowed_origins: string[] }[]>`
    select embed_allowed_origins from tenant_settings where tenant_id = ${tenantId}`
  return row?.embed_allowed_origins ?? []
}
