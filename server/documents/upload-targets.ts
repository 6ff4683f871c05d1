/**
 * What a presigned upload URL can fill: a case document, or another resource with the same upload
 * lifecycle (guideline sources of question groups, uploaded invoices). The kinds are wired in
 * server/wiring.ts (AppDeps.uploadTargets); the upload route looks the id of its URL up among them, so every kind shares one signed URL, one byte check and one store; each kind says how to
 * find its row and how to claim the stored bytes for it.
 */
import type { Tx } from '../db/connect'
import { findDocumentById } from './store'

/** The columns of an uploadable row the upload route reads. */
export interface UploadableRow {
  tenant_id: string
  id: string
  size_bytes: string | number
  checksum_sha256: string | null
  content_type: string
  status: string
  blob_key: string | null
}

/** One kind of upload target. */
export interface UploadTargetKind {
  name: string
  /** The row of an id in a workspace, or null. */
  find(sql: Tx, tenantId: string, id: string): Promise<UploadableRow | null>
  /** Records verified bytes under `key` while the row still awaits them; false when it no longer does. */
  claim(sql: Tx, row: UploadableRow, key: string): Promise<boolean>
}

/** The tables of upload targets: each has the same upload columns (blob_key, bytes_verified, uploaded_at, status). */
export type UploadTable = 'documents' | 'guidelines' | 'billing_reconciliations'

/**
 * The claim of an upload target kind whose rows live in `table` (the owner's table; every owner
 * claims the same way): records verified bytes under the key while the row still awaits them.
 */
export function claimUploadIn(table: UploadTable): UploadTargetKind['claim'] {
  return async (sql, row, key) => {
    const claimed = await sql`
      update ${sql(table)} set blob_key = ${key}, bytes_verified = true, uploaded_at = now(), updated_at = now()
      where tenant_id = ${row.tenant_id} and id = ${row.id} and status = 'awaiting_upload' and blob_key is null
      returning id`
    return claimed.length > 0
  }
}

/** Case documents. */
export const documentUploadTarget: UploadTargetKind = {
  name: 'document',
  find: (sql, tenantId, id) => findDocumentById(sql, tenantId, id),
  claim: claimUploadIn('documents'),
}

/** The row an upload URL's id names among the kinds the service was wired with, with its kind, or null. */
export async function findUploadTarget(sql: Tx, kinds: readonly UploadTargetKind[], tenantId: string, id: string): Promise<{ row: UploadableRow; kind: UploadTargetKind } | null> {
  for (const kind of kinds) {
    const row = await kind.find(sql, tenantId, id)
    if (row) return { row, kind }
  }
  return null
}
