/**
 * Documents of a case, their blocks and the file-type registry: request and response shapes.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, named, pageQuery, STATED_PATTERN } from './common'
import { InlineNotifications } from './notifications'

/** The document types found from content at ingestion (server/evaluation/document-types.ts). */
export const DOCUMENT_TYPES = ['bank_statement', 'pay_stub', 'tax_return', 'identity_document', 'rent_roll', 'loss_run', 'application_form', 'insurance_declaration', 'email', 'other'] as const

/**
 * What a given file name must match (server/documents/filenames.ts checks it, with a message naming the
 * first offending character): at least one character that is not white space, and none of the path
 * separators, Unicode Cc, Cf, Zl or Zp. A Unicode pattern: compile it with the `u` flag.
 */
export const FILENAME_PATTERN = '^[^/\\\\\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]*[^\\s/\\\\\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}][^/\\\\\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}]*$'

/** Path parameters naming a document of a case. */
export const DocumentParams = t.Object({ scenarioId: Uuid, documentId: Uuid })

/** POST /v1/scenarios/{id}/documents body: what will be uploaded. */
export const DocumentCreate = t.Object({
  filename: t.String({ minLength: 1, maxLength: 255, [STATED_PATTERN]: FILENAME_PATTERN, description: 'The file name shown to readers and in Content-Disposition; not blank, no path separators, control characters (C0, C1: Unicode Cc), bidirectional controls or other invisible formatting characters (Cf), line or paragraph separators (Zl, Zp) (422 at /filename). The pattern uses Unicode property escapes (ECMA-262 with the u flag, as JSON Schema 2020-12 validators compile it).' }),
  content_type: t.String({ minLength: 1, maxLength: 255, description: 'A content type of GET /v1/file-types (415 otherwise).' }),
  size_bytes: Int({ minimum: 1, description: 'The exact length of the bytes to be PUT (413 above the upload limit).' }),
  checksum_sha256: t.Optional(t.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'Hex SHA-256 of the bytes; a PUT with other bytes is refused with 422.' })),
})

const statuses = ['awaiting_upload', 'processing', 'ready', 'ready_degraded', 'failed', 'unsupported_pending'] as const

/** How the pages of a processed file ended: every page has exactly one outcome. */
export const PageSummary = named('PageSummary', t.Object({
  total: Int({ description: 'Pages of the file (1 for formats without pages), read or not.' }),
  text_layer: Int({ description: 'Pages read from their own text.' }),
  ocr: Int({ description: 'Pages read by optical character recognition.' }),
  blank: Int({ description: 'Pages genuinely empty; they do not degrade the file.' }),
  unreadable: Int({ description: 'Pages that held something and gave no text; error_detail names them and why.' }),
  image_no_text: Int({ description: 'Pages that are a picture in which OCR found no legible text (a photo, a logo): kept, never counted as read text; the document is ready_degraded with error_detail starting "image without text".' }),
  low_confidence_blocks: Int({ description: 'OCR blocks under 60 confidence: kept, counted here.' }),
  text_encoding: t.Optional(t.Object({
    charset: t.String({ description: 'The character encoding the text was read in (utf-8, shift_jis, windows-1252, ...).' }),
    source: t.Union([t.Literal('declared'), t.Literal('bom'), t.Literal('detected'), t.Literal('default')], { description: 'What chose it: the charset parameter of the declared content type, a byte-order mark, the detector (chardet), or UTF-8 by default (the bytes are valid UTF-8, or nothing better was found).' }),
  }, { description: 'Text formats (plain text, Markdown, CSV): the encoding read.' })),
}, { description: 'Once processed (files processed before per-page accounting have none).' }))

/** One arithmetic check of a document and its result. */
export const DocumentCheck = named('DocumentCheck', t.Object({
  name: t.Union([t.Literal('balance_reconciles'), t.Literal('running_balance'), t.Literal('rows_add_to_total'), t.Literal('net_pay')]),
  passed: t.Boolean(),
  rule: t.String({ description: 'The arithmetic checked, in words.' }),
  expected: t.String({ description: 'What the other figures give (exact decimal).' }),
  found: t.String({ description: 'What the document states (exact decimal).' }),
  difference: t.String({ description: 'found - expected.' }),
  page: Int(),
  block_id: Uuid,
  detail: t.String(),
}))

