/**
 * ZIP bundles (a broker's whole file as one archive): every member becomes a document of the same
 * case, exactly like an email's attachments (ingested by its own type; a ZIP inside recurses, to
 * the same depth limit). The archive is read from its central directory, by hand and within
 * bounds, and each member inflated by the native zlib told where to stop: a member or the members
 * together inflating past SVC_PARSE_MAX_INFLATED_MB, or past the bytes attachments may hold
 * (SVC_EMAIL_MAX_ATTACHMENT_MB), stop after that much work whatever sizes the headers declare.
 * Past the member count limit (SVC_EMAIL_MAX_ATTACHMENTS) nothing more is inflated. Member names
 * are flattened to one safe file name ("../../etc/passwd" never reaches a path); encrypted members
 * are not read and named in the detail, as are members in a method this reader does not know.
 * The bundle itself reads as one paragraph listing what it holds.
 */
import { inflateRawSync } from 'node:zlib'
import { neutraliseFilename } from '../filenames'
import { DEFAULT_READ_LIMITS, mib, UnreadableDocument, type Adapter, type Attachment, type Segment } from './types'

/** One member as the central directory describes it. */
interface Member { name: string; flags: number; method: number; crc32: number; compressedSize: number; size: number; localOffset: number }

const EOCD = 0x06054b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50
/** Members listed by name in a detail; the rest are counted. */
const NAMED = 5

/** The central directory's members, or UnreadableDocument when the archive has none to be found. */
function centralDirectory(bytes: Uint8Array): Member[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let eocd = -1
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
    if (v.getUint32(i, true) === EOCD) { eocd = i; break }
  }
  if (eocd < 0) throw new UnreadableDocument('the ZIP archive has no central directory')
  const count = v.getUint16(eocd + 10, true)
  let at = v.getUint32(eocd + 16, true)
  const members: Member[] = []
  const decoder = new TextDecoder()
  const cp437 = new TextDecoder('latin1')
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || v.getUint32(at, true) !== CENTRAL) throw new UnreadableDocument('the ZIP central directory is invalid')
    const flags = v.getUint16(at + 8, true)
    const nameLength = v.getUint16(at + 28, true)
    const extraLength = v.getUint16(at + 30, true)
    const commentLength = v.getUint16(at + 32, true)
    if (at + 46 + nameLength > bytes.length) throw new UnreadableDocument('the ZIP central directory is invalid')
    const raw = bytes.subarray(at + 46, at + 46 + nameLength)
    members.push({
      name: (flags & 0x800 ? decoder : cp437).decode(raw),
      flags,
      method: v.getUint16(at + 10, true),
      crc32: v.getUint32(at + 16, true),
      compressedSize: v.getUint32(at + 20, true),
      size: v.getUint32(at + 24, true),
      localOffset: v.getUint32(at + 42, true),
    })
    at += 46 + nameLength + extraLength + commentLength
  }
  return members
}

/** A member's name as a document's file name: its path flattened ("a/b/c.pdf" -> "a_b_c.pdf"), no "..", no leading dots or separators. */
export function memberFilename(path: string, index: number): string {
  const parts = path.split(/[/\\]+/).filter((p) => p !== '' && p !== '.' && p !== '..')
  return neutraliseFilename(parts.join('_').replace(/^\.+/, ''), `member-${index + 1}`)
}

/** Why a member is skipped without being read, or undefined for a file to read. */
function skipped(m: Member): 'folder' | 'metadata' | undefined {
  if (/[/\\]$/.test(m.name)) return 'folder'
  const base = m.name.split(/[/\\]/).pop() ?? ''
  if (/^__MACOSX[/\\]/.test(m.name) || base === '.DS_Store' || base === 'Thumbs.db' || base === 'desktop.ini') return 'metadata'
  return undefined
}

/**
 * A member's bytes inflated, stopping once they pass `limit` (then `over` is true and no bytes
 * are kept). Stored members are copied within the same limit. Throws on a damaged stream or a
 * CRC-32 that differs from the central directory's.
 */
