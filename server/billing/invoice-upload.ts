/**
 * An invoice as a CSV file through the two-phase upload: start (a reconciliation awaiting its
 * upload and a presigned PUT URL, the same one as for documents), PUT the bytes to the shared upload
 * route, complete (the reconciliation task is queued). The task reads the file in its `prepare`
 * step. CSV: a header row naming the columns `kind`, `meter`, `quantity`, `unit_price`, `amount`,
 * `description` (any order; `meter` and `quantity` for usage lines, `amount` for a
 * `minimum_commitment` line; unknown columns are ignored).
 */
import { parse } from 'csv-parse/sync'
import type { Tx } from '../db/connect'
import type { AppDeps } from '../deps'
import { ProblemError, problems } from '../http/problem'
import { enqueue } from '../../jobs/define'
import { readAll, UPLOAD_URL_TTL_SECONDS } from '../storage/blob-store'
import { claimUploadIn, type UploadTargetKind } from '../documents/upload-targets'
import { tooLarge, verifyStoredBytes } from '../documents/intake'
import { DECIMAL } from './meters'
import { BillingReconciliationJob, findReconciliation, validateInvoice, type Invoice, type InvoiceLine, type ReconciliationRow } from './reconciliation'

/** The one content type of an uploaded invoice. */
export const INVOICE_CONTENT_TYPE = 'text/csv'

/** Reads invoice lines from CSV bytes; throws an Error naming the line and column that is wrong. */
export function parseInvoiceCsv(bytes: Uint8Array, currency?: string): Invoice {
  let records: Record<string, string>[]
  try {
    records = parse(Buffer.from(bytes), { columns: (h: string[]) => h.map((c) => c.trim().toLowerCase()), skip_empty_lines: true, trim: true, bom: true })
  } catch (e) {
    throw new Error(`the invoice CSV could not be read: ${(e as Error).message.split('\n')[0]}`)
  }
  const lines = records.map((r, i): InvoiceLine => {
    const at = `line ${i + 2}`
    const kind = r.kind || 'usage'
    if (kind !== 'usage' && kind !== 'minimum_commitment') throw new Error(`${at}: kind must be usage or minimum_commitment`)
    const line: InvoiceLine = { kind }
    if (r.meter) line.meter = r.meter
    if (r.quantity) {
      if (!/^\d{1,15}$/.test(r.quantity)) throw new Error(`${at}: quantity must be a whole number`)
      line.quantity = Number(r.quantity)
    }
    for (const col of ['unit_price', 'amount'] as const) {
      if (!r[col]) continue
      if (!DECIMAL.test(r[col]!)) throw new Error(`${at}: ${col} must be a decimal like 0.25`)
      line[col] = r[col]
    }
    if (r.description) line.description = r.description.slice(0, 500)
    return line
  })
  const invoice: Invoice = { ...(currency ? { currency } : {}), lines }
  try { validateInvoice(invoice) } catch (e) { throw new Error(`the invoice CSV: ${(e as ProblemError).detail}`) }
  return invoice
}

/** What starting an uploaded invoice takes. */
export interface InvoiceUploadInput { filename: string; size_bytes: number; checksum_sha256?: string; currency?: string }

/** Creates a reconciliation awaiting its CSV and returns it with the presigned upload. */
export async function startInvoiceUpload(tx: Tx, deps: Pick<AppDeps, 'blobs' | 'config'>, tenantId: string, period: string, upload: InvoiceUploadInput, actor: unknown) {
  if (upload.size_bytes > deps.config.maxUploadBytes) throw tooLarge(deps.config.maxUploadBytes)
  if (/[\u0000-\u001f\u007f/\\]/.test(upload.filename) || upload.filename.trim() === '') throw problems.rule('invoice_upload/filename must be a file name without path separators or control characters.')
  const id = Bun.randomUUIDv7()
  const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + UPLOAD_URL_TTL_SECONDS * 1000)
  const sha256 = upload.checksum_sha256?.toLowerCase()
  const presigned = await deps.blobs.presignUpload({ tenantId, documentId: id, contentType: INVOICE_CONTENT_TYPE, size: upload.size_bytes, sha256, expiresAt })
  const [row] = await tx<ReconciliationRow[]>`
    insert into billing_reconciliations (tenant_id, id, period, status, invoice, invoice_currency, filename, content_type, size_bytes, checksum_sha256, blob_key, created_by)
    values (${tenantId}, ${id}, ${period}, 'awaiting_upload', null, ${upload.currency ?? null}, ${upload.filename}, ${INVOICE_CONTENT_TYPE}, ${upload.size_bytes},
            ${sha256 ?? null}, ${presigned.key ?? null}, ${tx.json(actor as never)})
    returning *`
  return { row: row!, upload: { method: presigned.method, url: presigned.url, headers: presigned.headers, expires_at: expiresAt.toISOString() } }
}

/**
 * Completes an uploaded invoice: checks bytes that reached the store directly (S3), queues the
 * task. 409 when the bytes are not there yet or the reconciliation is not awaiting them.
 */
export async function completeInvoiceUpload(deps: Pick<AppDeps, 'sql' | 'blobs' | 'config'>, tenantId: string, id: string): Promise<ReconciliationRow | null> {
  const current = await findReconciliation(deps.sql, tenantId, id)
  if (!current) return null
  if (current.status !== 'awaiting_upload') throw problems.conflict(`The reconciliation is ${current.status}; only one awaiting its invoice upload can be completed.`)
  if (!current.bytes_verified) await verifyStoredBytes(deps.blobs, { ...current, size_bytes: Number(current.size_bytes) } as never, deps.config.maxUploadBytes)
  return deps.sql.begin(async (tx) => {
    const [row] = await tx<ReconciliationRow[]>`
      update billing_reconciliations set status = 'queued', bytes_verified = true, uploaded_at = coalesce(uploaded_at, now()), updated_at = now()
      where tenant_id = ${tenantId} and id = ${id} and status = 'awaiting_upload' and blob_key is not null
      returning *`
    if (!row) throw problems.conflict('The invoice bytes have not been uploaded yet; PUT them to the upload URL first.')
    await enqueue(tx, BillingReconciliationJob, { tenantId, payload: { reconciliationId: id } })
    return row
  })
}

/** Reads the uploaded CSV of a reconciliation (the job's prepare step); a bad file is an error to end with. */
export async function readUploadedInvoice(row: ReconciliationRow, deps: Pick<AppDeps, 'blobs'>): Promise<Invoice | { error: string }> {
  const bytes = row.blob_key ? await readAll(deps.blobs, row.blob_key) : null
  if (!bytes) throw new Error('the invoice bytes are not in the blob store')
  try {
    return parseInvoiceCsv(bytes, row.invoice_currency ?? undefined)
  } catch (e) {
    return { error: (e as Error).message.slice(0, 300) }
  }
}

/** Uploaded invoices as targets of the shared upload route. */
export const invoiceUploadTarget: UploadTargetKind = {
  name: 'billing_invoice',
  async find(sql, tenantId, id) {
    const row = await findReconciliation(sql, tenantId, id)
    return row && row.filename !== null ? { ...row, status: row.status } : null
  },
  claim: claimUploadIn('billing_reconciliations'),
}

