/**
 * RTF, tokenised by `rtf-stream-parser` (a streaming tokenizer: groups, control words, text; no
 * recursion, so a file nested 100,000 groups deep costs a stack entry a group, never a call
 * frame) and read here into paragraphs and table rows in reading order. Destinations that hold no
 * body text (font and colour tables, styles, document info, pictures, objects, field
 * instructions, every `\*` destination) are skipped, and so is text of a tracked deletion
 * (`\deleted`): read, a deleted 1000000 before an inserted 1800000 made 10000001800000. A check box
 * form field (`FORMCHECKBOX`, its state in the instruction's `\*\formfield`) reads as its state,
 * ☒ or ☐; one whose file does not hold its state (LibreOffice writes none) adds nothing and
 * degrades the parse, saying so. Headers and footers are read after the body (Word writes them
 * before it), each text once. Characters: `\uN` with
 * its `\ucN` fallback skipped, `\'hh` and 8-bit text in the document's code page (`\ansicpg`,
 * through iconv-lite; double-byte pages such as 932 included). `\bin` data is skipped, and a
 * length past the end of the file is refused before tokenising.
 */
import { Tokenize, type Token } from 'rtf-stream-parser/dist/src/tokenize'
import iconv from 'iconv-lite'
import { TableRows } from './table-rows'
import { CHECK_GLYPHS, eachTextOnce, UnreadableDocument, type Adapter, type Segment } from './types'

/** Destinations whose text is not the document's body. */
const SKIPPED = new Set([
  'fonttbl', 'colortbl', 'stylesheet', 'info', 'pict', 'object', 'objdata', 'fldinst', 'themedata', 'colorschememapping', 'datastore', 'latentstyles', 'listtable',
  'listoverridetable', 'rsidtbl', 'generator', 'xmlnstbl', 'filetbl', 'revtbl', 'pgdsctbl', 'nonshppict', 'bkmkstart', 'bkmkend',
  'footnote', 'annotation', 'atnid', 'atnauthor', 'template', 'userprops', 'docvar', 'mmathPr', 'sp', 'shpinst',
])

/** Control words that stand for a character. */
const CHARACTERS: Record<string, string> = {
  tab: '\t', line: '\n', lquote: '\u2018', rquote: '\u2019', ldblquote: '\u201c', rdblquote: '\u201d', bullet: '\u2022',
  endash: '\u2013', emdash: '\u2014', enspace: ' ', emspace: ' ', qmspace: ' ', '~': '\u00a0', _: '-', '{': '{', '}': '}', '\\': '\\',
}

/** Destinations of page headers and footers: read, but after the body. */
const MARGINS = new Set(['header', 'headerl', 'headerr', 'headerf', 'footer', 'footerl', 'footerr', 'footerf'])

/**
 * A group's state: skipped (a destination without body text), its Unicode fallback length,
 * whether it is a field (`\field`: a check box it holds is written when it closes) and whether it
 * is a page header or footer.
 */
interface Group { skip: boolean; uc: number; field?: boolean; margin?: boolean; instruction?: boolean; deleted?: boolean }

/** A field being read: whether its instruction names a check box, and its form field's properties (`\fftype1` a check box). */
interface Field { checkbox: boolean; type?: number; result?: number; default?: number }

/** Refuses a file whose `\binN` declares more bytes than the file holds (the tokenizer would allocate them). */
function assertBinaryWithin(bytes: Uint8Array): void {
  // A byte search for each `\bin`, its digits read in place (no string of the whole file).
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = buffer.indexOf('\\bin'); at >= 0; at = buffer.indexOf('\\bin', at + 4)) {
    let n = 0
    let digits = 0
    for (let i = at + 4; i < buffer.length && digits < 12 && buffer[i]! >= 0x30 && buffer[i]! <= 0x39; i++, digits++) n = n * 10 + buffer[i]! - 0x30
    if (digits > 0 && n > bytes.length) throw new UnreadableDocument('the RTF declares binary data longer than the file')
  }
}

