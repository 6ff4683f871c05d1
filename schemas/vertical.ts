/**
 * Vertical catalog entries.
 */
import { t } from 'elysia'
import { named } from './common'

/** One catalog entry; the default entry has no key. */
export const Vertical = named('Vertical', t.Object({
  id: t.String(),
  key: t.Optional(t.String()),
  label: t.String(),
  description: t.String(),
}))
