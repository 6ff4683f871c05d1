/**
 * The .eml outbox of a test app (the mailer writes one file per message under $SVC_DATA_DIR/mail
 * when no SMTP server is configured), decoded enough to read headers and the plain-text body.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One sent message. */
export interface OutboxMail { file: string; to: string; subject: string; text: string; raw: string }

const decodeQuotedPrintable = (s: string) =>
  s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

/** Every message written so far, oldest first. */
export function readOutbox(dataDir: string): OutboxMail[] {
  const dir = join(dataDir, 'mail')
  if (!existsSync(dir)) return []
  return readdirSync(dir).filter((f) => f.endsWith('.eml')).sort().map((file) => {
    const raw = readFileSync(join(dir, file), 'utf8')
    const split = raw.search(/\r?\n\r?\n/)
    const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, ' ')
    const body = raw.slice(split).trim()
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim() ?? ''
    const encoding = header('Content-Transfer-Encoding').toLowerCase()
    const text = encoding === 'quoted-printable' ? decodeQuotedPrintable(body)
      : encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
      : body
    return { file, to: header('To'), subject: header('Subject'), text, raw }
  })
}