/** The RTF adapter. */
export const readRtf: Adapter = async (bytes) => {
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(5, bytes.byteLength)).toString('latin1').startsWith('{\\rtf')) {
    throw new UnreadableDocument('the file does not start as RTF does ({\\rtf)')
  }
  assertBinaryWithin(bytes)
  let segments: Segment[] = []
  let table = new TableRows()
  // Headers and footers: their paragraphs are kept apart (Word writes them before the body) and read after it.
  const body = { segments, table }
  const margins = { segments: [] as Segment[], table: new TableRows() }
  let field: Field | undefined
  let stateless = 0 // check boxes whose file holds no state
  const stack: Group[] = [{ skip: false, uc: 1 }]
  let codepage = 'windows-1252'
  // 8-bit text waiting for its code page: runs of the file's bytes (never copied byte by byte) and `\'hh` bytes.
  let pending: Uint8Array[] = []
  let pendingHigh = false
  let text = '' // the paragraph or cell being read
  let cells: string[] = []
  let inTable = false
  let skipFallback = 0
  let groupStart = false // the last token opened a group (a destination's first control word follows)
  let unbalanced = false

  const flushBytes = () => {
    if (pending.length === 0) return
    // ASCII reads the same in every code page: only 8-bit runs go through iconv-lite.
    const first = pending[0]!
    const run = pending.length === 1 ? Buffer.from(first.buffer, first.byteOffset, first.byteLength) : Buffer.concat(pending)
    text += pendingHigh ? iconv.decode(run, codepage) : run.toString('latin1')
    pending = []
    pendingHigh = false
  }
  const pushBytes = (data: Uint8Array) => {
    if (data.length === 0) return
    if (data.includes(0x0a) || data.includes(0x0d)) data = data.filter((b) => b !== 0x0a && b !== 0x0d)
    if (!pendingHigh) for (let i = 0; i < data.length; i++) if (data[i]! >= 0x80) { pendingHigh = true; break }
    pending.push(data)
  }
  const endParagraph = () => {
    flushBytes()
    if (inTable) { text += '\n'; return } // a paragraph inside a cell: the cell goes on
    const t = text.replace(/[ \t\u00a0]+/g, ' ').replace(/ ?\n ?/g, '\n').trim()
    text = ''
    if (t === '') return
    table.end()
    segments.push({ kind: 'paragraph', text: t })
  }
  const endCell = () => {
    flushBytes()
    cells.push(text)
    text = ''
  }
  const endRow = () => {
    flushBytes()
    if (text.trim() !== '') cells.push(text)
    text = ''
    const row = table.row(cells)
    if (row) segments.push(row)
    cells = []
  }

  const onToken = (token: Token) => {
    const group = stack[stack.length - 1]!
    const opened = groupStart
    groupStart = false
    switch (token.type) {
      case 0: // group start
        flushBytes()
        stack.push({ skip: group.skip, uc: group.uc, margin: group.margin, instruction: group.instruction, deleted: group.deleted })
        groupStart = true
        return
      case 1: { // group end
        flushBytes()
        if (stack.length <= 1) { unbalanced = true; return }
        const closed = stack.pop()!
        if (closed.field && field && (field.checkbox || field.type === 1) && !stack[stack.length - 1]!.skip) {
          if (field.type === 1) {
            // A check box: its result, or its default when the result says so (25) or is missing.
            const ticked = field.result === 1 || ((field.result === undefined || field.result === 25) && field.default === 1)
            text += ticked ? CHECK_GLYPHS.checked : CHECK_GLYPHS.unchecked
          } else stateless++
        }
        if (closed.field) field = undefined
        if (closed.margin && !stack[stack.length - 1]!.margin) {
          // The header or footer ends: its last paragraph, then back to the body.
          endParagraph()
          segments = body.segments
          table = body.table
        }
        return
      }
      case 3: { // text
        if (group.instruction && field && !field.checkbox && /FORMCHECKBOX/.test(Buffer.from(token.data).toString('latin1'))) field.checkbox = true
        if (group.skip || group.deleted) return
        let data = token.data.subarray(0, token.length ?? token.data.length)
        if (skipFallback > 0) { const n = Math.min(skipFallback, data.length); data = data.subarray(n); skipFallback -= n }
        pushBytes(data)
        return
      }
      case 2: { // control
        const word = token.word
        // A form field's properties are read inside its (skipped) instruction.
        if (word === 'fftype' || word === 'ffres' || word === 'ffdefres') {
          if (field) field[word === 'fftype' ? 'type' : word === 'ffres' ? 'result' : 'default'] = token.param ?? 0
          return
        }
        if (opened && word === 'field' && !group.skip) { group.field = true; field = { checkbox: false }; return }
        if (word === 'fldinst') group.instruction = true
        if (word === 'deleted') { group.deleted = token.param !== 0; return }
        if (word === 'plain') group.deleted = false
        if (opened && MARGINS.has(word) && !group.skip) {
          endParagraph()
          group.margin = true
          segments = margins.segments
          table = margins.table
          return
        }
        if (opened && (word === '*' || SKIPPED.has(word))) { group.skip = true; return }
        if (word === 'ansicpg' && token.param !== undefined && iconv.encodingExists(`cp${token.param}`)) { codepage = `cp${token.param}`; return }
        if (word === 'uc') { group.uc = token.param ?? 1; return }
        if (group.skip) return
        if (group.deleted && (word === "'" || word === 'u' || word in CHARACTERS)) return
        if (word === "'") {
          if (skipFallback > 0) { skipFallback--; return }
          pushBytes(Uint8Array.of(token.data?.[0] ?? 0x3f))
          return
        }
        if (word === 'bin') return // binary data, never text
        flushBytes()
        skipFallback = 0
        if (word === 'u' && token.param !== undefined) {
          text += String.fromCharCode(token.param < 0 ? token.param + 65536 : token.param)
          skipFallback = group.uc
          return
        }
        if (word in CHARACTERS) { text += CHARACTERS[word]; return }
        switch (word) {
          case 'par': case 'sect': case 'page': endParagraph(); return
          case 'intbl': inTable = true; return
          case 'pard': inTable = false; return
          case 'cell': case 'nestcell': endCell(); return
          case 'row': case 'nestrow': endRow(); inTable = false; return
        }
      }
    }
  }

  const tokenizer = new Tokenize()
  tokenizer.push = (token: unknown) => { if (token !== null) onToken(token as Token); return true }
  const fail = (e: unknown) => { if (e) throw e }
  try {
    tokenizer._transform(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), undefined, fail)
    tokenizer._flush(() => {})
  } catch (e) {
    if (e instanceof UnreadableDocument) throw e
    if (segments.length === 0 && text.trim() === '') throw new UnreadableDocument('the RTF could not be read')
    unbalanced = true
  }
  if (cells.length > 0) endRow()
  inTable = false
  endParagraph()
  // The headers and footers after the body, each text once (every section repeats its own).
  const all = [...body.segments, ...eachTextOnce(margins.segments)]
  const truncated = unbalanced || stack.length > 1
  if (all.length === 0 && truncated) throw new UnreadableDocument('the RTF could not be read')
  const notes: string[] = []
  if (truncated) notes.push('the RTF ends inside an open group (cut short?); the text before it is kept')
  if (stateless > 0) notes.push(`${stateless} check box form field${stateless === 1 ? ' has' : 's have'} no state in the file: whether ${stateless === 1 ? 'it is' : 'they are'} ticked cannot be read`)
  return { pages: [{ page: 1, segments: all }], degraded: notes.length > 0, notes }
}
