/**
 * The file-type registry: every content type the service accepts for a document, its extensions,
 * the ingestion adapter that reads it (absent: recognised but stored as `unsupported_pending`), and
 * what its bytes must sniff as. Shipped as data; `GET /v1/file-types` lists it.
 */
import { fileTypeFromBuffer } from 'file-type'
import { tiffHeaderAgrees } from './adapters/tiff-header'

/** The adapters the ingestion job knows. */
export type AdapterName = 'text' | 'markdown' | 'csv' | 'html' | 'pdf' | 'docx' | 'image' | 'spreadsheet' | 'email' | 'msg' | 'doc' | 'rtf' | 'odt' | 'zip'

/** One recognised content type. */
export interface FileType {
  contentType: string
  label: string
  extensions: readonly string[]
  /** The adapter that extracts its text; absent when recognised without one. */
  adapter?: AdapterName
  /** Why a recognised type without an adapter is not read (the detail of its `unsupported_pending`). */
  unsupportedReason?: string
  /**
   * What the leading bytes must sniff as: `text` (no sniffable binary signature and no NUL byte),
   * or the MIME types a signature detector may report for it.
   */
  sniff: 'text' | readonly string[]
}

const OLE = 'application/x-cfb'
const ZIP = 'application/zip' // a package whose manifest lies past the sniffed head (LibreOffice writes it last)
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
const XLSM = 'application/vnd.ms-excel.sheet.macroenabled.12'

/** Every recognised content type, adapters first. */
export const FILE_TYPES: readonly FileType[] = [
  { contentType: 'text/plain', label: 'Plain text', extensions: ['txt', 'text'], adapter: 'text', sniff: 'text' },
  { contentType: 'text/markdown', label: 'Markdown', extensions: ['md', 'markdown'], adapter: 'markdown', sniff: 'text' },
  { contentType: 'text/csv', label: 'Comma-separated values', extensions: ['csv'], adapter: 'csv', sniff: 'text' },
  // Read by the CSV adapter, which takes each file's own separator (a tab here, as it finds it).
  { contentType: 'text/tab-separated-values', label: 'Tab-separated values', extensions: ['tsv', 'tab'], adapter: 'csv', sniff: 'text' },
  { contentType: 'text/html', label: 'HTML (text only)', extensions: ['html', 'htm'], adapter: 'html', sniff: 'text' },
  { contentType: 'message/rfc822', label: 'Email message (EML)', extensions: ['eml'], adapter: 'email', sniff: 'text' },
  { contentType: 'application/pdf', label: 'PDF', extensions: ['pdf'], adapter: 'pdf', sniff: ['application/pdf'] },
  {
    contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    label: 'Word document (DOCX)', extensions: ['docx'], adapter: 'docx',
    sniff: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  },
  { contentType: 'image/png', label: 'PNG image', extensions: ['png'], adapter: 'image', sniff: ['image/png'] },
  { contentType: 'image/jpeg', label: 'JPEG image', extensions: ['jpg', 'jpeg'], adapter: 'image', sniff: ['image/jpeg'] },
  { contentType: 'image/tiff', label: 'TIFF image', extensions: ['tif', 'tiff'], adapter: 'image', sniff: ['image/tiff'] },
  { contentType: 'image/webp', label: 'WebP image', extensions: ['webp'], adapter: 'image', sniff: ['image/webp'] },
  { contentType: 'image/heic', label: 'HEIC/HEIF image', extensions: ['heic', 'heif'], adapter: 'image', sniff: ['image/heic', 'image/heif', 'image/heic-sequence', 'image/heif-sequence'] },
  {
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    label: 'Excel workbook (XLSX)', extensions: ['xlsx'], adapter: 'spreadsheet', sniff: [XLSX, XLSM, ZIP],
  },
  {
    contentType: 'application/vnd.ms-excel.sheet.macroenabled.12',
    label: 'Excel macro-enabled workbook (XLSM; macros never run nor kept)', extensions: ['xlsm'], adapter: 'spreadsheet', sniff: [XLSM, XLSX, ZIP],
  },
  { contentType: 'application/vnd.ms-excel', label: 'Excel 97-2003 workbook (XLS)', extensions: ['xls'], adapter: 'spreadsheet', sniff: [OLE, 'application/vnd.ms-excel'] },
  {
    contentType: 'application/vnd.oasis.opendocument.spreadsheet', label: 'OpenDocument spreadsheet (ODS)', extensions: ['ods'], adapter: 'spreadsheet',
    sniff: ['application/vnd.oasis.opendocument.spreadsheet', ZIP],
  },
  { contentType: 'application/msword', label: 'Word 97-2003 document (DOC)', extensions: ['doc'], adapter: 'doc', sniff: [OLE, 'application/msword'] },
  { contentType: 'application/rtf', label: 'Rich Text Format (RTF)', extensions: ['rtf'], adapter: 'rtf', sniff: ['application/rtf'] },
  { contentType: 'text/rtf', label: 'Rich Text Format (RTF, text/rtf)', extensions: ['rtf'], adapter: 'rtf', sniff: ['application/rtf'] },
  {
    contentType: 'application/vnd.oasis.opendocument.text', label: 'OpenDocument text (ODT)', extensions: ['odt'], adapter: 'odt',
    sniff: ['application/vnd.oasis.opendocument.text', ZIP],
  },
  {
    contentType: 'application/vnd.ms-powerpoint', label: 'PowerPoint 97-2003 presentation (PPT)', extensions: ['ppt'], sniff: [OLE, 'application/vnd.ms-powerpoint'],
    unsupportedReason: 'PowerPoint 97-2003 presentations are not read; save the presentation as PDF',
  },
  { contentType: 'application/zip', label: 'ZIP bundle (each file in it becomes a document)', extensions: ['zip'], adapter: 'zip', sniff: ['application/zip'] },
  { contentType: 'application/vnd.ms-outlook', label: 'Outlook message (MSG)', extensions: ['msg'], adapter: 'msg', sniff: [OLE, 'application/vnd.ms-outlook'] },
]

