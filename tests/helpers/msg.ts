/**
 * Outlook messages (MSG) built in the test run: a compound file (`cfb`) holding the MAPI property
 * streams Outlook writes for the subject, sender, body, recipients and attachments.
 */
import CFB from 'cfb'
import type { Bytes } from './samples'

const utf16 = (s: string) => Buffer.from(s, 'utf16le')

/**
 * An MSG file with the given subject, body and attachments. `html`: the body as PR_HTML bytes only
 * (no plain text body), as newer Outlook writes it. `ansi`: the subject, sender and body written as
 * non-Unicode PT_STRING8 properties in that code page (`encode` gives their bytes), with
 * PR_MESSAGE_CODEPAGE and PR_INTERNET_CPID saying which, as Outlook writes a legacy message.
 */
export function outlookMessage(m: {
  subject: string; from: { name: string; email: string }; to: { name: string; email: string }; body?: string; html?: Uint8Array
  ansi?: { codepage: number; encode: (s: string) => Uint8Array }
  attachments?: { filename: string; contentType: string; content: Uint8Array }[]
}): Bytes {
  const cfb = CFB.utils.cfb_new()
  const add = (path: string, data: Buffer) => CFB.utils.cfb_add(cfb, path, data)
  const header = Buffer.alloc(32)
  const fixed = m.ansi ? [0x3ffd0003, 0x3fde0003].map((tag) => {
    const e = Buffer.alloc(16)
    e.writeUInt32LE(tag, 0); e.writeUInt32LE(6, 4); e.writeUInt32LE(m.ansi!.codepage, 8)
    return e
  }) : []
  add('/__properties_version1.0', Buffer.concat([header, ...fixed]))
  const str = (id: string, s: string) => (m.ansi ? add(`/__substg1.0_${id}001E`, Buffer.from(m.ansi.encode(s))) : add(`/__substg1.0_${id}001F`, utf16(s)))
  str('0037', m.subject)
  str('0C1A', m.from.name)
  str('0C1F', m.from.email)
  if (m.body !== undefined) str('1000', m.body)
  if (m.html) add('/__substg1.0_10130102', Buffer.from(m.html))
  add('/__recip_version1.0_#00000000/__properties_version1.0', Buffer.alloc(8))
  add('/__recip_version1.0_#00000000/__substg1.0_3001001F', utf16(m.to.name))
  add('/__recip_version1.0_#00000000/__substg1.0_39FE001F', utf16(m.to.email))
  ;(m.attachments ?? []).forEach((a, i) => {
    const dir = `/__attach_version1.0_#${i.toString(16).toUpperCase().padStart(8, '0')}`
    add(`${dir}/__properties_version1.0`, Buffer.alloc(8))
    add(`${dir}/__substg1.0_3707001F`, utf16(a.filename))
    add(`${dir}/__substg1.0_370E001F`, utf16(a.contentType))
    add(`${dir}/__substg1.0_37010102`, Buffer.from(a.content))
  })
  CFB.utils.cfb_del(cfb, '/\u0001Sh33tJ5') // the library's own marker stream
  return new Uint8Array(CFB.write(cfb, { type: 'buffer' }) as Buffer)
}
