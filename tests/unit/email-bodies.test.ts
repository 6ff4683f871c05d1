/**
 * Malformed emails keep their body text the way Python's `email` package keeps it (a mature MIME
 * parser): a missing blank line after the headers, a whitespace-only line inside them, a message
 * with no headers at all, a multipart body without its boundary. The MSG reader takes the HTML
 * body from its binary property and decodes legacy code pages.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import iconv from 'iconv-lite'
import { readEmail } from '../../server/documents/adapters/email'
import { readMsg } from '../../server/documents/adapters/msg'
import { outlookMessage } from '../helpers/msg'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const texts = async (p: Promise<{ pages: { segments: { text: string }[] }[] }>) => (await p).pages[0]!.segments.map((s) => s.text)
const eml = (s: string) => new TextEncoder().encode(s)

describe('malformed EML bodies', () => {
  test('no blank line between the headers and the body: the first line that is no header starts the body', async () => {
    expect(await texts(readEmail(eml('From: a@example.test\r\nSubject: Quote\r\nPlease find the quote below.\r\nPremium: 12,400.00\r\n')))).toEqual([
      'Quote', 'From: a@example.test\nSubject: Quote', 'Please find the quote below.\nPremium: 12,400.00',
    ])
  })

  test('a whitespace-only line inside the headers is a continuation, not the end of the headers', async () => {
    expect(await texts(readEmail(eml('From: a@example.test\r\nSubject: Quote\r\n \t\r\nBody after a blank continuation.\r\n')))).toEqual([
      'Quote', 'From: a@example.test\nSubject: Quote', 'Body after a blank continuation.',
    ])
  })

  test('a message with no headers at all is all body', async () => {
    expect(await texts(readEmail(eml('Forwarded without headers.\r\n\r\nSecond paragraph.\r\n')))).toEqual(['Forwarded without headers.', 'Second paragraph.'])
  })

  test('a multipart body without its boundary keeps its raw text, degraded, saying so', async () => {
    const read = await readEmail(eml('From: a@example.test\r\nSubject: Quote\r\nContent-Type: multipart/mixed\r\n\r\nThe body of a multipart with no boundary.\r\n'))
    expect(read.pages[0]!.segments.map((s) => s.text)).toContain('The body of a multipart with no boundary.')
    expect(read).toMatchObject({ degraded: true, notes: ['the MIME structure of the body could not be followed; its raw text was kept'] })
  })

  test('a well-formed message is unchanged by the repair', async () => {
    const read = await readEmail(eml('From: a@example.test\r\nSubject: Fine\r\n\r\nNote: a body line that looks like a header.\r\n'))
    expect(read).toMatchObject({ degraded: false, notes: [] })
    expect(read.pages[0]!.segments.map((s) => s.text)).toEqual(['Fine', 'From: a@example.test\nSubject: Fine', 'Note: a body line that looks like a header.'])
  })
})

describe('MSG bodies and code pages', () => {
  const people = { from: { name: '山田 太郎', email: 'yamada@example.jp' }, to: { name: 'UW', email: 'uw@example.test' } }

  test('an MSG whose body is only binary HTML (PR_HTML) keeps it', async () => {
    const html = new TextEncoder().encode('<html><head><meta charset="utf-8"></head><body><p>Dear underwriter,</p><p>Annual revenue: 1,250,000.00</p></body></html>')
    expect(await texts(readMsg(outlookMessage({ subject: 'HTML only', ...people, html })))).toEqual([
      'HTML only', 'From: 山田 太郎 <yamada@example.jp>\nTo: UW <uw@example.test>\nSubject: HTML only', 'Dear underwriter,', 'Annual revenue: 1,250,000.00',
    ])
  })

  test('an MSG in code page 932 (PT_STRING8 properties, PR_MESSAGE_CODEPAGE 932) reads as Japanese, not mojibake', async () => {
    const msg = outlookMessage({ subject: '見積書の送付', ...people, body: 'お世話になっております。\r\n\r\n保険金額: 640,000.00\r\n', ansi: { codepage: 932, encode: (s) => iconv.encode(s, 'cp932') } })
    expect(await texts(readMsg(msg))).toEqual([
      '見積書の送付', 'From: 山田 太郎 <yamada@example.jp>\nTo: UW <uw@example.test>\nSubject: 見積書の送付', 'お世話になっております。', '保険金額: 640,000.00',
    ])
  })

  test('an MSG with binary HTML in code page 932 decodes it in that code page', async () => {
    const html = iconv.encode('<html><body><p>添付の申込書をご確認ください。</p></body></html>', 'cp932')
    const msg = outlookMessage({ subject: '申込書', ...people, html, ansi: { codepage: 932, encode: (s) => iconv.encode(s, 'cp932') } })
    expect((await texts(readMsg(msg))).at(-1)).toBe('添付の申込書をご確認ください。')
  })
})
