/**
 * Outgoing mail through nodemailer: SMTP when SVC_SMTP_URL is set, otherwise each message is
 * written as an .eml file under $SVC_DATA_DIR/mail/ (for development and single-box installs).
 */
import nodemailer from 'nodemailer'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** One message: plain text always, HTML optionally. */
export interface MailMessage { to: string; subject: string; text: string; html?: string; headers?: Record<string, string> }

/** Sends mail; resolves with the message id, rejects on a transport failure. */
export interface Mailer { send(message: MailMessage): Promise<{ messageId: string }>; close(): void }

/** Creates the mailer the configuration names. */
export function createMailer(opts: { smtpUrl?: string; from: string; dataDir: string }): Mailer {
  if (opts.smtpUrl) {
    const transport = nodemailer.createTransport(opts.smtpUrl, { from: opts.from })
    return {
      async send(m) {
        const info = await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text, html: m.html, headers: m.headers })
        return { messageId: info.messageId }
      },
      close: () => transport.close(),
    }
  }
  const dir = join(opts.dataDir, 'mail')
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  return {
    async send(m) {
      const info = await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text, html: m.html, headers: m.headers })
      mkdirSync(dir, { recursive: true })
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${crypto.randomUUID()}.eml`
      writeFileSync(join(dir, name), info.message as Buffer)
      return { messageId: info.messageId }
    },
    close: () => transport.close(),
  }
}
