/**
 * Document types from content, never from the file name: deterministic rules over a document's
 * headings, `Label:` lines and table headers. Each type has signals (phrases); a title signal
 * (say "bank statement") weighs 3 and counts 2 more in a heading or the document's first lines;
 * any other signal weighs 1. The type with the highest score wins when it reaches 3; its confidence
 * grows with its score and its lead over the runner-up:
 *
 *   confidence = 0.5 x (1 - runner_up / best) + min(best, 10) / 20      (at most 0.99)
 *
 * A document that reaches no type is `other` (confidence 0.5). An email file (EML, MSG) is an
 * `email` by its format; a text whose first lines are From:/To:/Subject: headers is one by content.
 */

import { DOCUMENT_TYPES } from '../../schemas/document'

export { DOCUMENT_TYPES }

/** A document type. */
export type DocumentType = (typeof DOCUMENT_TYPES)[number]

/** A document's type with how sure the rules are. */
export interface Classification { type: DocumentType; confidence: number }

/** The text the rules read of a document: its blocks (kind and text) in reading order. */
export interface ClassifiedBlock { kind: string; text: string }

type Signals = { titles: string[]; labels: string[] }

// Phrases are matched on word boundaries, case-insensitively.
const RULES: Record<Exclude<DocumentType, 'email' | 'other'>, Signals> = {
  bank_statement: {
    titles: ['bank statement', 'account statement', 'statement of account', 'checking account statement', 'savings account statement'],
    labels: ['statement period', 'balance', 'transaction', 'payment', 'opening balance', 'beginning balance', 'closing balance', 'ending balance', 'deposits', 'withdrawals', 'total credits', 'total debits', 'account number', 'available balance', 'routing number', 'running balance'],
  },
  pay_stub: {
    titles: ['pay stub', 'paystub', 'earnings statement', 'pay slip', 'payslip', 'statement of earnings'],
    labels: ['pay period', 'pay date', 'gross pay', 'net pay', 'ytd', 'year to date', 'total deductions', 'federal income tax', 'employee id', 'hourly rate', 'regular hours'],
  },
  tax_return: {
    titles: ['tax return', 'form 1040', 'form 1120', 'form 1065', 'u.s. individual income tax return', 'corporation income tax return'],
    labels: ['adjusted gross income', 'taxable income', 'internal revenue service', 'filing status', 'tax year', 'total tax', 'schedule c', 'refund', 'amount you owe', 'total income'],
  },
  identity_document: {
    titles: ['passport', 'driver license', "driver's license", 'drivers license', 'identity card', 'national id', 'identification card'],
    labels: ['date of birth', 'nationality', 'expiry date', 'expiration date', 'date of expiry', 'date of issue', 'issue date', 'place of birth', 'license number', 'passport number', 'sex', 'given names', 'surname'],
  },
  rent_roll: {
    titles: ['rent roll'],
    labels: ['unit', 'tenant', 'lease start', 'lease end', 'lease expiration', 'monthly rent', 'annual rent', 'sq ft', 'square feet', 'occupancy', 'vacant', 'security deposit', 'market rent'],
  },
  loss_run: {
    titles: ['loss run', 'loss history', 'claims history', 'loss experience'],
    labels: ['claims', 'claim number', 'incurred', 'paid', 'reserve', 'reserves', 'policy year', 'date of loss', 'loss date', 'valued as of', 'open claims', 'closed claims'],
  },
  application_form: {
    titles: ['application', 'loan application', 'credit application', 'application for insurance'],
    labels: ['applicant', 'requested amount', 'loan amount', 'amount requested', 'purpose', 'signature', 'years in business', 'business name', 'co-applicant', 'date of application', 'applicant signature'],
  },
  insurance_declaration: {
    titles: ['declarations page', 'declarations', 'policy declarations', 'certificate of insurance'],
    labels: ['named insured', 'policy period', 'policy number', 'premium', 'total premium', 'limit of liability', 'limits of liability', 'deductible', 'coverage', 'insurer', 'effective date', 'each occurrence'],
  },
}

/** The least score that names a type. */
export const MIN_TYPE_SCORE = 3
/** Characters of a document the rules read (its beginning). */
export const CLASSIFY_CHARS = 40_000

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const phraseRe = (p: string) => new RegExp(`(?:^|[^a-z0-9])${escape(p)}(?:$|[^a-z0-9])`)
const compiled = Object.entries(RULES).map(([type, s]) => ({
  type: type as DocumentType,
  titles: s.titles.map(phraseRe),
  labels: s.labels.map(phraseRe),
}))

const EMAIL_TYPES = /^(message\/rfc822|application\/vnd\.ms-outlook)\b/i

/** The type of a document from its content type and blocks (see the file comment). */
export function classifyDocument(contentType: string, blocks: readonly ClassifiedBlock[]): Classification {
  if (EMAIL_TYPES.test(contentType)) return { type: 'email', confidence: 0.99 }
  let text = ''
  for (const b of blocks) {
    if (text.length >= CLASSIFY_CHARS) break
    text += `${b.text}\n`
  }
  const lower = text.toLowerCase()
  const firstLines = lower.split('\n').slice(0, 6).join('\n')
  const headings = blocks.filter((b) => b.kind === 'heading').slice(0, 20).map((b) => b.text.toLowerCase()).join('\n')
  if (/^\s*from:.+\n(?:.*\n){0,4}?\s*(?:to|subject):/m.test(firstLines) && /(^|\n)\s*subject:/.test(lower.slice(0, 2000))) return { type: 'email', confidence: 0.9 }
  const scores = compiled.map(({ type, titles, labels }) => {
    let score = 0
    for (const re of titles) {
      if (!re.test(lower)) continue
      score += 3
      if (re.test(headings) || re.test(firstLines)) score += 2
    }
    for (const re of labels) if (re.test(lower)) score += 1
    return { type, score }
  }).sort((a, b) => b.score - a.score)
  const [best, second] = [scores[0]!, scores[1]!]
  if (best.score < MIN_TYPE_SCORE) return { type: 'other', confidence: 0.5 }
  const confidence = 0.5 * (1 - second.score / best.score) + Math.min(best.score, 10) / 20
  return { type: best.type, confidence: Math.round(Math.min(0.99, confidence) * 100) / 100 }
}
