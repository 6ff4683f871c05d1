import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { formatAmount } from '../../server/evaluation/amounts'
import { classifyDocument } from '../../server/evaluation/document-types'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

describe('amounts for the workspace', () => {
  test('money (two decimals) with the currency; other numbers grouped only; exact, never a float', () => {
    expect(formatAmount('1250000.00', { locale: 'en-US', currency: 'USD' })).toBe('$1,250,000.00')
    expect(formatAmount('12345678901234567.89', { locale: 'en-US', currency: 'USD' })).toBe('$12,345,678,901,234,567.89')
    expect(formatAmount('1250000.00', { locale: 'en-IN' })).toBe('12,50,000.00')
    expect(formatAmount('1250000.50', { locale: 'de-DE', currency: 'EUR' })).toBe('1.250.000,50 €')
    expect(formatAmount('12', { locale: 'en-US', currency: 'USD' })).toBe('12')
    expect(formatAmount('0.625', { locale: 'en-US', currency: 'USD' })).toBe('0.625')
    expect(formatAmount('-31000.00', { locale: 'en-US', currency: 'USD' })).toBe('-$31,000.00')
    expect(formatAmount('CP-7788123', { locale: 'en-US', currency: 'USD' })).toBe('CP-7788123')
  })

  test('a currency sign the font cannot draw is written as its code', () => {
    const latin1 = (s: string) => [...s].every((c) => c.codePointAt(0)! < 256)
    expect(formatAmount('1250000.00', { locale: 'en-IN', currency: 'INR' }, latin1)).toBe('INR 12,50,000.00')
  })
})

describe('document types from content', () => {
  const blocks = (...texts: string[]) => texts.map((text) => ({ kind: 'paragraph', text }))
  test('titles and labels decide; an email by format or by its headers; little evidence is other', () => {
    expect(classifyDocument('application/pdf', blocks('Earnings Statement', 'Gross pay: 5,000.00\nNet pay: 3,850.00'))).toEqual({ type: 'pay_stub', confidence: expect.any(Number) })
    expect(classifyDocument('message/rfc822', blocks('Passport'))).toEqual({ type: 'email', confidence: 0.99 })
    expect(classifyDocument('text/plain', blocks('From: a@example.test\nTo: b@example.test\nSubject: rent roll attached'))).toEqual({ type: 'email', confidence: 0.9 })
    expect(classifyDocument('application/pdf', blocks('Minutes of the board meeting held in March.'))).toEqual({ type: 'other', confidence: 0.5 })
    const strong = classifyDocument('application/pdf', blocks('Rent Roll', 'Unit | Tenant | Lease end | Monthly rent'))
    const weak = classifyDocument('text/csv', blocks('Unit | Tenant | Monthly rent'))
    expect(strong.type).toBe('rent_roll')
    expect(weak.type).toBe('rent_roll')
    expect(strong.confidence).toBeGreaterThan(weak.confidence)
  })
})
