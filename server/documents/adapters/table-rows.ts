/**
 * Tables of word-processing formats (RTF, Word 97-2003) as blocks: each row a `table_row`
 * segment whose text is its cells joined by " | " and whose `cells` are named by the table's
 * first row, as HTML and DOCX tables are.
 */
import { columnNames } from './columns'
import type { Segment } from './types'

/** Collects the rows of consecutive tables and hands each finished table's rows out as segments. */
export class TableRows {
  private columns: string[] | undefined

  /** One row of the current table (its cells' text, tidied); an all-blank row gives nothing. */
  row(cells: string[]): Segment | undefined {
    const values = cells.map((c) => c.replace(/\s+/g, ' ').trim())
    while (values.length > 0 && values[values.length - 1] === '') values.pop()
    if (values.length === 0) return undefined
    if (!this.columns) this.columns = columnNames(values, values.length)
    else if (values.length > this.columns.length) this.columns = columnNames(this.columns, values.length)
    return {
      kind: 'table_row',
      text: values.map((v) => v.replaceAll('|', '/')).join(' | '),
      cells: values.map((value, i) => ({ column: this.columns![i]!, value })),
    }
  }

  /** The table ended (a paragraph outside it came): the next row starts a new table with its own header. */
  end(): void { this.columns = undefined }
}
