/**
 * CSV, read with `csv-parse`: every record (the header included) is one `table_row` block, its
 * cells joined by " | " and named by the header record's columns. Records that cannot be parsed are skipped and make the parse degraded.
 * The field separator is the file's own (a comma, or `;`, a tab or `|`: csv-delimiter.ts); a file
 * that two separators read equally well is read with the more usual one and marked degraded.
 */
import { parse } from 'csv-parse/sync'
import { decodeText, replacedNote } from './encoding'
import { chooseDelimiter, delimiterName } from './csv-delimiter'
import { requireReadable, UnreadableDocument, type Adapter, type Segment } from './types'
import { columnNames } from './columns'

/** The CSV adapter. */
export const readCsv: Adapter = async (bytes, options) => {
  const { text, lossy, encoding } = decodeText(bytes, options?.charset)
  requireReadable(text, 'CSV file')
  const separator = chooseDelimiter(text)
  let skipped = 0
  let records: string[][]
  try {
    records = parse(separator.text, {
      delimiter: separator.delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      on_skip: () => { skipped++ },
    }) as string[][]
  } catch {
    throw new UnreadableDocument('the CSV structure is invalid')
  }
  const segments: Segment[] = records
    .filter((cells) => cells.some((c) => c.trim() !== ''))
    .map((cells) => ({ kind: 'table_row' as const, text: cells.map((c) => c.trim()).join(' | '), values: cells.map((c) => c.trim()) }))
    .map(({ values, ...segment }, _, all) => {
      const columns = columnNames(all[0]!.values, Math.max(values.length, all[0]!.values.length))
      return { ...segment, cells: values.map((value, i) => ({ column: columns[i]!, value })) }
    })
  if (segments.length === 0 && skipped > 0) throw new UnreadableDocument('no CSV record could be read')
  const notes: string[] = []
  if (separator.ambiguousWith) {
    notes.push(`the field separator could be ${delimiterName(separator.delimiter)} or ${delimiterName(separator.ambiguousWith)}: read as ${delimiterName(separator.delimiter)}`)
  }
  if (skipped > 0) notes.push(`${skipped} malformed record${skipped === 1 ? ' was' : 's were'} skipped`)
  if (lossy) notes.push(replacedNote(encoding))
  return { pages: [{ page: 1, segments }], degraded: notes.length > 0, notes, encoding }
}
