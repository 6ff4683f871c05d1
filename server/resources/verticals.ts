/**
 * The vertical catalog, shipped as data: a bounded list, no cursor; exactly one entry has no key,
 * and that entry is what an absent `vertical` means.
 */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps'
import { accessControl, ANY_ROLE } from '../auth/access'
import { Vertical } from '../../schemas/vertical'
import { responses } from '../http/docs'

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

/** GET /v1/verticals. */
export function verticalRoutes(deps: AppDeps) {
  return new Elysia({ name: 'verticals' })
    .use(accessControl(deps.authenticate))
    .get('/v1/verticals', () => ({ items: VERTICALS, next_cursor: null }), {
      access: { roles: ANY_ROLE, scopes: ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write'] },
      detail: { summary: 'The vertical catalog (bounded, no cursor)', tags: ['Verticals'], responses: responses({ 200: t.Object({ items: t.Array(Vertical), next_cursor: t.Null() }) }) },
    })
}
