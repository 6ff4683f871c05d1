/**
 * What a spreadsheet number format shows of a number, as the spreadsheet adapter writes the value:
 * a date or time, a percentage, or a plain number, and the currency it shows, if any. Each format
 * is read once and remembered (a column repeats its format on every cell).
 */
import * as XLSX from '@e965/xlsx'

/** How a number format shows a number. */
export interface NumberFormat {
  kind: 'date' | 'percent' | 'number'
  /** The ISO code of the currency the format shows, '' for none. */
  currency: string
}

/** Currency signs a number format may show, and their codes (`kr` and others that name several currencies are left out). */
const CURRENCY_SIGNS: Record<string, string> = { '$': 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY', '₹': 'INR', '₩': 'KRW', '₪': 'ILS', '₽': 'RUB', '₺': 'TRY', '₣': 'CHF' }
/** ISO 4217 codes (as the runtime's Intl knows them): `"PCS"` in a format is a unit, not a currency. */
const CURRENCY_CODES = new Set(Intl.supportedValuesOf('currency'))
/** Quoted text, escaped characters and bracketed sections: what a format shows literally or conditions on. */
const LITERALS = /"[^"]*"|\\.|\[[^\]]*\]/g

const known = new Map<string, NumberFormat>()

/**
 * How `format` shows a number: a date or time format (SheetJS's test), a percentage (a `%` outside
 * literals), else a number; and its currency: Excel's `[$EUR]` or `[$€-407]`, a quoted sign or code
 * (`"$"#,##0.00`, `"CHF "0.00`), or a bare sign (`£#,##0`). A locale alone (`[$-409]`) is no currency.
 */
export function numberFormatOf(format: string): NumberFormat {
  const hit = known.get(format)
  if (hit) return hit
  const bare = format.replace(LITERALS, '')
  const kind = XLSX.SSF.is_date(format) ? 'date' : bare.includes('%') ? 'percent' : 'number'
  const shape: NumberFormat = { kind, currency: currencyOf(format, bare) }
  if (known.size < 10_000) known.set(format, shape)
  return shape
}

/** The currency code a format shows (see numberFormatOf), '' for none; `bare` is the format without its literals. */
function currencyOf(format: string, bare: string): string {
  const sign = (text: string) => CURRENCY_SIGNS[text] ?? (CURRENCY_CODES.has(text) ? text : '')
  const bracket = /\[\$([^\]-]+)(?:-[0-9A-Fa-f]+)?\]/.exec(format)
  const fromBracket = bracket ? sign(bracket[1]!.trim()) : ''
  if (fromBracket) return fromBracket
  for (const m of format.matchAll(/"([^"]*)"/g)) {
    const code = sign(m[1]!.trim())
    if (code) return code
  }
  for (const [ch, code] of Object.entries(CURRENCY_SIGNS)) if (bare.includes(ch)) return code
  return ''
}