const byType = new Map(FILE_TYPES.map((f) => [f.contentType, f]))

/** The media type of a Content-Type value: lower case, parameters dropped ("Text/Plain; charset=x" -> "text/plain"). */
export function essenceOf(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase()
}

/** The `charset` parameter of a Content-Type value, lower case, or undefined ("text/plain; charset=\"Shift_JIS\"" -> "shift_jis"). */
export function charsetOf(contentType: string): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)
  return m ? m[1]!.toLowerCase() : undefined
}

/**
 * The content type a document keeps: the registry's, plus the declared `charset` parameter for
 * text types (the text adapters decode with it; `text/plain; charset=shift_jis`).
 */
export function storedContentType(type: FileType, declared: string): string {
  const charset = type.sniff === 'text' ? charsetOf(declared) : undefined
  return charset && /^[a-z0-9._:-]{1,40}$/.test(charset) ? `${type.contentType}; charset=${charset}` : type.contentType
}

/** The registry entry of a content type (parameters ignored), or undefined when not recognised. */
export function findFileType(contentType: string): FileType | undefined {
  return byType.get(essenceOf(contentType))
}

/** What common files that are no document are (found inside emails and bundles), for the detail of their `unsupported_pending`. */
const KNOWN_UNREAD: Record<string, string> = {
  'application/pkcs7-signature': 'an S/MIME signature of the email, not a document',
  'application/x-pkcs7-signature': 'an S/MIME signature of the email, not a document',
  'application/pgp-signature': 'a PGP signature of the email, not a document',
  'message/delivery-status': 'a delivery status report (a bounce), not a document',
  'message/disposition-notification': 'a read receipt, not a document',
  'text/calendar': 'a calendar invitation, not a document',
  'text/vcard': 'a contact card, not a document',
  'text/x-vcard': 'a contact card, not a document',
  'image/gif': 'a GIF image (usually a logo or signature picture); GIF is not read: send it as PNG or PDF if it holds text',
  'image/bmp': 'a BMP image; BMP is not read: send it as PNG or PDF',
  'image/svg+xml': 'an SVG drawing; drawings are not read',
  'application/octet-stream': 'a file of unknown type (application/octet-stream); its bytes were kept but not read',
}

/**
 * Why a document of `contentType` is not read: its registry entry's reason, else what the file
 * is when it is a common non-document (a signature, a bounce, a GIF), else its type named.
 */
export function unreadReason(contentType: string): string {
  const essence = essenceOf(contentType)
  const known = findFileType(essence)
  if (known) return known.unsupportedReason ?? `${known.label} is not read`
  const family = essence.split('/')[0]
  return KNOWN_UNREAD[essence]
    ?? (family === 'audio' || family === 'video' ? `a ${family} file (${essence}); sound and video are not read`
      : `a file of type ${essence}, which this service does not read`)
}

/** How many leading bytes the sniffer needs. */
export const SNIFF_BYTES = 4100

/** Text-based formats a signature detector may report for a file that is still text. */
const TEXTUAL_SIGNATURES = new Set(['application/xml', 'text/calendar', 'text/vcard', 'text/vtt', 'application/rtf'])

/**
 * What the leading bytes are. A TIFF is told by its header and where its first directory is: a
 * signature detector given only the head cannot see a directory written at the end of the file,
 * as scanners and libtiff often write it, so a header whose directory offset lies inside the file
 * (`size` bytes) is a TIFF.
 */
async function sniff(head: Uint8Array, size: number): Promise<string | undefined> {
  if (head.length === 0) return undefined
  const detected = (await fileTypeFromBuffer(head))?.mime
  if (detected === undefined && tiffHeaderAgrees(head, size)) return 'image/tiff'
  return detected
}

/**
 * Whether the leading bytes of an upload of `size` bytes agree with its declared type. Returns the
 * sniffed type that contradicts the declaration, or null when they agree. Text types must carry no
 * binary signature and no NUL byte (unless a UTF-16 byte-order mark starts them); binary types must
 * carry one of their signatures.
 */
export async function sniffContradiction(type: FileType, head: Uint8Array, size: number = head.length): Promise<string | null> {
  const sniffed = await sniff(head, size)
  if (type.sniff === 'text') {
    if (sniffed !== undefined && !TEXTUAL_SIGNATURES.has(sniffed)) return sniffed
    // UTF-16 text is half NUL bytes: its byte-order mark says it is text.
    const utf16 = (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)
    if (head.includes(0) && !utf16) return 'application/octet-stream'
    return null
  }
  if (sniffed !== undefined && type.sniff.includes(sniffed)) return null
  return sniffed ?? 'unrecognised bytes'
}

/** The API shape of a registry entry. */
export function renderFileType(f: FileType) {
  return {
    id: f.contentType,
    content_type: f.contentType,
    label: f.label,
    extensions: [...f.extensions],
    has_ingestion_adapter: f.adapter !== undefined,
  }
}
