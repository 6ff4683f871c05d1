/**
 * Outlook messages (MSG, a compound file), read with `@kenjiuno/msgreader`: the same blocks as an
 * EML (subject, headers, body) and every attachment handed back to become a document of the case;
 * an embedded Outlook message is kept as an MSG document of its own, read in turn.
 */
import MsgReader from '@kenjiuno/msgreader'
import { keepAttachments, messageSegments } from './email'
import { DEFAULT_READ_LIMITS, UnreadableDocument, type Adapter, type Attachment } from './types'

interface MsgFields {
  subject?: string; senderName?: string; senderEmail?: string; body?: string; bodyHtml?: string
  messageDeliveryTime?: string; clientSubmitTime?: string; error?: string
  recipients?: { name?: string; email?: string; smtpAddress?: string; recipType?: string }[]
  attachments?: (MsgFields & { fileName?: string; fileNameShort?: string; attachMimeTag?: string; innerMsgContent?: true })[]
}

const person = (name?: string, email?: string) => (name && email && name !== email ? `${name} <${email}>` : email || name || '')

/** The MSG adapter. */
export const readMsg: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  let reader: MsgReader
  let data: MsgFields
  try {
    reader = new MsgReader(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
    data = reader.getFileData() as MsgFields
  } catch {
    throw new UnreadableDocument('the Outlook message could not be parsed')
  }
  if (data.error) throw new UnreadableDocument('the Outlook message could not be parsed')
  const recipients = (kind: string | undefined) => (data.recipients ?? []).filter((r) => (r.recipType ?? 'to') === kind).map((r) => person(r.name, r.smtpAddress ?? r.email)).join(', ')
  const segments = messageSegments({
    subject: data.subject,
    from: person(data.senderName, data.senderEmail),
    to: recipients('to'),
    cc: recipients('cc'),
    date: data.clientSubmitTime ?? data.messageDeliveryTime,
    text: data.body,
    html: data.bodyHtml,
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
