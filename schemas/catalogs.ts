/**
 * Values the service takes from its runtime's catalogs (ICU, through `Intl`): time zones, currencies
 * and number locales. Each is one named schema, so the OpenAPI document states the rule where the
 * request takes the value, and the route's own check reads the same list (TIME_ZONES, CURRENCIES).
 * A catalog belongs to the runtime: a newer Bun (a newer ICU) may add a name, which then also
 * appears in the document it serves; `x-svc-catalog` says where each list comes from.
 */
import { t } from 'elysia'
import { STATED_ENUM, named } from './common'
import { TIME_ZONE_LINKS } from './time-zone-links'

/** Every IANA time zone this runtime knows by its canonical name (`UTC` included). */
const CANONICAL_ZONES: readonly string[] = Intl.supportedValuesOf('timeZone')
const ZONE_SET = new Set(CANONICAL_ZONES)

/**
 * Each alias of a canonical zone (a name linked to it in the IANA database, either way round: the
 * database's `Etc/UTC` is the runtime's `UTC`), mapped to that canonical name. An alias is accepted
 * and stored as its canonical name, so a value saved before aliases were listed can be sent back.
 */
const ZONE_ALIASES: ReadonlyMap<string, string> = (() => {
  const group = new Map<string, Set<string>>()
  for (const [zone, link] of TIME_ZONE_LINKS) {
    const merged = new Set([...(group.get(zone) ?? [zone]), ...(group.get(link) ?? [link])])
    for (const name of merged) group.set(name, merged)
  }
  const aliases = new Map<string, string>()
  for (const [name, members] of group) {
    const canonical = [...members].find((m) => ZONE_SET.has(m))
    if (canonical !== undefined && !ZONE_SET.has(name)) aliases.set(name, canonical)
  }
  return aliases
})()

/**
 * Every time zone name the service accepts: the runtime's canonical names, then the aliases it maps
 * to them (`US/Eastern`, `Etc/UTC`, `Asia/Calcutta`). Offsets (`+01:00`) and other letter cases
 * are refused, so the document's enum is exactly what is accepted.
 */
export const TIME_ZONES: readonly string[] = [...CANONICAL_ZONES, ...[...ZONE_ALIASES.keys()].sort()]

/** Every ISO 4217 code this runtime formats (historic codes and XXX included), upper case. */
export const CURRENCIES: readonly string[] = Intl.supportedValuesOf('currency')
const CURRENCY_SET = new Set(CURRENCIES)

/**
 * A well-formed BCP 47 language tag as `Intl` reads one (RFC 5646 langtag: a language of 2-3 or 5-8
 * letters, an optional script, region and variants, extensions, a private-use part; hyphens only).
 * Necessary, not sufficient: the runtime must also format numbers for the tag (isNumberLocale).
 */
export const LOCALE_PATTERN = '^(?:[A-Za-z]{2,3}|[A-Za-z]{5,8})(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?(?:-(?:[A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(?:-[0-9A-WYZa-wyz](?:-[A-Za-z0-9]{2,8})+)*(?:-[Xx](?:-[A-Za-z0-9]{1,8})+)?$'

/** The shape of a currency code (the validator's part of CurrencyCode; the route checks the enum). */
export const CURRENCY_PATTERN = '^[A-Z]{3}$'

/** The canonical name of a time zone of TIME_ZONES (itself, or the zone an alias names); undefined for any other value. */
export const canonicalTimeZone = (name: string): string | undefined => (ZONE_SET.has(name) ? name : ZONE_ALIASES.get(name))

/** True when `name` is a time zone of TIME_ZONES (a canonical name or an alias of one). */
export const isTimeZone = (name: string): boolean => canonicalTimeZone(name) !== undefined

/** True when `code` is a currency of CURRENCIES. */
export const isCurrency = (code: string): boolean => CURRENCY_SET.has(code)

/** True when `tag` is a well-formed locale (LOCALE_PATTERN) that this runtime formats numbers for. */
export function isNumberLocale(tag: string): boolean {
  if (!new RegExp(LOCALE_PATTERN).test(tag)) return false
  try {
    return Intl.NumberFormat.supportedLocalesOf([tag]).length === 1
  } catch {
    return false // well-formed yet refused by Intl (a repeated variant or extension)
  }
}

/** A time zone: the route refuses a name outside the enum (422 at the member). */
export const TimeZone = named('TimeZone', t.String({
  maxLength: 64,
  [STATED_ENUM]: TIME_ZONES,
  description: 'An IANA time zone (e.g. Europe/Berlin, UTC). An alias of a zone (US/Eastern, Etc/UTC, Asia/Calcutta: the enum lists them after the canonical names) is accepted and stored as the canonical name; offsets and other letter cases are refused.',
  'x-svc-catalog': "Intl.supportedValuesOf('timeZone') of the service's runtime, then the IANA database's links to those zones",
}))

/** An ISO 4217 currency code: the route refuses a code outside the enum. */
export const CurrencyCode = named('CurrencyCode', t.String({
  pattern: CURRENCY_PATTERN,
  [STATED_ENUM]: CURRENCIES,
  description: 'An ISO 4217 currency code, upper case (e.g. EUR, USD, JPY).',
  'x-svc-catalog': "Intl.supportedValuesOf('currency') of the service's runtime",
}))

/** A number locale: the validator holds it to the pattern, the route to what the runtime formats. */
export const NumberLocale = named('NumberLocale', t.String({
  maxLength: 35,
  pattern: LOCALE_PATTERN,
  examples: ['en-US', 'de-DE', 'en-IN', 'fr-CH'],
  description: 'A BCP 47 locale (e.g. en-US, de-DE, en-IN) that the runtime formats numbers for: a well-formed tag it does not know is refused (422 at the member).',
  'x-svc-runtime-check': "Intl.NumberFormat.supportedLocalesOf([tag]) of the service's runtime must return the tag; no list of such tags exists to state as an enum",
}))
