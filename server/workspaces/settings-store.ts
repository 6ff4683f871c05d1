/**
 * The store of tenant settings: owns the `tenant_settings` table, one full-replace document per
 * workspace. A workspace that never saved any reads the defaults.
 */
import type { Static } from '@sinclair/typebox'
import type { Sql, Tx } from '../db/connect'
import type { TenantSettings } from '../../schemas/tenant-settings'

/** Days a delivery record is kept when the setting is cleared (also in svc_notification_retention_days). */
export const NOTIFICATION_RETENTION_DEFAULT_DAYS = 30

/** The settings document in force. */
export type TenantSettingsDoc = Static<typeof TenantSettings>

/** The stored values of a settings document (what validation hands the store). */
export interface SettingsRow {
  embed_allowed_origins: string[]
  time_zone: string | null
  notification_retention_days: number | null
  break_glass_require_tenant_approval: boolean
  vertical: string | null
  /** The workspace's label synonym groups (server/evaluation/synonyms.ts), or null. */
  label_synonyms: Record<string, string[]> | null
  /** ISO 4217 code and BCP 47 locale the findings report formats amounts with, or null. */
  currency: string | null
  number_locale: string | null
}

const render = (row: SettingsRow | undefined): TenantSettingsDoc => ({
  embed_allowed_origins: row?.embed_allowed_origins ?? [],
  time_zone: row?.time_zone ?? 'UTC',
  notification_retention_days: row?.notification_retention_days ?? NOTIFICATION_RETENTION_DEFAULT_DAYS,
  break_glass_require_tenant_approval: row?.break_glass_require_tenant_approval ?? false,
  ...(row?.vertical ? { vertical: row.vertical } : {}),
  ...(row?.label_synonyms ? { label_synonyms: row.label_synonyms } : {}),
  ...(row?.currency ? { currency: row.currency } : {}),
  ...(row?.number_locale ? { number_locale: row.number_locale } : {}),
})

/** The settings in force for a workspace (defaults when it never saved any). */
export async function readTenantSettings(sql: Tx, tenantId: string): Promise<TenantSettingsDoc> {
  const [row] = await sql<SettingsRow[]>`
    select embed_allowed_origins, time_zone, notification_retention_days, break_glass_require_tenant_approval, vertical,
      label_synonyms, currency, number_locale
    from tenant_settings where tenant_id = ${tenantId}`
  return render(row)
}

/**
 * The vertical a new case or question set is bound to: the one its body names (null names the
 * shipped default), else the workspace's default binding as it stands now (copied, not followed
 * later). Null means the shipped default.
 */
export async function verticalForNew(sql: Tx, tenantId: string, named: string | null | undefined): Promise<string | null> {
  if (named !== undefined) return named
  const [row] = await sql<{ vertical: string | null }[]>`select vertical from tenant_settings where tenant_id = ${tenantId}`
  return row?.vertical ?? null
}

/**
 * verticalForNew as an SQL expression, for a create that is one statement: `named` when the
 * request gave one (null included), else the workspace's default read in that statement.
 */
export function verticalForNewSql(sql: Sql, tenantId: string, named: string | null | undefined) {
  return named !== undefined ? sql`${named}::text` : sql`(select vertical from tenant_settings where tenant_id = ${tenantId})`
}

/** Replaces a workspace's settings with `next` (already validated) and returns the document now in force. */
export async function writeTenantSettings(tx: Tx, tenantId: string, next: SettingsRow): Promise<TenantSettingsDoc> {
  const [row] = await tx<SettingsRow[]>`
    insert into tenant_settings (tenant_id, embed_allowed_origins, time_zone, notification_retention_days, break_glass_require_tenant_approval, vertical,
      label_synonyms, currency, number_locale)
    values (${tenantId}, ${next.embed_allowed_origins}, ${next.time_zone}, ${next.notification_retention_days}, ${next.break_glass_require_tenant_approval}, ${next.vertical},
      ${next.label_synonyms === null ? null : tx.json(next.label_synonyms)}, ${next.currency}, ${next.number_locale})
    on conflict (tenant_id) do update set
      embed_allowed_origins = excluded.embed_allowed_origins,
      time_zone = excluded.time_zone,
      notification_retention_days = excluded.notification_retention_days,
      break_glass_require_tenant_approval = excluded.break_glass_require_tenant_approval,
      vertical = excluded.vertical,
      label_synonyms = excluded.label_synonyms,
      currency = excluded.currency,
      number_locale = excluded.number_locale,
      updated_at = now()
    returning embed_allowed_origins, time_zone, notification_retention_days, break_glass_require_tenant_approval, vertical, label_synonyms, currency, number_locale`
  return render(row)
}

/** The time zone a workspace saved, or null when it has none (callers pick their default). */
export async function storedTimeZone(sql: Tx, tenantId: string): Promise<string | null> {
  const [row] = await sql<{ time_zone: string | null }[]>`select time_zone from tenant_settings where tenant_id = ${tenantId}`
  return row?.time_zone ?? null
}