function inflateMember(bytes: Uint8Array, m: Member, limit: number): { bytes?: Uint8Array; over: boolean } {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const at = m.localOffset
  if (at + 30 > bytes.length || v.getUint32(at, true) !== LOCAL) throw new Error('local header')
  const start = at + 30 + v.getUint16(at + 26, true) + v.getUint16(at + 28, true)
  const end = start + m.compressedSize
  if (end > bytes.length) throw new Error('member data past the end')
  const data = bytes.subarray(start, end)
  if (m.method === 0) {
    if (data.length > limit) return { over: true }
    if ((Bun.hash.crc32(data) >>> 0) !== m.crc32) throw new Error('CRC-32 differs')
    return { bytes: data.slice(), over: false }
  }
  // The native zlib, told to stop once the output passes the limit: bounded work whatever the member declares.
  let out: Uint8Array
  try {
    out = inflateRawSync(data, { maxOutputLength: Math.max(1, limit + 1) })
  } catch (e) {
    if (e instanceof RangeError || (e as { code?: string })?.code === 'ERR_BUFFER_TOO_LARGE') return { over: true }
    throw new Error('damaged stream')
  }
  if (out.length > limit) return { over: true }
  if ((Bun.hash.crc32(out) >>> 0) !== m.crc32) throw new Error('CRC-32 differs')
  return { bytes: out, over: false }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`
const listed = (names: string[]) => names.slice(0, NAMED).join(', ') + (names.length > NAMED ? ` and ${names.length - NAMED} more` : '')

/** The ZIP adapter. */
export const readZip: Adapter = async (bytes, options = DEFAULT_READ_LIMITS) => {
  const members = centralDirectory(bytes)
  const maxCount = options.maxAttachments ?? 50
  const maxBytes = options.maxAttachmentBytes ?? 50 * 1_048_576
  const attachments: Attachment[] = []
  const encrypted: string[] = []
  const unknownMethod: string[] = []
  const damaged: string[] = []
  const inflatesOver: string[] = []
  let pastCount = 0
  let pastBytes = 0
  let kept = 0
  let inflated = 0
  for (const [i, m] of members.entries()) {
    if (skipped(m)) continue
    const filename = memberFilename(m.name, i)
    if (attachments.length >= maxCount) { pastCount++; continue }
    if (m.flags & 0x1) { encrypted.push(filename); continue }
    if (m.method !== 0 && m.method !== 8) { unknownMethod.push(filename); continue }
    // The member may inflate to what is left of both budgets, and not a byte more.
    const inflateBudget = options.maxInflatedBytes - inflated
    const limit = Math.min(inflateBudget, maxBytes - kept)
    let read: ReturnType<typeof inflateMember>
    try {
      read = inflateMember(bytes, m, limit)
    } catch {
      damaged.push(filename)
      continue
    }
    if (read.over || !read.bytes) {
      inflated += limit
      if (limit === inflateBudget) inflatesOver.push(filename)
      else pastBytes++
      continue
    }
    inflated += read.bytes.length
    kept += read.bytes.length
    attachments.push({ filename, contentType: 'application/octet-stream', bytes: read.bytes })
  }
  const notes: string[] = []
  if (encrypted.length) notes.push(`${plural(encrypted.length, 'member')} ${encrypted.length === 1 ? 'is' : 'are'} encrypted and could not be read: ${listed(encrypted)}`)
  if (unknownMethod.length) notes.push(`${plural(unknownMethod.length, 'member')} ${unknownMethod.length === 1 ? 'uses' : 'use'} a compression method this reader does not support: ${listed(unknownMethod)}`)
  if (damaged.length) notes.push(`${plural(damaged.length, 'member')} could not be inflated (damaged): ${listed(damaged)}`)
  if (inflatesOver.length) notes.push(`${plural(inflatesOver.length, 'member')} inflated past the ${mib(options.maxInflatedBytes)} limit (SVC_PARSE_MAX_INFLATED_MB) and ${inflatesOver.length === 1 ? 'was' : 'were'} not kept: ${listed(inflatesOver)}`)
  if (pastBytes) notes.push(`${plural(pastBytes, 'member')} past ${mib(maxBytes)} of members ${pastBytes === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_ATTACHMENT_MB)`)
  if (pastCount) notes.push(`${plural(pastCount, 'member')} after the first ${maxCount} ${pastCount === 1 ? 'was' : 'were'} not kept (SVC_EMAIL_MAX_ATTACHMENTS)`)
  const files = members.flatMap((m, i) => (skipped(m) ? [] : [memberFilename(m.name, i)]))
  const segments: Segment[] = files.length === 0 ? [] : [{ kind: 'paragraph', text: `ZIP bundle of ${plural(files.length, 'file')}: ${files.slice(0, 50).join(', ')}${files.length > 50 ? ` and ${files.length - 50} more` : ''}` }]
  return { pages: [{ page: 1, segments }], degraded: notes.length > 0, notes, attachments }
}
