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

/** What both email formats give: the headers that matter and the body. */
export interface Message { subject?: string; from?: string; to?: string; cc?: string; date?: string; text?: string; html?: string }

/** A message as blocks: the subject as a heading, the headers as `Label: value` lines, the body. */
export function messageSegments(m: Message): Segment[] {
  const date = m.date ? (Number.isNaN(Date.parse(m.date)) ? m.date : new Date(m.date).toISOString()) : ''
  const headers = [['From', m.from ?? ''], ['To', m.to ?? ''], ['Cc', m.cc ?? ''], ['Date', date], ['Subject', m.subject ?? '']].filter(([, v]) => v !== '')
  const segments: Segment[] = []
  if (m.subject) segments.push({ kind: 'heading', text: m.subject })
  if (headers.length) segments.push({ kind: 'paragraph', text: headers.map(([k, v]) => `${k}: ${v}`).join('\n') })
  if (m.text?.trim()) segments.push(...paragraphs(m.text))
  else if (m.html?.trim()) segments.push(...htmlSegments(m.html))
  return segments
}

/** The attachments kept within the count and byte limits, and notes naming what was left out. */
export function keepAttachments(found: Attachment[], options: { maxAttachments?: number; maxAttachmentBytes?: number }): { attachments: Attachment[]; notes: string[] } {
  const maxCount = options.maxAttachments ?? 50
  const maxBytes = options.maxAttachmentBytes ?? 50 * 1_048_576
  const attachments: Attachment[] = []
  let total = 0
  let skippedCount = 0
  let skippedBytes = 0
  for (const a of found) {
    if (attachments.length >= maxCount) { skippedCount++; continue }
    if (total + a.bytes.byteLength > maxBytes) { skippedBytes++; continue }
    total += a.bytes.byteLength
    attachments.push(a)
  }
  const notes: string[] = []
  if (skippedCount > 0) notes.push(`${skippedCount} attachment${skippedCount === 1 ? '' : 's'} after the first ${maxCount} ${skippedCount === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_ATTACHMENTS)`)
  if (skippedBytes > 0) notes.push(`${skippedBytes} attachment${skippedBytes === 1 ? '' : 's'} past ${Math.round(maxBytes / 1_048_576)} MiB of attachments ${skippedBytes === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_ATTACHMENT_MB)`)
  return { attachments, notes }
}

/** A header field line, a folded continuation, or an mbox "From " line (RFC 5322; Python's email.feedparser headerRE). */
const HEADER_LINE = /^(?:From |[\x21-\x39\x3b-\x7e]+:|[ \t])/

/**
 * The message with its header block repaired as Python's `email` package reads it: a line that is
 * neither a header nor a continuation ends the headers and starts the body (a missing blank line,
 * a message with no headers at all), and a whitespace-only line inside the headers is a (blank)
 * continuation, not the end of the headers. Bytes are kept one for one (latin1) past the repair.
 */
export function repairHeaderBlock(bytes: Uint8Array): Uint8Array {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.length, 256 * 1024)))
  const lines = head.split(/(?<=\n)/)
  const out: string[] = []
  let at = 0
  for (const line of lines) {
    const bare = line.replace(/\r?\n$/, '')
    if (bare === '') return bytes // a proper separator: nothing to repair
    if (/^[ \t]+$/.test(bare)) { at += line.length; continue } // blank continuation: dropped
    if (!HEADER_LINE.test(bare) || (out.length === 0 && /^[ \t]/.test(bare))) break
    out.push(line)
    at += line.length
  }
  if (at >= head.length && head.length === bytes.length) return bytes // headers only, no body
  const repaired = new Uint8Array(bytes.length + 2)
  const kept = Uint8Array.from(out.join(''), (c) => c.charCodeAt(0))
  repaired.set(kept)
  repaired.set([0x0d, 0x0a], kept.length)
  repaired.set(bytes.subarray(at), kept.length + 2)
  return repaired.subarray(0, kept.length + 2 + bytes.length - at)
}

/** The raw body after the header block, as text (undecoded transfer encoding left as is): what is kept when the MIME structure gives nothing. */
function rawBody(bytes: Uint8Array): string {
  const text = new TextDecoder('utf-8').decode(bytes)
  const sep = /\r?\n\r?\n/.exec(text)
  return sep ? text.slice(sep.index + sep[0].length) : ''
}

/** The EML adapter. */
export const readEmail: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  let email: Awaited<ReturnType<typeof PostalMime.parse>>
  const repaired = repairHeaderBlock(bytes)
  try {
    // Every attached message stays an attachment: it becomes a document of its own, read in turn.
    email = await PostalMime.parse(repaired, { attachmentEncoding: 'arraybuffer', forceRfc822Attachments: true, maxRfc822NestingDepth: 0 } as never)
  } catch {
    throw new UnreadableDocument('the email could not be parsed')
  }
  // A structure that yields no part at all (a multipart without its boundary): the body is kept
  // as the text it is, as Python's email package keeps it, and the parse says so.
  const structureLost = !email.text?.trim() && !email.html?.trim() && !(email.attachments ?? []).length && rawBody(repaired).trim() !== ''
  const segments = messageSegments({
    subject: email.subject,
    from: address(email.from as never),
    to: (email.to ?? []).map((a) => address(a as never)).join(', '),
    cc: (email.cc ?? []).map((a) => address(a as never)).join(', '),
    date: email.date,
    text: structureLost ? rawBody(repaired) : email.text,
    html: email.html,
  })
  const { attachments, notes } = keepAttachments((email.attachments ?? []).map((a, i) => ({
    filename: (a.filename ?? '').trim() || `attachment-${i + 1}`,
    contentType: (a.mimeType || 'application/octet-stream').toLowerCase(),
    bytes: new Uint8Array(a.content as ArrayBuffer),
  })), options)
  if (structureLost) notes.push('the MIME structure of the body could not be followed; its raw text was kept')
  return { pages: [{ page: 1, segments }], degraded: notes.length > 0, notes, attachments }
}
