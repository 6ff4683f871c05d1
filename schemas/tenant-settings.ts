/**
 * Tenant settings: the full-replace document of GET/PUT /v1/tenant-settings.
 */
import { t } from 'elysia'
import { Int, named } from './common'
import { HTTPS_ORIGIN_PATTERN } from './patterns'
import { CurrencyCode, NumberLocale, TimeZone } from './catalogs'
import { VerticalKey } from './vertical'

const origins = {
  description: 'Exact lower-case https origins (scheme, host, optional port; no path, query, fragment, userinfo or wildcard), '
    + 'at most 50 after de-duplication, 255 characters each. Empty: embedding is off.',
}
const timeZone = { description: 'IANA time zone name (canonical, see TimeZone) used to render timestamps; UTC when cleared.' }
const retention = { description: 'Days a finished notification delivery record is kept (1-3650); 30 when cleared.' }
const approval = { description: "When true, an operator's break-glass request needs approval by a workspace admin." }
const vertical = {
  description: "The workspace's default vertical binding: a key of GET /v1/verticals. Cases and question sets created without a vertical "
    + 'are bound to it (copied at creation). Absent when the workspace is on the shipped default.',
}

const synonyms = {
  description: 'Label synonyms of this workspace: a group key (a snake_case fact name) and its other names. A key of the built-in table '
    + '(docs/evaluation.md, "Label synonyms") replaces that group, an empty list removes it, a new key adds a group. Absent: the built-in table alone.',
}
const currency = { description: 'ISO 4217 code the findings report shows amounts in (e.g. USD, EUR); absent: amounts without a currency sign.' }
const locale = { description: 'BCP 47 locale of number grouping in the findings report (e.g. en-US, de-DE, en-IN); en-US when absent.' }
const SynonymGroups = t.Record(t.String({ pattern: '^[a-z0-9_]{1,64}$' }), t.Array(t.String({ pattern: '^[a-z0-9_]{1,64}$' }), { maxItems: 30 }), synonyms)

/** PUT /v1/tenant-settings body: the whole document; an omitted field is cleared. */
export const TenantSettingsInput = t.Object({
  embed_allowed_origins: t.Optional(t.Array(t.String({ maxLength: 255, pattern: HTTPS_ORIGIN_PATTERN }), origins)),
  time_zone: t.Optional(t.Union([TimeZone, t.Null()], timeZone)),
  notification_retention_days: t.Optional(t.Union([Int({ minimum: 1, maximum: 3650 }), t.Null()], retention)),
  break_glass_require_tenant_approval: t.Optional(t.Boolean(approval)),
  vertical: t.Optional(t.Union([VerticalKey, t.Null()], vertical)),
  label_synonyms: t.Optional(t.Union([SynonymGroups, t.Null()])),
  currency: t.Optional(t.Union([CurrencyCode, t.Null()], currency)),
  number_locale: t.Optional(t.Union([NumberLocale, t.Null()], locale)),
})

/** The settings as GET and PUT return them (the values in force). */
export const TenantSettings = named('TenantSettings', t.Object({
  embed_allowed_origins: t.Array(t.String(), origins),
  time_zone: t.String(timeZone),
  notification_retention_days: Int(retention),
  break_glass_require_tenant_approval: t.Boolean(approval),
  vertical: t.Optional(t.String(vertical)),
  label_synonyms: t.Optional(SynonymGroups),
  currency: t.Optional(t.String(currency)),
  number_locale: t.Optional(t.String(locale)),
}))
