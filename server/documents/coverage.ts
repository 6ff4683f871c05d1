/**
 * Read coverage: how much of each document of a case the service actually read, in one line a
 * person can check before deciding ("scan.pdf: 3 pages, 3 by OCR"; "photo.heic: not read"). The
 * findings report and the embed frame list every document this way, so no case is approved on
 * documents the service never read without it being said.
 */
import type { Tx } from '../db/connect'
import type { DocumentRow } from './store'

/** One document's coverage: whether it was read in full, and the line that says how much. */
export interface Coverage { filename: string; complete: boolean; line: string }

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`

/** The coverage of one document from its status and page counts. */
export function coverageOf(doc: Pick<DocumentRow, 'filename' | 'status' | 'page_summary' | 'page_count' | 'error_detail'>): Coverage {
  const { filename, status, page_summary: p } = doc
  if (status === 'awaiting_upload' || status === 'processing') return { filename, complete: false, line: `${filename}: not read yet (${status})` }
  if (status === 'unsupported_pending') return { filename, complete: false, line: `${filename}: not read (format not supported${doc.error_detail ? `: ${doc.error_detail}` : ''})` }
  if (status === 'failed') return { filename, complete: false, line: `${filename}: not read (failed${doc.error_detail ? `: ${doc.error_detail}` : ''})` }
  if (!p) return { filename, complete: status === 'ready', line: `${filename}: ${plural(doc.page_count ?? 0, 'page')}, ${status === 'ready' ? 'read' : 'partly read'}` }
  const parts: string[] = []
  if (p.text_layer > 0) parts.push(`${p.text_layer} from text`)
  if (p.ocr > 0) parts.push(`${p.ocr} by OCR${p.low_confidence_blocks > 0 ? ` (${plural(p.low_confidence_blocks, 'low-confidence block')})` : ''}`)
  if (p.blank > 0) parts.push(`${p.blank} blank`)
  const images = p.image_no_text ?? 0
  if (images > 0) parts.push(images === p.total ? 'image, no text' : `${plural(images, 'image')}, no text`)
  if (p.unreadable > 0) parts.push(`${p.unreadable} NOT READ`)
  return { filename, complete: status === 'ready' && p.unreadable === 0, line: `${filename}: ${plural(p.total, 'page')}, ${parts.join(', ')}` }
}

/** The coverage of every document of a case, oldest first. */
export async function caseCoverage(sql: Tx, tenantId: string, scenarioId: string): Promise<Coverage[]> {
  const rows = await sql<DocumentRow[]>`
    select filename, status, page_summary, page_count, error_detail from documents
    where tenant_id = ${tenantId} and scenario_id = ${scenarioId}
    order by id`
  return rows.map(coverageOf)
}
