/**
 * Bounds on the worksheets of an XLSX/XLSM package before SheetJS parses it: SheetJS holds a
 * sheet's whole XML as a string and splits it into rows before it skips those past the rows it
 * was asked for, so a sheet of a million rows (~50 MB of XML) took it past a gigabyte. Here each
 * large worksheet part is cut after the row that reaches the row limit or the sheet's cell bound,
 * and the sheet's XML closed there; the package is zipped again (stored) for SheetJS. Parts that
 * are small are left as they are and nothing else of the package changes.
 */
import { inflateRawSync } from 'node:zlib'
import { strToU8, Unzip, UnzipPassThrough, zipSync } from 'fflate'
import { mib, UnreadableDocument } from './types'

/** Worksheet parts that inflate (as their headers declare) to less than this are not cut. */
const LARGE_PART_BYTES = 2 * 1_048_576

/** A row's closing tag or a cell's opening tag, namespace prefix allowed (`</row>`, `<s:c r=`). */
const ROW_OR_CELL = /<\/(?:[\w.-]+:)?row\s*>|<(?:[\w.-]+:)?c[\s/>]/g
const CELL = /<(?:[\w.-]+:)?c[\s/>]/

/** The bounded package, whether a sheet was cut (by the cell bound, not the row limit), and the inflated parts SheetJS reads. */
export interface BoundedPackage { bytes: Uint8Array; cut: boolean; cellBound: boolean; parts?: Record<string, Uint8Array> }

/** Cuts one worksheet's XML after `maxRows` rows, or after the row in which it passes `maxCells` cells. */
export function cutSheetXml(xml: string, maxRows: number, maxCells: number): { xml: string; cut: boolean; cellBound: boolean } {
  let rows = 0
  let cells = 0
  ROW_OR_CELL.lastIndex = 0
  for (let m; (m = ROW_OR_CELL.exec(xml)); ) {
    if (m[0][1] !== '/') { cells++; continue }
    rows++
    if (rows < maxRows && cells < maxCells) continue
    const end = m.index + m[0].length
    const rest = xml.slice(end)
    // Nothing after it but the closing tags and parts that do not hold cells: keep as it is.
    if (!CELL.test(rest)) return { xml, cut: false, cellBound: false }
    const prefix = /<([\w.-]+:)?sheetData[\s>]/.exec(xml)?.[1] ?? ''
    return { xml: `${xml.slice(0, end)}</${prefix}sheetData></${prefix}worksheet>`, cut: true, cellBound: rows < maxRows }
  }
  return { xml, cut: false, cellBound: false }
}

/**
 * Inflates the parts of a package that `include` picks, with the native zlib (fflate finds the
 * parts; its JavaScript inflate is ten times slower here), refusing (UnreadableDocument, naming
 * the limit) once they pass `maxInflatedBytes`, one part or all together. Other parts are kept
 * as stored bytes are not needed: the caller re-zips only the parts it returns.
 */
export function inflatePackage(bytes: Uint8Array, maxInflatedBytes: number, include: (name: string) => boolean): Record<string, Uint8Array> {
  const parts: Record<string, Uint8Array> = {}
  let total = 0
  const breach = () => new UnreadableDocument(`the package inflates past the ${mib(maxInflatedBytes)} limit (SVC_PARSE_MAX_INFLATED_MB)`)
  /** fflate's decoder slot for deflated parts: collects the compressed bytes, inflates them natively at the end. */
  class NativeInflate {
    static compression = 8
    ondata: (err: Error | null, data: Uint8Array, final: boolean) => void = () => {}
    private chunks: Uint8Array[] = []
    push(chunk: Uint8Array, final: boolean) {
      this.chunks.push(chunk)
      if (!final) return
      let out: Uint8Array
      try {
        out = inflateRawSync(Buffer.concat(this.chunks), { maxOutputLength: Math.max(1, maxInflatedBytes - total + 1) })
      } catch (e) {
        if (e instanceof RangeError || (e as { code?: string })?.code === 'ERR_BUFFER_TOO_LARGE') throw breach()
        throw e
      }
      this.chunks = []
      this.ondata(null, out, true)
    }
  }
  const unzip = new Unzip()
  unzip.register(UnzipPassThrough)
  unzip.register(NativeInflate as unknown as Parameters<Unzip['register']>[0])
  unzip.onfile = (file) => {
    if (!include(file.name)) return
    const chunks: Uint8Array[] = []
    file.ondata = (err, chunk, final) => {
      if (err) throw err
      total += chunk.length
      if (total > maxInflatedBytes) throw breach()
      chunks.push(chunk)
      if (final) parts[file.name] = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
    }
    file.start()
  }
  try {
    unzip.push(bytes, true)
  } catch (e) {
    if (e instanceof UnreadableDocument) throw e
    throw new UnreadableDocument('the package could not be read')
  }
  return parts
}

/** The parts of a workbook package SheetJS reads (XML and binary records), never the media nor the VBA project. */
export const parsedPart = (name: string) => /\.(xml|rels|bin)$/i.test(name) && !/vbaProject\.bin$/i.test(name)

/**
 * Bounds an XLSX/XLSM/ODS package before SheetJS reads it: its parts inflate within
 * `maxInflatedBytes` (or UnreadableDocument), and each large worksheet is cut at `maxRows` rows or
 * `maxCells` cells, the package then zipped again (stored) from the parts SheetJS reads.
 */
export function boundXlsxSheets(bytes: Uint8Array, maxInflatedBytes: number, maxRows: number, maxCells: number): BoundedPackage {
  const parts = inflatePackage(bytes, maxInflatedBytes, parsedPart)
  let cut = false
  let cellBound = false
  for (const [name, data] of Object.entries(parts)) {
    if (!/^xl\/worksheets\/[^/]+\.xml$/i.test(name) || data.length <= LARGE_PART_BYTES) continue
    const bounded = cutSheetXml(new TextDecoder().decode(data), maxRows, maxCells)
    if (!bounded.cut) continue
    parts[name] = strToU8(bounded.xml)
    cut = true
    cellBound ||= bounded.cellBound
  }
  return cut ? { bytes: zipSync(parts, { level: 0 }), cut, cellBound, parts } : { bytes, cut, cellBound, parts }
}

/**
 * The names of an ODS's hidden sheets (SheetJS does not report them): tables whose automatic
 * style has `table:display="false"`. Read from the start tags of content.xml alone.
 */
export function odsHiddenSheets(contentXml: string): Set<string> {
  const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1]
  const hiddenStyles = new Set<string>()
  for (const m of contentXml.matchAll(/<style:style\s[^>]*>[\s\S]*?<\/style:style>/g)) {
    if (attr(m[0], 'style:family') === 'table' && /<style:table-properties\s[^>]*table:display="false"/.test(m[0])) {
      const name = attr(m[0], 'style:name')
      if (name) hiddenStyles.add(name)
    }
    if (m.index > 0 && contentXml.lastIndexOf('<office:body', m.index) !== -1) break // styles precede the body
  }
  const hidden = new Set<string>()
  if (hiddenStyles.size === 0) return hidden
  for (const m of contentXml.matchAll(/<table:table\s[^>]*>/g)) {
    const style = attr(m[0], 'table:style-name')
    const name = attr(m[0], 'table:name')
    if (style && name !== undefined && hiddenStyles.has(style)) hidden.add(name)
  }
  return hidden
}