/** A document as every endpoint returns it. */
export const Document = named('Document', t.Object({
  id: Uuid,
  scenario_id: Uuid,
  parent_document_id: t.Optional(Uuid),
  filename: t.String(),
  content_type: t.String(),
  size_bytes: Int(),
  checksum_sha256: t.Optional(t.String()),
  status: t.Union(statuses.map((s) => t.Literal(s)), { description: 'awaiting_upload -> processing -> ready | ready_degraded | failed | unsupported_pending' }),
  page_count: t.Optional(Int({ description: 'Pages read (1 for formats without pages); once processed.' })),
  block_count: t.Optional(Int({ description: 'Blocks the text was cut into; once processed.' })),
  pages: t.Optional(PageSummary),
  error_code: t.Optional(t.Union([t.Literal('document_ingestion_failed'), t.Literal('document_password_protected'), t.Literal('unsupported_pending')], { description: 'Why the document is failed or unsupported_pending: document_password_protected when the file needs a password to be opened (remove it and upload again), document_ingestion_failed otherwise. Its task notification says document_ingestion_failed either way.' })),
  error_detail: t.Optional(t.String({ description: 'Why ingestion failed or is degraded; never document content.' })),
  uploaded_at: t.Optional(Timestamp),
  processed_at: t.Optional(Timestamp),
  document_type: t.Optional(t.Union(DOCUMENT_TYPES.map((d) => t.Literal(d)), { description: 'What the document is, found from its content at ingestion (never its file name); usable as a fact namespace (docs/evaluation.md). Once processed.' })),
  document_type_confidence: t.Optional(t.Number({ minimum: 0, maximum: 1, description: 'How sure the type rules (or the model, when document_type_source is model) are (0..1).' })),
  document_type_source: t.Optional(t.Union([t.Literal('rules'), t.Literal('model')], { description: 'Where document_type came from: the deterministic rules, or the configured model (SVC_MODEL_URL) when the rules typed the document other or below 0.6 confidence (docs/evaluation.md).' })),
  document_type_note: t.Optional(t.String({ description: "Why the rules' type stands although the model was asked (a vendor error, a timeout, a reply naming no known type, the cost budget reached); never document content." })),
  checks: t.Optional(t.Array(DocumentCheck, { description: 'The arithmetic checks its type allows, each with its result; an answer from a document failing one carries a note and a lowered confidence.' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** The upload instructions of a new document. */
export const UploadInstructions = named('UploadInstructions', t.Object({
  method: t.Literal('PUT'),
  url: t.String({ description: 'Signed URL; needs no Authorization header; valid 15 minutes; bound to this document, its size and content type.' }),
  headers: t.Record(t.String(), t.String(), { description: 'Headers the PUT must carry.' }),
  expires_at: Timestamp,
}))

/** The 201 of upload start: the document plus its upload instructions. */
export const DocumentCreated = t.Composite([Document, t.Object({ upload: UploadInstructions })])

/** POST .../complete and .../reingest body. */
export const DocumentComplete = t.Object({ notifications: InlineNotifications })

/** One block of a processed document. */
export const Block = named('Block', t.Object({
  id: Uuid,
  document_id: Uuid,
  position: Int({ description: '0-based reading order.' }),
  page: Int({ description: '1-based page.' }),
  kind: t.Union([t.Literal('paragraph'), t.Literal('heading'), t.Literal('table_row'), t.Literal('page_text')]),
  text: t.String(),
  char_start: Int({ description: 'Start offset (code points) in the document text: blocks joined by a blank line, pages by a form feed.' }),
  char_end: Int({ description: 'End offset, exclusive.' }),
  source: t.Union([t.Literal('text'), t.Literal('ocr')], { description: 'text: the file\'s own text; ocr: recognised from an image of the page.' }),
  confidence: t.Optional(Int({ minimum: 0, maximum: 100, description: 'Mean OCR word confidence of an ocr block.' })),
  cells: t.Optional(t.Array(t.Object({ column: t.String(), value: t.String() }), { description: 'A table row of a CSV or spreadsheet: each cell by the name its column has in the header row; values as text (ISO dates, exact decimals, formulas as their cached results).' })),
  sheet: t.Optional(t.String({ description: 'The sheet of a spreadsheet block (its page is the sheet\'s position).' })),
}))

/** GET .../documents query. */
export const DocumentListQuery = Type.Object({
  ...pageQuery,
  status: Type.Optional(Type.Union(statuses.map((s) => Type.Literal(s)))),
})

/** GET .../blocks query. */
export const BlockListQuery = Type.Object({
  ...pageQuery,
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'Only the blocks of this page.' })),
})

/** One entry of the file-type registry. */
export const FileTypeEntry = named('FileType', t.Object({
  id: t.String({ description: 'The content type.' }),
  content_type: t.String(),
  label: t.String(),
  extensions: t.Array(t.String()),
  has_ingestion_adapter: t.Boolean({ description: 'False: accepted and stored, then unsupported_pending.' }),
}))
