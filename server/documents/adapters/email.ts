/**
 * Emails (EML, RFC 822/MIME), read with `postal-mime`: the headers that matter (from, to, cc,
 * date, subject) as one block of `Label: value` lines, the subject as a heading, the body (its
 * text part, or its HTML part as text) as paragraphs. Every attachment, inline images included, is
 * handed back to become a document of the same case (ingested by its own type; an attached email
 * recurses, to a bounded depth); past the attachment count or byte limits the rest is left out,
 * named in the detail.
 */
import PostalMime from 'postal-mime'
import { htmlSegments } from './html'
import { DEFAULT_READ_LIMITS, paragraphs, UnreadableDocument, type Adapter, type Attachment, type Segment } from './types'

const address = (a: { name?: string; address?: string; group?: { name?: string; address?: string }[] } | undefined): string =>
  !a ? '' : a.group ? a.group.map(address).join(', ') : a.name && a.address ? `${a.name} <${a.address}>` : a.address ?? a.name ?? ''

/** The email adapter. */
export const readEmail: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>
  try {
    // Every attached message stays an attachment: it becomes a document of its own, read in turn.
    email = await PostalMime.parse(bytes, { attachmentEncoding: 'arraybuffer', forceRfc822Attachments: true, maxRfc822NestingDepth: 0 } as never)
  } catch {
    throw new UnreadableDocument('the email could not be parsed')
  }
  const headers = [
    ['From', address(email.from as never)],
    ['To', (email.to ?? []).map((a) => address(a as never)).join(', ')],
    ['Cc', (email.cc ?? []).map((a) => address(a as never)).join(', ')],
    ['Date', email.date ? (Number.isNaN(Date.parse(email.date)) ? email.date : new Date(email.date).toISOString()) : ''],
    ['Subject', email.subject ?? ''],
  ].filter(([, v]) => v !== '')
  const segments: Segment[] = []
  if (email.subject) segments.push({ kind: 'heading', text: email.subject })
  if (headers.length) segments.push({ kind: 'paragraph', text: headers.map(([k, v]) => `${k}: ${v}`).join('\n') })
  if (email.text?.trim()) segments.push(...paragraphs(email.text))
  else if (email.html?.trim()) segments.push(...htmlSegments(email.html))

  const notes: string[] = []
  const attachments: Attachment[] = []
  const maxCount = options.maxAttachments ?? 50
  const maxBytes = options.maxAttachmentBytes ?? 50 * 1_048_576
  let total = 0
  let skippedCount = 0
  let skippedBytes = 0
  for (const [i, a] of (email.attachments ?? []).entries()) {
    const content = new Uint8Array(a.content as ArrayBuffer)
    if (attachments.length >= maxCount) { skippedCount++; continue }
    if (total + content.byteLength > maxBytes) { skippedBytes++; continue }
    total += content.byteLength
    attachments.push({
      filename: (a.filename ?? '').trim() || `attachment-${i + 1}`,
      contentType: (a.mimeType || 'application/octet-stream').toLowerCase(),
      bytes: content,
    })
  }
  if (skippedCount > 0) notes.push(`${skippedCount} attachment${skippedCount === 1 ? '' : 's'} after the first ${maxCount} ${skippedCount === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_ATTACHMENTS)`)
  if (skippedBytes > 0) notes.push(`${skippedBytes} attachment${skippedBytes === 1 ? '' : 's'} past ${Math.round(maxBytes / 1_048_576)} MiB of attachments ${skippedBytes === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_ATTACHMENT_MB)`)
  return { pages: [{ page: 1, segments }], degraded: notes.length > 0, notes, attachments }
}
