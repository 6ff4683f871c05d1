/**
 * The PDF findings report, written with pdf-lib: the case, the decision (computed, and the human
 * override beside it), every question with its answer, rule verdict and evidence quotes (document
 * and page), and timestamps in the workspace's time zone. Text is wrapped to the page width; the
 * standard Helvetica font is used, so characters it cannot encode are shown as "?".
 */
import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib'
import { formatInZone } from '../local-time'

/** Everything the report shows. */
export interface ReportInput {
  generatedAt: Date
  /** An IANA time zone (the workspace's `time_zone`); UTC when unset or unknown. */
  timeZone: string
  scenario: { id: string; name: string; externalRef?: string; vertical?: string; status: string }
  evaluation: { id: string; engine: string; questionSetName: string; versionNumber: number; startedAt?: Date; finishedAt?: Date }
  decision: {
    outcome: string
    reasons: { question_key: string; message: string }[]
    computedAt: Date
    override?: { outcome: string; reason: string; reviewer: string; reviewedAt: Date }
    finalOutcome: string
  }
  /** Every document of the case with how much of it was read. */
  documents: { line: string; complete: boolean }[]
  questions: {
    key: string; text: string; criticality: string; answerType: string; accept?: string
    status: string; value: string | boolean | null; confidence: number; accepted?: boolean; note?: string
    evidence: { filename: string; page: number; quote: string }[]
  }[]
}

const PAGE: [number, number] = [595.28, 841.89] // A4
const MARGIN = 50
const WIDTH = PAGE[0] - 2 * MARGIN

/** The written form of an answer value. */
export function valueText(value: string | boolean | null): string {
  if (value === null) return '(none)'
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  return value
}

class Writer {
  page!: PDFPage
  y = 0
  readonly pages: PDFPage[] = []
  constructor(readonly pdf: PDFDocument, readonly regular: PDFFont, readonly bold: PDFFont) { this.newPage() }

  newPage() {
    this.page = this.pdf.addPage(PAGE)
    this.pages.push(this.page)
    this.y = PAGE[1] - MARGIN
  }

  /** Replaces characters the font cannot encode. */
  clean(text: string, font: PDFFont): string {
    const supported = new Set(font.getCharacterSet())
    return [...text.replace(/[\r\n\t\f\v]+/g, ' ')].map((c) => (supported.has(c.codePointAt(0)!) ? c : '?')).join('')
  }

  wrap(text: string, font: PDFFont, size: number, width: number): string[] {
    const words = this.clean(text, font).split(/ +/)
    const lines: string[] = []
    let line = ''
    for (const word of words) {
      const candidate = line ? `${line} ${word}` : word
      if (font.widthOfTextAtSize(candidate, size) <= width) { line = candidate; continue }
      if (line) lines.push(line)
      // A word wider than the line: cut it.
      let rest = word
      while (font.widthOfTextAtSize(rest, size) > width) {
        let n = rest.length
        while (n > 1 && font.widthOfTextAtSize(rest.slice(0, n), size) > width) n--
        lines.push(rest.slice(0, n))
        rest = rest.slice(n)
      }
      line = rest
    }
    if (line) lines.push(line)
    return lines.length ? lines : ['']
  }

  text(text: string, opts: { size?: number; bold?: boolean; indent?: number; gap?: number; color?: [number, number, number] } = {}) {
    const size = opts.size ?? 10
    const font = opts.bold ? this.bold : this.regular
    const indent = opts.indent ?? 0
    const leading = size * 1.35
    for (const line of this.wrap(text, font, size, WIDTH - indent)) {
      if (this.y - leading < MARGIN + 20) this.newPage()
      this.y -= leading
      this.page.drawText(line, { x: MARGIN + indent, y: this.y, size, font, color: rgb(...(opts.color ?? [0, 0, 0])) })
    }
    this.y -= opts.gap ?? 2
  }

  space(h: number) { this.y -= h }
}

