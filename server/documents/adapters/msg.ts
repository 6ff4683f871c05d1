/**
 * Outlook messages (MSG, a compound file), read with `@kenjiuno/msgreader`: the same blocks as an
 * EML (subject, headers, body) and every attachment handed back to become a document of the case;
 * an embedded Outlook message is kept as an MSG document of its own, read in turn. The body is the
 * plain text, else the HTML (as a string property, or as bytes in PR_HTML as newer Outlook writes
 * it, decoded in the message's internet code page). Non-Unicode (PT_STRING8) properties are decoded
 * in the message's code page (PR_MESSAGE_CODEPAGE / PR_INTERNET_CPID: CP932, windows-1251, ...).
 */
import MsgReader from '@kenjiuno/msgreader'
import { keepAttachments, messageSegments } from './email'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter, type Attachment } from './types'

interface MsgFields {
  subject?: string; senderName?: string; senderEmail?: string; body?: string; bodyHtml?: string; html?: Uint8Array
  messageCodepage?: number; internetCodepage?: number
  messageDeliveryTime?: string; clientSubmitTime?: string; error?: string
  recipients?: { name?: string; email?: string; smtpAddress?: string; recipType?: string }[]
  attachments?: (MsgFields & { fileName?: string; fileNameShort?: string; attachMimeTag?: string; innerMsgContent?: true })[]
}

/** The charset an HTML document declares in its first bytes (`<meta charset>` or http-equiv), when TextDecoder knows it. */
function htmlCharset(html: Uint8Array): string | undefined {
  const head = new TextDecoder('latin1').decode(html.subarray(0, 2048))
  const label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1]
  try {
    return label ? new TextDecoder(label).encoding : undefined
  } catch {
    return undefined
  }
}

const person = (name?: string, email?: string) => (name && email && name !== email ? `${name} <${email}>` : email || name || '')

/** WHATWG encoding labels of Windows code pages (TextDecoder knows these; the single-byte windows-125x by their own names). */
const CODE_PAGES: Record<number, string> = {
  932: 'shift_jis', 936: 'gbk', 949: 'euc-kr', 950: 'big5', 20127: 'utf-8', 20866: 'koi8-r', 21866: 'koi8-u', 28591: 'iso-8859-1',
  28592: 'iso-8859-2', 28595: 'iso-8859-5', 28597: 'iso-8859-7', 28605: 'iso-8859-15', 50220: 'iso-2022-jp', 51932: 'euc-jp', 54936: 'gb18030', 65001: 'utf-8', 874: 'windows-874',
}

/** The encoding label of a Windows code page, or undefined when TextDecoder does not know it. */
export function codePageLabel(cp: number | undefined): string | undefined {
  if (!cp) return undefined
  const label = CODE_PAGES[cp] ?? (cp >= 1250 && cp <= 1258 ? `windows-${cp}` : undefined)
  try {
    return label && new TextDecoder(label).encoding ? label : undefined
  } catch {
    return undefined
  }
}

/** Reads the message's fields, PT_STRING8 properties decoded in `ansiEncoding` when given. */
function open(bytes: Uint8Array, ansiEncoding?: string): { reader: MsgReader; data: MsgFields } {
  const reader = new MsgReader(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  if (ansiEncoding) reader.parserConfig = { ...reader.parserConfig, ansiEncoding }
  const data = reader.getFileData() as MsgFields
  if (data.error) throw new Error(data.error)
  return { reader, data }
}

/** The MSG adapter. */
export const readMsg: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  let reader: MsgReader
  let data: MsgFields
  try {
    ;({ reader, data } = open(bytes))
    // A message in a legacy code page: read again with its non-Unicode strings decoded in it.
    const cp = data.messageCodepage ?? data.internetCodepage
    if (cp && cp !== 65001 && cp !== 1200 && codePageLabel(cp)) ({ reader, data } = open(bytes, String(cp)))
  } catch {
    throw new UnreadableDocument('the Outlook message could not be parsed')
  }
  const recipients = (kind: string | undefined) => (data.recipients ?? []).filter((r) => (r.recipType ?? 'to') === kind).map((r) => person(r.name, r.smtpAddress ?? r.email)).join(', ')
  const segments = messageSegments({
    subject: data.subject,
    from: person(data.senderName, data.senderEmail),
    to: recipients('to'),
    cc: recipients('cc'),
    date: data.clientSubmitTime ?? data.messageDeliveryTime,
    text: data.body,
    html: data.bodyHtml ?? (data.html ? new TextDecoder(codePageLabel(data.internetCodepage ?? data.messageCodepage) ?? htmlCharset(data.html) ?? 'utf-8').decode(data.html) : undefined),
  })
  const found: Attachment[] = []
  const unread: string[] = []
  for (const [i, att] of (data.attachments ?? []).entries()) {
    try {
      const a = reader.getAttachment(att as never) as { fileName?: string; content?: Uint8Array }
      if (!a.content) { unread.push(`attachment ${i + 1}`); continue }
      const embedded = att.innerMsgContent === true
      found.push({
        filename: (a.fileName || att.fileName || att.fileNameShort || `attachment-${i + 1}${embedded ? '.msg' : ''}`).trim(),
        contentType: embedded ? 'application/vnd.ms-outlook' : (att.attachMimeTag || 'application/octet-stream').toLowerCase(),
        bytes: new Uint8Array(a.content),
      })
    } catch {
      unread.push(`attachment ${i + 1}`)
    }
  }
  const { attachments, notes } = keepAttachments(found, options)
  if (unread.length) notes.push(`${unread.length} attachment${unread.length === 1 ? '' : 's'} could not be read`)
  return { pages: [{ page: 1, segments }], degraded: notes.length > 0, notes, attachments }
}
