/**
 * Tenant-settings routes: GET and PUT /v1/tenant-settings. A save validates the whole document
 * first (nothing is stored on a refusal), then writes it and appends `tenant.settings.updated`
 * (before and after) to the audit chain in the same transaction. The `tenant_settings` table is the
 * store's (server/workspaces/settings-store.ts).
 */
import { Elysia } from 'elysia'
import type { Static } from '@sinclair/typebox'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE, tenantOf } from '../auth/access'
import { problems, type FieldError } from '../http/problem'
import { BODY_PROBLEMS, responses } from '../http/docs'
import { TenantSettings, TenantSettingsInput } from '../../schemas/tenant-settings'
import { actorOf, appendAudit } from '../workspaces/audit-store'
import { lockTenant } from '../workspaces/tenants-store'
import { readTenantSettings, writeTenantSettings } from '../workspaces/settings-store'
import { VERTICAL_KEYS } from './verticals'
import { synonymEditsProblem } from '../evaluation/synonyms'
import { charLength } from '../http/json-text'
import { explainPattern } from '../http/pattern-messages'
import { HTTPS_ORIGIN_PATTERN } from '../../schemas/patterns'
import { canonicalTimeZone, CURRENCY_PATTERN, isCurrency, isNumberLocale, LOCALE_PATTERN } from '../../schemas/catalogs'

/** At most this many allow-listed embed origins (after de-duplication). */
export const EMBED_ORIGINS_MAX = 50
/** At most this many characters per origin. */
export const EMBED_ORIGIN_MAX_LENGTH = 255
const SHAPE = 'must be an https origin of the form https://host or https://host:port'

/**
 * The rule an embed origin breaks, or null for an exact lower-case https origin (scheme, host,
 * optional port) with no path, query, fragment, userinfo or wildcard.
 */
