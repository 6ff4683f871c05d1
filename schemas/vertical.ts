/**
 * The vertical catalog (shipped as data) and its entries; VerticalKey is the value a case, a question
 * set or the workspace's default binding may carry.
 */
import { t } from 'elysia'
import { STATED_ENUM, named } from './common'

/** The shipped catalog. */
export const VERTICALS = [
  { id: 'default', label: 'General underwriting', description: 'The shipped default; cases and question sets without a vertical.' },
  { id: 'mortgage', key: 'mortgage', label: 'Residential mortgage', description: 'Home loans: income, affordability, property and credit history.' },
  { id: 'commercial_lending', key: 'commercial_lending', label: 'Commercial lending', description: 'Business loans: financial statements, cash flow, collateral.' },
  { id: 'life_insurance', key: 'life_insurance', label: 'Life insurance', description: 'Life and health cover: medical disclosures and financial underwriting.' },
  { id: 'property_casualty', key: 'property_casualty', label: 'Property and casualty', description: 'Property, liability and specialty risks.' },
] as const

/** The machine values a case or question set may carry in `vertical`. */
export const VERTICAL_KEYS: readonly string[] = VERTICALS.flatMap((v) => ('key' in v ? [v.key] : []))

/** A vertical written by a request: a key of the catalog (the route refuses another, 422 at the member). */
export const VerticalKey = named('VerticalKey', t.String({
  maxLength: 64,
  [STATED_ENUM]: VERTICAL_KEYS,
  description: 'A key of GET /v1/verticals (the catalog ships with the service; a later release may add keys).',
}))

/** One catalog entry; the default entry has no key. */
export const Vertical = named('Vertical', t.Object({
  id: t.String(),
  key: t.Optional(t.String()),
  label: t.String(),
  description: t.String(),
}))
