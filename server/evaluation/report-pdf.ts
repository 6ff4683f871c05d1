/**
 * The PDF findings report, written with pdf-lib, in the order an underwriter reads it: the case and
 * the decision (computed, the human override beside it, and each decline or refer reason with the
 * value found and the rule it broke), a summary table (question, answer, verdict, confidence,
 * document and page), the read coverage of every document (pages by text layer, by OCR,
 * unreadable; its type; its checks passed or failed), then each question in full, never split
 * across a page break. Amounts are formatted for the workspace (amounts.ts); timestamps are in its
 * time zone.
 */
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib'
import { formatInZone } from '../local-time'
import { formatAmount, type AmountFormat } from './amounts'
import { MARGIN, Writer } from './report-writer'

/** Everything the report shows. */
export interface ReportInput {
  generatedAt: Date
  /** An IANA time zone (the workspace's `time_zone`); UTC when unset or unknown. */
  timeZone: string
  /** How amounts are written (the workspace's `number_locale` and `currency`). */
  amounts?: AmountFormat
  scenario: { id: string; name: string; externalRef?: string; vertical?: string; status: string }
  evaluation: { id: string; engine: string; questionSetName: string; versionNumber: number; startedAt?: Date; finishedAt?: Date }
  decision: {
    outcome: string
    reasons: { question_key: string; message: string; effect?: string; finding?: string; value?: string | boolean | null; rule?: string }[]
    computedAt: Date
    override?: { outcome: string; reason: string; reviewer: string; reviewedAt: Date }
    finalOutcome: string
  }
  /** Every document of the case with how much of it was read, its type and its checks. */
  documents: { line: string; complete: boolean; type?: string; typeConfidence?: number; checks?: { name: string; passed: boolean; detail: string }[] }[]
  questions: {
    key: string; text: string; criticality: string; answerType: string; accept?: string
    status: string; value: string | boolean | null; confidence: number; accepted?: boolean; note?: string
    evidence: { filename: string; page: number; quote: string }[]
  }[]
}

/** The written form of an answer value (numbers formatted for the workspace when a format is given). */
export function valueText(value: string | boolean | null, answerType = 'text', format?: AmountFormat, encodable?: (s: string) => boolean): string {
  if (value === null) return '(none)'
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  return answerType === 'number' && format ? formatAmount(value, format, encodable) : value
}

const OUTCOME_COLOR: Record<string, [number, number, number]> = { approve: [0.1, 0.45, 0.2], refer: [0.7, 0.45, 0], decline: [0.7, 0.1, 0.1] }
const RED: [number, number, number] = [0.7, 0.1, 0.1]
const GREY: [number, number, number] = [0.35, 0.35, 0.35]

/** The verdict of a question in one word. */
const verdictOf = (q: ReportInput['questions'][number]) =>
  q.accepted === true ? 'pass' : q.accepted === false ? 'FAIL' : q.status === 'not_found' ? 'not found' : q.accept ? 'not judged' : '-'