export function originRuleBroken(origin: string): string | null {
  if (charLength(origin) > EMBED_ORIGIN_MAX_LENGTH) return `must be at most ${EMBED_ORIGIN_MAX_LENGTH} characters`
  if (origin.includes('*')) return 'must not contain a wildcard'
  if (origin !== origin.toLowerCase()) return 'must be lower-case'
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(origin)
  if (scheme && scheme[1] !== 'https') return 'must use the https scheme'
  if (!origin.startsWith('https://')) return SHAPE
  const rest = origin.slice('https://'.length)
  const end = rest.search(/[/?#]/)
  const authority = end < 0 ? rest : rest.slice(0, end)
  if (authority.includes('@')) return 'must not contain userinfo'
  if (end >= 0) {
    const after = rest[end]
    if (after === '/') return 'must not contain a path (not even a trailing /)'
    if (after === '?') return 'must not contain a query'
    return 'must not contain a fragment'
  }
  let url: URL
  try { url = new URL(origin) } catch { return SHAPE }
  if (url.hostname === '') return SHAPE
  if (/:443$/.test(authority)) return 'must not name the default port 443'
  if (url.origin !== origin) return 'must be the exact serialized origin (ASCII host, valid port)'
  return null
}
// The schemas carry the rule as HTTPS_ORIGIN_PATTERN (the validator refuses first): the same words.
explainPattern(HTTPS_ORIGIN_PATTERN, originRuleBroken, 'must be an exact lower-case https origin: a host name of letters, digits and inner hyphens (not ending in a number) or an IPv4 address, an optional port other than 443')

const LOCALE_RULE = 'must be a BCP 47 locale such as en-US or de-DE'
const CURRENCY_RULE = 'must be an ISO 4217 currency code such as USD or EUR'

/** The message of a time zone outside the TimeZone enum. */
export const ZONE_RULE = 'must be an IANA time zone name such as Europe/Berlin (an alias such as US/Eastern is stored as its canonical name; offsets and other letter cases are refused)'

// The validator holds number_locale to LOCALE_PATTERN first: the same words as the route's own check.
explainPattern(LOCALE_PATTERN, () => null, LOCALE_RULE)
// CurrencyCode's pattern (here and on billing contracts): the words of the route's own currency check.
explainPattern(CURRENCY_PATTERN, () => null, CURRENCY_RULE)

/** Validates a settings document; throws one 422 listing every violation, else the values to store. */
export function validateSettings(input: Static<typeof TenantSettingsInput>) {
  const errors: FieldError[] = []
  const origins: string[] = []
  ;(input.embed_allowed_origins ?? []).forEach((origin, i) => {
    const broken = originRuleBroken(origin)
    if (broken) errors.push({ pointer: `/embed_allowed_origins/${i}`, message: broken })
    else if (!origins.includes(origin)) origins.push(origin)
  })
  const distinct = new Set(input.embed_allowed_origins ?? []).size
  if (distinct > EMBED_ORIGINS_MAX) {
    errors.push({ pointer: '/embed_allowed_origins', message: `must have at most ${EMBED_ORIGINS_MAX} entries after de-duplication, got ${distinct}` })
  }
  // An alias (US/Eastern) is stored as its canonical name (America/New_York).
  const timeZone = input.time_zone == null ? null : (canonicalTimeZone(input.time_zone) ?? null)
  if (input.time_zone != null && timeZone === null) errors.push({ pointer: '/time_zone', message: ZONE_RULE })
  const vertical = input.vertical ?? null
  if (vertical !== null && !VERTICAL_KEYS.includes(vertical)) errors.push({ pointer: '/vertical', message: verticalRule() })
  const synonyms = input.label_synonyms ?? null
  const synonymProblem = synonyms === null ? null : synonymEditsProblem(synonyms)
  if (synonymProblem) errors.push(synonymProblem)
  const currency = input.currency ?? null
  if (currency !== null && !isCurrency(currency)) errors.push({ pointer: '/currency', message: CURRENCY_RULE })
  const locale = input.number_locale ?? null
  if (locale !== null && !isNumberLocale(locale)) errors.push({ pointer: '/number_locale', message: LOCALE_RULE })
  if (errors.length) throw problems.schema(errors)
  return {
    embed_allowed_origins: origins,
    time_zone: timeZone,
    notification_retention_days: input.notification_retention_days ?? null,
    break_glass_require_tenant_approval: input.break_glass_require_tenant_approval ?? false,
    vertical,
    label_synonyms: synonyms !== null && Object.keys(synonyms).length > 0 ? synonyms : null,
    currency,
    number_locale: locale,
  }
}

/** The message of a vertical that is not a catalog key (the same wherever a vertical is written). */
export const verticalRule = () => `must be a key of GET /v1/verticals: ${VERTICAL_KEYS.join(', ')}`

/** GET and PUT /v1/tenant-settings. */
export function tenantSettingsRoutes(deps: AppDeps) {
  const { sql } = deps
  return new Elysia({ name: 'tenant-settings' })
    .use(accessControl(deps.authenticate))
    .get('/v1/tenant-settings', ({ principal }) => readTenantSettings(sql, tenantOf(principal)), {
      access: { roles: ANY_ROLE, scopes: ['settings:write'] },
      detail: { summary: "The workspace's settings", tags: ['Tenant settings'], responses: responses({ 200: TenantSettings }) },
    })
    .put('/v1/tenant-settings', async ({ principal, body }) => {
      const tenantId = tenantOf(principal)
      const next = validateSettings(body)
      return sql.begin(async (tx) => {
        await lockTenant(tx, tenantId)
        const before = await readTenantSettings(tx, tenantId)
        const after = await writeTenantSettings(tx, tenantId, next)
        await appendAudit(tx, tenantId, 'tenant.settings.updated', actorOf(principal), { before, after })
        return after
      })
    }, {
      access: { roles: ['admin'], scopes: ['settings:write'] },
      body: TenantSettingsInput,
      detail: {
        summary: 'Replace the workspace settings (omitted fields are cleared)',
        description: 'Full replace. A refused document stores nothing; each bad origin gives one errors[] entry whose pointer names its index and whose message names the rule.',
        tags: ['Tenant settings'],
        responses: responses({ 200: TenantSettings }, BODY_PROBLEMS),
      },
    })
}
