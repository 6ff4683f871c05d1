/**
 * Naming the columns of a table (a spreadsheet sheet, a CSV, an HTML/DOCX table, a table
 * recovered from a PDF) from its header row: the names its rows' `cells` carry.
 */

/**
 * Column names from a header row: blank cells of a merged or missing header take the name to
 * their left with a number ("Amount", "Amount 2"); a repeated name is numbered too.
 */
export function columnNames(header: string[], width: number): string[] {
  const names: string[] = []
  const seen = new Map<string, number>()
  let left = ''
  for (let i = 0; i < width; i++) {
    const base = header[i] || left || `Column ${i + 1}`
    if (header[i]) left = header[i]!
    const n = (seen.get(base) ?? 0) + 1
    seen.set(base, n)
    names.push(n === 1 ? base : `${base} ${n}`)
  }
  return names
}