/** Writes the report; returns the PDF bytes and its page count. */
export async function writeFindingsReport(input: ReportInput): Promise<{ bytes: Uint8Array; pageCount: number }> {
  const pdf = await PDFDocument.create()
  pdf.setTitle(`Findings report: ${input.scenario.name}`)
  pdf.setSubject(`Case ${input.scenario.id}, evaluation ${input.evaluation.id}`)
  pdf.setProducer('Underwriting Case Service')
  pdf.setCreationDate(input.generatedAt)
  const w = new Writer(pdf, await pdf.embedFont(StandardFonts.Helvetica), await pdf.embedFont(StandardFonts.HelveticaBold))
  const at = (d: Date) => formatInZone(d, input.timeZone)
  const fmt = input.amounts ?? { locale: 'en-US' }
  const shown = (q: { value: string | boolean | null; answerType: string }) => valueText(q.value, q.answerType, fmt, w.encodable)
  const byKey = new Map(input.questions.map((q) => [q.key, q]))

  w.text('Findings report', { size: 18, bold: true, gap: 6 })
  w.text(`Case: ${input.scenario.name}`, { size: 12, bold: true })
  w.text(`Case id: ${input.scenario.id}`)
  if (input.scenario.externalRef) w.text(`External reference: ${input.scenario.externalRef}`)
  w.text(`Vertical: ${input.scenario.vertical ?? 'default'}`)
  w.text(`Case status: ${input.scenario.status}`)
  w.text(`Question set: ${input.evaluation.questionSetName}, version ${input.evaluation.versionNumber}`)
  w.text(`Evaluation: ${input.evaluation.id} (engine: ${input.evaluation.engine})`)
  if (input.evaluation.finishedAt) w.text(`Evaluated: ${at(input.evaluation.finishedAt)}`)
  w.text(`Generated: ${at(input.generatedAt)}`, { gap: 10 })

  w.text('Decision', { size: 14, bold: true, gap: 4 })
  w.text(`Final outcome: ${input.decision.finalOutcome.toUpperCase()}`, { size: 12, bold: true, color: OUTCOME_COLOR[input.decision.finalOutcome] })
  w.text(`Computed outcome: ${input.decision.outcome} (${at(input.decision.computedAt)})`)
  if (input.decision.reasons.length === 0) w.text('Reasons: none (every rule passed)', { indent: 12 })
  for (const r of input.decision.reasons) {
    const q = byKey.get(r.question_key)
    const effect = r.effect ? ` (${r.effect})` : ''
    if (r.finding === 'rule_failed' && r.rule !== undefined) {
      const found = r.value === undefined ? '' : `found ${valueText(r.value ?? null, q?.answerType, fmt, w.encodable)}; `
      w.text(`- ${r.question_key}${effect}: ${found}rule ${r.rule} not met`, { indent: 12 })
    } else {
      w.text(`- ${r.question_key}${effect}: ${r.message}`, { indent: 12 })
    }
  }
  if (input.decision.override) {
    const o = input.decision.override
    w.text(`Override: ${o.outcome} by ${o.reviewer} at ${at(o.reviewedAt)}`, { bold: true })
    w.text(`Reason: ${o.reason}`, { indent: 12 })
  }
  w.space(10)

  w.table(
    [{ title: 'Question', width: 118 }, { title: 'Answer', width: 150 }, { title: 'Verdict', width: 52 }, { title: 'Conf.', width: 32 }, { title: 'Document, page', width: 143.28 }],
    input.questions.map((q) => ({
      cells: [q.key, q.status === 'answered' ? shown(q) : 'not found', verdictOf(q), q.confidence.toFixed(2), q.evidence[0] ? `${q.evidence[0].filename}, p. ${q.evidence[0].page}` : '-'],
      ...(q.accepted === false || (q.note && q.confidence < 0.5) ? { color: RED } : {}),
    })),
    8,
    [`Summary (${input.questions.length} questions)`, { size: 14, bold: true, gap: 4 }],
  )

  const unread = input.documents.filter((d) => !d.complete).length
  const failing = input.documents.filter((d) => d.checks?.some((c) => !c.passed)).length
  w.text(`Documents and read coverage (${input.documents.length})`, { size: 14, bold: true, gap: 4 })
  if (unread > 0) w.text(`Warning: ${unread} of ${input.documents.length} documents were not read in full; the decision above did not see what they hold.`, { bold: true, color: RED })
  if (failing > 0) w.text(`Warning: ${failing} document${failing === 1 ? '' : 's'} fail${failing === 1 ? 's' : ''} an arithmetic check; answers drawn from ${failing === 1 ? 'it' : 'them'} are marked.`, { bold: true, color: RED })
  if (input.documents.length === 0) w.text('None', { indent: 12 })
  for (const d of input.documents) {
    const checks = d.checks ?? []
    const passed = checks.filter((c) => c.passed).length
    w.block([
      [d.line, { indent: 12, color: d.complete ? [0, 0, 0] : RED, gap: 1 }],
      [`${d.type ? `type ${d.type.replaceAll('_', ' ')} (${(d.typeConfidence ?? 0).toFixed(2)})` : 'type unknown'}; checks: ${checks.length === 0 ? 'none for this type' : `${passed} passed, ${checks.length - passed} failed`}`, { indent: 24, color: GREY, size: 9, gap: 1 }],
      ...checks.filter((c) => !c.passed).map((c) => [`FAILED ${c.name}: ${c.detail}`, { indent: 24, color: RED, size: 9, gap: 1 }] as const),
    ])
  }
  w.space(10)

  w.text(`Questions (${input.questions.length})`, { size: 14, bold: true, gap: 4 })
  for (const q of input.questions) {
    const verdict = q.accepted === undefined ? '' : q.accepted ? ' - rule passed' : ' - rule FAILED'
    w.block([
      [`${q.key}  [${q.criticality}, ${q.answerType}]`, { size: 11, bold: true }],
      [q.text, { indent: 12 }],
      [`Answer: ${q.status === 'answered' ? shown(q) : '(none)'}  (${q.status}, confidence ${q.confidence.toFixed(2)})${verdict}`, { indent: 12 }],
      ...(q.accept ? [[`Accept rule: ${q.accept}`, { indent: 12 }] as const] : []),
      ...(q.note ? [[`Note: ${q.note}`, { indent: 12, color: q.confidence < 0.5 ? RED : GREY }] as const] : []),
      ...(q.evidence.length === 0 ? [['Evidence: none', { indent: 12 }] as const] : q.evidence.map((e) => [`Evidence: ${e.filename}, page ${e.page}: "${e.quote}"`, { indent: 12, color: [0.15, 0.15, 0.4] }] as const)),
      ['', { size: 4, gap: 2 }],
    ])
  }

  const footer = `Findings report - case ${input.scenario.id} - generated ${at(input.generatedAt)}`
  w.pages.forEach((page, i) => {
    page.drawText(w.clean(`${footer} - page ${i + 1} of ${w.pages.length}`), { x: MARGIN, y: MARGIN / 2, size: 7, font: w.regular, color: rgb(0.4, 0.4, 0.4) })
  })
  return { bytes: await pdf.save(), pageCount: w.pages.length }
}
