/**
 * Label synonyms: the names a figure goes by in real documents. A group is keyed by its usual name
 * and lists the others; any name of a group answers a fact path naming another (`annual_revenue`
 * finds "Gross revenue (FY2025)", "Total sales" or "Annual revenues"), after the path's own name.
 * The service ships the built-in table below for the common underwriting figures; a workspace edits
 * it in its tenant settings (`label_synonyms`): a group it names replaces the built-in group of
 * that key (an empty list removes it), a new key adds a group.
 */
import type { SynonymTable } from './facts'

/** The built-in groups: usual name -> other names (snake_case, as labels become fact names). */
export const BUILT_IN_SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  annual_revenue: ['annual_revenues', 'gross_revenue', 'gross_revenues', 'total_revenue', 'total_revenues', 'revenue', 'revenues', 'total_sales', 'gross_sales', 'annual_sales', 'net_sales', 'turnover'],
  net_income: ['net_profit', 'net_earnings', 'profit_after_tax', 'net_income_loss'],
  closing_balance: ['ending_balance', 'new_balance', 'balance_at_end_of_period', 'end_balance'],
  opening_balance: ['beginning_balance', 'previous_balance', 'balance_forward', 'starting_balance'],
  available_balance: ['current_balance', 'balance'],
  gross_pay: ['gross_earnings', 'gross_wages', 'total_gross', 'total_earnings', 'gross_salary'],
  net_pay: ['net_amount', 'take_home_pay', 'net_salary'],
  date_of_birth: ['dob', 'birth_date', 'birthdate', 'born'],
  policy_number: ['policy_no', 'policy_num', 'policy_id', 'policy'],
  premium: ['total_premium', 'annual_premium', 'policy_premium'],
  loan_amount: ['requested_amount', 'amount_requested', 'loan_request'],
  named_insured: ['insured', 'insured_name', 'name_of_insured'],
  employer_identification_number: ['ein', 'tax_id', 'federal_tax_id', 'fein'],
  taxable_income: ['taxable_income_amount'],
  monthly_rent: ['rent', 'base_rent', 'contract_rent', 'current_rent'],
  policy_year: ['year', 'policy_period_year'],
  claims: ['claim_count', 'number_of_claims', 'claims_count'],
  incurred: ['total_incurred', 'incurred_amount', 'incurred_losses'],
  years_in_business: ['time_in_business', 'years_established'],
}

/** A workspace's edits of the table (tenant settings `label_synonyms`). */
export type SynonymEdits = Readonly<Record<string, readonly string[]>>

/**
 * The synonym table in force for a workspace: the built-in groups with its edits applied, as a map
 * from every name to the other names of its group (in the group's order, its key first).
 */
export function synonymTable(edits: SynonymEdits = {}): SynonymTable {
  const groups: Record<string, readonly string[]> = { ...BUILT_IN_SYNONYMS }
  for (const [key, names] of Object.entries(edits)) {
    if (names.length === 0) delete groups[key]
    else groups[key] = names
  }
  const table = new Map<string, string[]>()
  for (const [key, names] of Object.entries(groups)) {
    const members = [key, ...names.filter((n) => n !== key)]
    for (const m of members) {
      const others = members.filter((x) => x !== m)
      table.set(m, [...new Set([...(table.get(m) ?? []), ...others])])
    }
  }
  return table
}

/** The rule a workspace's edits break (a pointer below `/label_synonyms` and a message), or null. */
export function synonymEditsProblem(edits: Record<string, unknown>): { pointer: string; message: string } | null {
  const name = /^[a-z0-9_]{1,64}$/
  const keys = Object.keys(edits)
  if (keys.length > 200) return { pointer: '/label_synonyms', message: `must have at most 200 groups, got ${keys.length}` }
  for (const key of keys) {
    const esc = key.replaceAll('~', '~0').replaceAll('/', '~1')
    if (!name.test(key)) return { pointer: `/label_synonyms/${esc}`, message: 'a group key must be a snake_case name (a-z, 0-9, _), at most 64 characters' }
    const names = edits[key]
    if (!Array.isArray(names) || names.length > 30) return { pointer: `/label_synonyms/${esc}`, message: 'must be a list of at most 30 names' }
    const bad = names.findIndex((n) => typeof n !== 'string' || !name.test(n))
    if (bad >= 0) return { pointer: `/label_synonyms/${esc}/${bad}`, message: 'must be a snake_case name (a-z, 0-9, _), at most 64 characters' }
  }
  return null
}
