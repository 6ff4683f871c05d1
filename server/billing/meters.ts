/**
 * The meter catalogue and exact money arithmetic of billing. Meters are a fixed, documented list
 * (additive later); quantities are whole numbers; money is `big.js` decimals, shown as decimal
 * strings with `_micro` integer twins, rounded once per line in the currency's minor units.
 */
import Big from 'big.js'

/** Every meter of the usage ledger, in display order. */
export const METERS = [
  'evaluations_succeeded', 'pages_text_layer', 'pages_ocr', 'reports_generated',
  'generation_runs', 'diff_runs', 'model_cost_micro',
] as const
export type Meter = (typeof METERS)[number]

/** What one unit of each meter is (docs/billing.md has the same table). */
export const METER_UNITS: Record<Meter, string> = {
  evaluations_succeeded: 'an evaluation that ended succeeded',
  pages_text_layer: 'a page of a case document read from its text layer',
  pages_ocr: 'a page of a case document read by OCR',
  reports_generated: 'a findings report generated',
  generation_runs: 'a question generation run that succeeded',
  diff_runs: 'a diff run that succeeded',
  model_cost_micro: 'one micro-unit of metered model cost (SVC_MODEL_PRICE_*)',
}

/** True when `name` is a meter of the catalogue. */
export const isMeter = (name: string): name is Meter => (METERS as readonly string[]).includes(name)

/** An exact decimal string: digits, an optional fraction of at most 12 digits, no sign or exponent. */
export const DECIMAL = /^\d{1,18}(\.\d{1,12})?$/

/** True when `code` is an ISO 4217 currency code this runtime knows (the enum of CurrencyCode). */
export { isCurrency } from '../../schemas/catalogs'

/** The minor units (decimal places) of an ISO 4217 currency: 2 for EUR, 0 for JPY, 3 for KWD. */
export function minorUnits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
}

/** A Big as a plain decimal string (no exponent), trailing fraction zeros kept as given. */
export const plain = (b: Big): string => b.toFixed()

/**
 * An amount rounded once to the currency's minor units, half away from zero (the usual invoicing
 * rule), as `{amount, amount_micro}` with `dp` decimals in the string.
 */
export function money(exact: Big, currency: string): { amount: string; amount_micro: number } {
  const dp = minorUnits(currency)
  const rounded = exact.round(dp, Big.roundHalfUp)
  return { amount: rounded.toFixed(dp), amount_micro: Number(rounded.times(1_000_000).toFixed(0)) }
}

/** A decimal string with the currency's minor units (a stored amount shown again). */
export function moneyString(value: string | Big, currency: string): string {
  return new Big(value).toFixed(minorUnits(currency))
}

/** Micro-units of an amount already rounded to at most 6 decimals. */
export const microOf = (value: string | Big): number => Number(new Big(value).times(1_000_000).round(0, Big.roundHalfUp).toFixed(0))
