/**
 * Vertical catalog entries.
 */
import { t } from 'elysia'

/** One catalog entry; the default entry has no key. */
export const Vertical = t.Object({
  id: t.String(),
  key: t.Optional(t.String()),
  label: t.String(),
  description: t.String(),
})
