/**
 * Bounds on an XLS (BIFF5/BIFF8) workbook before SheetJS parses it: SheetJS builds an object for
 * every cell record it meets, even those past the rows it was asked to keep, so a sheet of 65,536 x
 * 256 cells took it 25 s and a gigabyte. Here the workbook stream's records are walked once (their
 * headers, and the row of each cell record) and each sheet's cell records are cut at the row limit
 * or once the sheet holds `maxCells` cells; the sheets' offsets in the workbook globals are
 * rewritten to match. Nothing else of the stream changes.
 */

/** Cell records: each starts with its row (u16). BIFF5/8 and the BIFF3/4 forms SheetJS also reads. */
const CELL_RECORDS = new Set([
  0x0006, 0x0206, 0x0406, // FORMULA
  0x0201, 0x0203, 0x0204, 0x0205, 0x027e, 0x00fd, 0x00d6, // BLANK NUMBER LABEL BOOLERR RK LABELSST RSTRING
  0x00bd, 0x00be, // MULRK MULBLANK
  0x0208, // ROW
])
/** Records that belong to the record before them (a formula's string result, a continuation). */
const TRAILING = new Set([0x0207, 0x003c])
const BOF = 0x0809
const EOF = 0x000a
const BOUNDSHEET = 0x0085

/** How many cells a cell record holds. */
function cellsOf(type: number, length: number): number {
  if (type === 0x00bd) return Math.max(0, (length - 6) / 6) // MULRK: rw, colFirst, 6-byte RK records, colLast
  if (type === 0x00be) return Math.max(0, (length - 6) / 2) // MULBLANK: 2-byte XF indexes
  return type === 0x0208 ? 0 : 1
}

/** The bounded stream, and the row each cut sheet was cut at (by sheet position). */
export interface BoundedWorkbook { stream: Uint8Array; cut: Map<number, number> }

/**
 * Cuts each sheet's cell records at row `maxRows` (0-based rows >= maxRows go) or, once the sheet
 * holds `maxCells` cells, at the next row. A stream it cannot walk is returned as it is (SheetJS
 * then says what it can of it).
 */
export function boundXlsStream(stream: Uint8Array, maxRows: number, maxCells: number): BoundedWorkbook {
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength)
  const keep: [number, number][] = [] // [start, end) byte ranges kept
  const movedBof = new Map<number, number>() // old BOF offset -> new
  const boundsheets: number[] = [] // new offsets of BoundSheet8 records
  const cut = new Map<number, number>()
  let written = 0
  let depth = 0
  let sheet = -1 // the sheet substream being walked (-1: the globals)
  let cells = 0
  let cutRow = Number.POSITIVE_INFINITY
  let lastRow = -1
  let dropping = false
  let at = 0
  const take = (start: number, end: number) => {
    const last = keep[keep.length - 1]
    if (last && last[1] === start) last[1] = end
    else keep.push([start, end])
    written += end - start
  }
  while (at + 4 <= stream.length) {
    const type = view.getUint16(at, true)
    const length = view.getUint16(at + 2, true)
    const end = at + 4 + length
    if (end > stream.length) return { stream, cut: new Map() }
    let drop = false
    if (type === BOF) {
      depth++
      if (depth === 1 && written > 0) { sheet++; cells = 0; cutRow = Number.POSITIVE_INFINITY; lastRow = -1 }
      if (depth === 1) movedBof.set(at, written)
    } else if (type === EOF) {
      depth = Math.max(0, depth - 1)
    } else if (TRAILING.has(type)) {
      drop = dropping
    } else if (sheet >= 0 && depth === 1 && CELL_RECORDS.has(type) && length >= 2) {
      const row = view.getUint16(at + 4, true)
      if (row !== lastRow && row > lastRow && cells >= maxCells) cutRow = Math.min(cutRow, row)
      if (row > lastRow) lastRow = row
      if (row >= maxRows || row >= cutRow) {
        drop = true
        if (!cut.has(sheet)) cut.set(sheet, Math.min(row, maxRows))
      } else cells += cellsOf(type, length)
    }
    if (type === BOUNDSHEET && sheet < 0 && length >= 4) boundsheets.push(written)
    dropping = drop
    if (!drop) take(at, end)
    at = end
  }
  if (cut.size === 0) return { stream, cut }
  const out = new Uint8Array(written)
  let to = 0
  for (const [start, end] of keep) { out.set(stream.subarray(start, end), to); to += end - start }
  // The globals name each sheet's BOF by its offset in the stream: point them at the moved ones.
  const outView = new DataView(out.buffer)
  for (const record of boundsheets) {
    const old = outView.getUint32(record + 4, true)
    const moved = movedBof.get(old)
    if (moved !== undefined) outView.setUint32(record + 4, moved, true)
  }
  return { stream: out, cut }
}
