/**
 * The field separator of a delimited text file. A `.csv` is not always comma-separated: spreadsheet
 * programs in locales whose decimal mark is a comma (most of Europe) write `;` between fields and
 * `1.234,50` inside them, and exports from other tools use tabs or `|`. Read with the wrong
 * separator, `1.234,50` becomes two cells, `1.234` and `50`: a figure silently wrong. So the
 * separator is chosen from the file: the one Excel's `sep=` first line declares, else the candidate
 * that splits the first records most consistently (each candidate read by csv-parse, quotes
 * respected). Where two candidates read them equally well the file is ambiguous: it is read with
 * the more usual one and the choice is reported, so the document is marked degraded.
 */
import { parse } from 'csv-parse/sync'

/** Candidate separators, in order of preference when two read the sample equally well. */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const

/** Records read from the start of the file to judge each candidate, within its first SAMPLE_CHARS characters. */
const SAMPLE_RECORDS = 50
/** A file of one huge record is judged on this much of it, not read whole once a candidate. */
const SAMPLE_CHARS = 256 * 1024

/** Excel's separator line (`sep=;`), the first line of a file it writes for another locale. */
const DECLARED = /^\uFEFF?sep=([^\r\n])[ \t]*(\r\n|\n|\r|$)/i

/** The separator to read a file with; `text` is the file without its `sep=` line, if it had one. */
export interface DelimiterChoice {
  delimiter: string
  text: string
  /** How the separator was found. */
  by: 'declared' | 'consistency' | 'default'
  /** Another candidate that read the sample exactly as consistently, with as many fields. */
  ambiguousWith?: string
}

/** How one candidate splits the sample: its most frequent field count, and the share of records with it. */
function splitOf(text: string, delimiter: string): { fields: number; share: number } {
  let records: string[][]
  try {
    records = parse(text, {
      delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true,
      skip_records_with_error: true, to: SAMPLE_RECORDS,
    }) as string[][]
  } catch {
    return { fields: 0, share: 0 }
  }
  const counts = new Map<number, number>()
  let total = 0
  for (const record of records) {
    if (!record.some((cell) => cell.trim() !== '')) continue
    counts.set(record.length, (counts.get(record.length) ?? 0) + 1)
    total++
  }
  let fields = 0
  let most = 0
  for (const [n, times] of counts) if (times > most || (times === most && n > fields)) [fields, most] = [n, times]
  return { fields, share: total === 0 ? 0 : most / total }
}

/**
 * Chooses the separator of a delimited text file (see the file's comment). A file whose records
 * have one field whatever the candidate (a single column) is read with a comma.
 */
export function chooseDelimiter(text: string): DelimiterChoice {
  const declared = DECLARED.exec(text)
  if (declared) return { delimiter: declared[1]!, text: text.slice(declared[0].length), by: 'declared' }
  const sample = text.length > SAMPLE_CHARS ? text.slice(0, SAMPLE_CHARS) : text
  const ranked = CSV_DELIMITERS
    .map((delimiter, preference) => ({ delimiter, preference, ...splitOf(sample, delimiter) }))
    .filter((c) => c.fields >= 2)
    .sort((a, b) => b.share - a.share || b.fields - a.fields || a.preference - b.preference)
  const [best, next] = ranked
  if (!best) return { delimiter: ',', text, by: 'default' }
  const tie = next && next.share === best.share && next.fields === best.fields
  return { delimiter: best.delimiter, text, by: 'consistency', ...(tie ? { ambiguousWith: next.delimiter } : {}) }
}

/** How a separator is named in a note: a visible character, or the tab's name. */
export const delimiterName = (delimiter: string) => (delimiter === '\t' ? 'tab' : `'${delimiter}'`)
