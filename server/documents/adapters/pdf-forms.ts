/**
 * Filled AcroForm fields of a PDF page as text: each field with a value (text, check box, radio
 * group, choice) becomes a `Label: value` line, the label taken from the field's tooltip (TU, its
 * alternate name), else the printed text nearest to the left of the field or above it, else the
 * field's own name. pdf.js's text content holds the printed page only, not what was typed into the
 * fields, so without this a filled application reads as its blank labels.
 */
import type { LayoutLine } from './pdf-layout'

/** A widget annotation as pdf.js's `getAnnotations()` reports it (only what this needs). */
export interface WidgetAnnotation {
  subtype?: string
  fieldType?: string
  fieldName?: string
  fieldValue?: unknown
  alternativeText?: string
  rect?: number[]
  checkBox?: boolean
  radioButton?: boolean
  exportValue?: string
  buttonValue?: string
  options?: { exportValue?: string; displayValue?: string }[]
  hidden?: boolean
  password?: boolean
}

/** A field's value as text, or '' when it has none (an unchecked box, an empty field). */
function valueOf(a: WidgetAnnotation): string {
  const v = a.fieldValue
  if (a.fieldType === 'Btn') {
    if (typeof v !== 'string' || v === '' || v === 'Off') return ''
    if (a.checkBox) return /^(yes|on|1|true|x)$/i.test(v) ? 'Yes' : v
    if (a.radioButton) return v
    return ''
  }
  if (a.fieldType === 'Ch') {
    const picked = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string' && x !== '')
    return picked.map((x) => a.options?.find((o) => o.exportValue === x)?.displayValue || x).join(', ')
  }
  if (a.fieldType === 'Tx') return typeof v === 'string' ? v : ''
  return ''
}

/** A label without its trailing colon or leader. */
const bare = (text: string) => text.replace(/[\s:._…-]+$/u, '').trim()

/**
 * The printed label of a field at `rect` ([x1, y1, x2, y2], PDF units): the nearest cell ending
 * left of the field on a line within its height, else the nearest cell just above it overlapping
 * it horizontally.
 */
function printedLabel(rect: number[], lines: readonly LayoutLine[]): string {
  const [x1, y1, x2, y2] = rect as [number, number, number, number]
  let best: { text: string; distance: number } | undefined
  for (const line of lines) {
    if (line.y < y1 - line.size * 0.5 || line.y > y2 + line.size * 0.2) continue
    for (const c of line.cells) {
      if (c.end > x1 + 2 || !bare(c.text)) continue
      const distance = x1 - c.end
      if (!best || distance < best.distance) best = { text: c.text, distance }
    }
  }
  if (best) return bare(best.text)
  for (const line of lines) {
    if (line.y < y2 || line.y > y2 + line.size * 2.5) continue
    for (const c of line.cells) {
      if (c.end < x1 || c.x > x2 || !bare(c.text)) continue
      const distance = line.y - y2
      if (!best || distance < best.distance) best = { text: c.text, distance }
    }
  }
  return best ? bare(best.text) : ''
}

/** A field's own name as a label: its last part, words split ("applicant.annualRevenue" -> "annual Revenue"). */
const nameLabel = (name: string) => (name.split('.').pop() ?? name).replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').trim()

/**
 * The `Label: value` lines of a page's filled fields, top to bottom and left to right; a field of
 * several widgets (a radio group) gives one line. `lines` is the page's printed text, for labels.
 */
export function formLines(annotations: readonly WidgetAnnotation[], lines: readonly LayoutLine[]): string[] {
  const seen = new Set<string>()
  const out: { y: number; x: number; line: string }[] = []
  for (const a of annotations) {
    if (a.subtype !== 'Widget' || a.hidden || a.password || !a.rect || a.rect.length < 4) continue
    const value = valueOf(a).replace(/\s+/g, ' ').trim()
    if (value === '') continue
    const key = a.fieldName || `${a.rect.join(',')}`
    if (seen.has(key)) continue
    seen.add(key)
    const label = bare(a.alternativeText ?? '') || printedLabel(a.rect, lines) || nameLabel(a.fieldName ?? '') || 'Field'
    out.push({ y: Math.max(a.rect[1]!, a.rect[3]!), x: Math.min(a.rect[0]!, a.rect[2]!), line: `${label.replace(/\s+/g, ' ')}: ${value}` })
  }
  return out.sort((p, q) => q.y - p.y || p.x - q.x).map((f) => f.line)
}
