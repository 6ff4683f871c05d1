/**
 * Values the service takes from its runtime's catalogs (ICU, through `Intl`): time zones, currencies
 * and number locales. Each is one named schema, so the OpenAPI document states the rule where the
 * request takes the value, and the route's own check reads the same list (TIME_ZONES, CURRENCIES).
 * A catalog belongs to the runtime: a newer Bun (a newer ICU) may add a name, which then also
 * appears in the document it serves; `x-svc-catalog` says where each list comes from.
 */
import { t } from 'elysia'
import { STATED_ENUM, named } from './common'

/**
 * Every IANA time zone this runtime knows by its canonical name (`UTC` included); aliases and
 * offsets that `Intl.DateTimeFormat` would also take (`US/Eastern`, `Etc/UTC`, `+01:00`, any
 * letter case) are refused, so the document's enum is exactly what is accepted.
 */
export const TIME_ZONES: readonly string[] = Intl.supportedValuesOf('timeZone')
const ZONE_SET = new Set(TIME_ZONES)

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

/** True when `name` is a time zone of TIME_ZONES (the exact canonical name). */
export const isTimeZone = (name: string): boolean => ZONE_SET.has(name)

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
  description: 'An IANA time zone by its canonical name (e.g. Europe/Berlin, UTC); aliases such as US/Eastern or Etc/UTC are refused.',
  'x-svc-catalog': "Intl.supportedValuesOf('timeZone') of the service's runtime",
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
