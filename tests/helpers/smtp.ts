/**
 * A real SMTP server for tests (smtp-server): accepts plain SMTP on 127.0.0.1, records each message
 * (envelope, raw text, decoded parts) and can refuse messages to exercise retries.
 */
import { SMTPServer } from 'smtp-server'

/** One received message. */
export interface ReceivedMail {
  from: string
  to: string[]
  raw: string
  /** Headers (lower-case names) of the top-level message. */
  headers: Record<string, string>
  /** The text/plain and text/html parts, transfer-decoded. */
  text: string
  html: string
}

/** A running SMTP server. */
export interface SmtpServer {
  url: string
  messages: ReceivedMail[]
  /** Refuse the next `n` messages with a 451 (temporary) reply. */
  refuseNext(n: number): void
  /** Refused message count so far. */
  refused: number
  waitFor(count: number, timeoutMs?: number): Promise<void>
  stop(): Promise<void>
}

function decodeQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
  return Buffer.from(bytes, 'latin1').toString('utf8')
}

/** Decodes RFC 2047 encoded words (=?UTF-8?Q?...?= and =?UTF-8?B?...?=) of a header value. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')))
}

function parseHeaders(block: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':')
    if (i > 0) out[line.slice(0, i).trim().toLowerCase()] = decodeWords(line.slice(i + 1).trim())
  }
  return out
}

function decodePart(headers: Record<string, string>, body: string): string {
  const enc = (headers['content-transfer-encoding'] ?? '').toLowerCase()
  if (enc === 'quoted-printable') return decodeQuotedPrintable(body)
  if (enc === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  return body
}

/** Splits a (possibly multipart) message into its text and html parts. */
export function parseMail(raw: string): { headers: Record<string, string>; text: string; html: string } {
  const split = raw.search(/\r?\n\r?\n/)
  const headers = parseHeaders(raw.slice(0, split))
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '')
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1]
  let text = ''
  let html = ''
  const take = (h: Record<string, string>, b: string) => {
    const type = (h['content-type'] ?? 'text/plain').toLowerCase()
    if (type.startsWith('text/html')) html = decodePart(h, b)
    else if (type.startsWith('text/plain')) text = decodePart(h, b)
  }
  if (!boundary) take(headers, body)
  else {
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break
      const p = part.replace(/^\r?\n/, '')
      const at = p.search(/\r?\n\r?\n/)
      take(parseHeaders(p.slice(0, at)), p.slice(at).replace(/^\r?\n\r?\n/, '').replace(/\r?\n$/, ''))
    }
  }
  return { headers, text, html }
}

/** Starts an SMTP server on 127.0.0.1 and a random port. */
export async function startSmtp(): Promise<SmtpServer> {
  const messages: ReceivedMail[] = []
  let refuse = 0
  let refused = 0
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        if (refuse > 0) {
          refuse--
          refused++
          const err = new Error('try again later') as Error & { responseCode: number }
          err.responseCode = 451
          return callback(err)
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        const parsed = parseMail(raw)
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          ...parsed,
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.server.address() as { port: number }).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    refuseNext(n) { refuse = n },
    get refused() { return refused },
    async waitFor(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`smtp: ${messages.length} of ${count} messages within ${timeoutMs} ms`)
        await Bun.sleep(10)
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
