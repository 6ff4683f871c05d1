/**
 * Amounts as a workspace reads them: number answers grouped for its `number_locale` (en-US when
 * unset), and those written with exactly two decimals (money, as documents write it) with its
 * `currency` sign when it has one. The decimal string is formatted as it is (Intl formats decimal
 * strings exactly), so "1250000.00" is "$1,250,000.00" and never a rounded float.
 */

/** How a workspace formats amounts. */
export interface AmountFormat { locale: string; currency?: string }

/** The default format: en-US grouping, no currency. */
export const DEFAULT_AMOUNT_FORMAT: AmountFormat = { locale: 'en-US' }

const DECIMAL = /^-?\d+(\.\d+)?$/

/**
 * Formats a decimal string for a workspace; other strings are returned as they are. `encodable`
 * says whether the output's characters can be drawn (the report's font): a currency symbol it
 * cannot draw is written as its ISO code instead ("INR 12,50,000.00").
 */
export function formatAmount(value: string, format: AmountFormat = DEFAULT_AMOUNT_FORMAT, encodable: (s: string) => boolean = () => true): string {
  if (!DECIMAL.test(value)) return value
  const scale = (value.split('.')[1] ?? '').length
  const money = scale === 2 && format.currency !== undefined
  const options: Intl.NumberFormatOptions = money
    ? { style: 'currency', currency: format.currency, minimumFractionDigits: 2, maximumFractionDigits: 2 }
    : { minimumFractionDigits: scale, maximumFractionDigits: scale }
  const spaces = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ')
  try {
    const out = spaces(new Intl.NumberFormat(format.locale, options).format(value as unknown as number))
    if (encodable(out) || !money) return out
    return spaces(new Intl.NumberFormat(format.locale, { ...options, currencyDisplay: 'code' }).format(value as unknown as number))
  } catch {
    return value
  }
}
