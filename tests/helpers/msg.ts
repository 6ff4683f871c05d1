/**
 * Outlook messages (MSG) built in the test run: a compound file (`cfb`) holding the MAPI property
 * streams Outlook writes for the subject, sender, body, recipients and attachments.
 */
import CFB from 'cfb'
import type { Bytes } from './samples'

const utf16 = (s: string) => Buffer.from(s, 'utf16le')

/** An MSG file with the given subject, body and attachments. */
export function outlookMessage(m: { subject: string; from: { name: string; email: string }; to: { name: string; email: string }; body: string; attachments?: { filename: string; contentType: string; content: Uint8Array }[] }): Bytes {
  const cfb = CFB.utils.cfb_new()
  const add = (path: string, data: Buffer) => CFB.utils.cfb_add(cfb, path, data)
  add('/__properties_version1.0', Buffer.alloc(32))
  add('/__substg1.0_0037001F', utf16(m.subject))
  add('/__substg1.0_0C1A001F', utf16(m.from.name))
  add('/__substg1.0_0C1F001F', utf16(m.from.email))
  add('/__substg1.0_1000001F', utf16(m.body))
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