const OUTCOME_COLOR: Record<string, [number, number, number]> = { approve: [0.1, 0.45, 0.2], refer: [0.7, 0.45, 0], decline: [0.7, 0.1, 0.1] }

/** Writes the report; returns the PDF bytes and its page count. */
export async function writeFindingsReport(input: ReportInput): Promise<{ bytes: Uint8Array; pageCount: number }> {
  const pdf = await PDFDocument.create()
  pdf.setTitle(`Findings report: ${input.scenario.name}`)
  pdf.setSubject(`Case ${input.scenario.id}, evaluation ${input.evaluation.id}`)
  pdf.setProducer('Underwriting Case Service')
  pdf.setCreationDate(input.generatedAt)
  const w = new Writer(pdf, await pdf.embedFont(StandardFonts.Helvetica), await pdf.embedFont(StandardFonts.HelveticaBold))
  const at = (d: Date) => formatInZone(d, input.timeZone)

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

  const unread = input.documents.filter((d) => !d.complete).length
  w.text(`Documents (${input.documents.length})`, { size: 14, bold: true, gap: 4 })
  if (unread > 0) w.text(`Warning: ${unread} of ${input.documents.length} documents were not read in full; the decision below did not see what they hold.`, { bold: true, color: [0.7, 0.1, 0.1] })
  if (input.documents.length === 0) w.text('None', { indent: 12 })
  for (const d of input.documents) w.text(d.line, { indent: 12, color: d.complete ? [0, 0, 0] : [0.7, 0.1, 0.1] })
  w.space(10)

  w.text('Decision', { size: 14, bold: true, gap: 4 })
  w.text(`Final outcome: ${input.decision.finalOutcome.toUpperCase()}`, { size: 12, bold: true, color: OUTCOME_COLOR[input.decision.finalOutcome] })
  w.text(`Computed outcome: ${input.decision.outcome} (${at(input.decision.computedAt)})`)
  if (input.decision.reasons.length === 0) w.text('Reasons: none (every rule passed)', { indent: 12 })
  for (const r of input.decision.reasons) w.text(`- ${r.question_key}: ${r.message}`, { indent: 12 })
  if (input.decision.override) {
    const o = input.decision.override
    w.text(`Override: ${o.outcome} by ${o.reviewer} at ${at(o.reviewedAt)}`, { bold: true })
    w.text(`Reason: ${o.reason}`, { indent: 12 })
  }
  w.space(10)

  w.text(`Questions (${input.questions.length})`, { size: 14, bold: true, gap: 4 })
  for (const q of input.questions) {
    w.text(`${q.key}  [${q.criticality}, ${q.answerType}]`, { size: 11, bold: true })
    w.text(q.text, { indent: 12 })
    const verdict = q.accepted === undefined ? '' : q.accepted ? ' - rule passed' : ' - rule FAILED'
    w.text(`Answer: ${valueText(q.value)}  (${q.status}, confidence ${q.confidence.toFixed(2)})${verdict}`, { indent: 12 })
    if (q.accept) w.text(`Accept rule: ${q.accept}`, { indent: 12 })
    if (q.note) w.text(`Note: ${q.note}`, { indent: 12, color: [0.35, 0.35, 0.35] })
    if (q.evidence.length === 0) w.text('Evidence: none', { indent: 12 })
    for (const e of q.evidence) w.text(`Evidence: ${e.filename}, page ${e.page}: "${e.quote}"`, { indent: 12, color: [0.15, 0.15, 0.4] })
    w.space(6)
  }

  const footer = `Findings report - case ${input.scenario.id} - generated ${at(input.generatedAt)}`
  w.pages.forEach((page, i) => {
    page.drawText(w.clean(`${footer} - page ${i + 1} of ${w.pages.length}`, w.regular), { x: MARGIN, y: MARGIN / 2, size: 7, font: w.regular, color: rgb(0.4, 0.4, 0.4) })
  })
  return { bytes: await pdf.save(), pageCount: w.pages.length }
}
